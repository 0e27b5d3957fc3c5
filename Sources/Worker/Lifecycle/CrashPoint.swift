import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The moments between a checkpoint's steps at which a test has the worker kill itself (SIGKILL), so that a crash
/// there is tried on purpose, every time, rather than by the luck of a kill's timing.
///
/// Armed by `GEOWORKER_CRASH_AT=<moment>:<n>` (the n-th time the moment comes, from 1), a test switch like
/// `GEOWORKER_TRIAL_SEED`, never a setting: a worker without it never crashes here, and each moment costs it a lock
/// taken once a checkpoint.
public enum CrashPoint: String, CaseIterable, Sendable {
    /// A checkpoint's events and changelog records are delivered; under exactly-once its transaction is still open,
    /// under at-least-once nothing of it is stored or committed.
    case changelogDelivered = "changelog-delivered"
    /// Under exactly-once, a checkpoint's transaction committed (its offsets with it); the store is not written.
    case transactionCommitted = "transaction-committed"
    /// A checkpoint is in the store; under at-least-once the group has not been sent its offsets.
    case checkpointStored = "checkpoint-stored"
    /// A restore wrote what it read of the changelog to the store; the assignment has not loaded the devices.
    case changelogRestored = "changelog-restored"

    private static let armed = Mutex<(point: CrashPoint, remaining: Int)?>(nil)

    /// Arms the moment `GEOWORKER_CRASH_AT` names, if it is set.
    ///
    /// - Throws: ``WorkerError`` `configuration` naming the moments, when it names none of them or no count from 1.
    public static func armFromEnvironment() throws(WorkerError) {
        guard let value = getenv("GEOWORKER_CRASH_AT") else { return }
        try arm(String(cString: value))
    }

    /// Arms the moment `specification` names (`<moment>:<n>`).
    ///
    /// - Throws: ``WorkerError`` `configuration` naming the moments, when it names none of them or no count from 1.
    static func arm(_ specification: String) throws(WorkerError) {
        let parts = specification.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let point = CrashPoint(rawValue: parts[0]), let count = Int(parts[1]), count > 0
        else {
            let moments = allCases.map(\.rawValue).joined(separator: ", ")
            throw WorkerError(
                .configuration,
                "GEOWORKER_CRASH_AT must be <moment>:<n> (n from 1), the moment one of \(moments); not '\(specification)'"
            )
        }
        armed.withLock { $0 = (point, count) }
    }

    /// The worker came to `point`: if it is the armed moment's n-th time, the process ends here, as a kill ends it.
    static func reached(_ point: CrashPoint) {
        let crash = armed.withLock { armed -> Bool in
            guard armed?.point == point else { return false }
            armed!.remaining -= 1
            return armed!.remaining == 0
        }
        guard crash else { return }
        kill(getpid(), SIGKILL)
    }
}
