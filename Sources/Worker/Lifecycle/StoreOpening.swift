import Foundation
import Kafka
import Logging
import StateStore

/// Opens the worker's state store once its directory is locked, after checking it
/// (``StateStore/check(directory:decodingDevices:)``): what a damaged store, or an operator's `--reset-state`, becomes.
///
/// A store SQLite cannot open, whose check fails, whose log was lost, or marked damaged when a device did not decode
/// as it was loaded (the worker then stopped; decoding every device at each start would double a start's loading)
/// is moved aside (kept, named with the time) and logged as an error. With the changelog on, a new store starts empty and the assignments restore
/// every device from the changelog before any input is read (the changelog holds every state the store held: the
/// store is written only after them), so nothing is lost and the devices' applied offsets keep anything from being
/// announced twice. Without a changelog there is nothing to rebuild from: the start fails, naming the file and the
/// choice.
enum StoreOpening {
    /// Opens the store in the configuration's state directory.
    ///
    /// - Parameters:
    ///   - configuration: the state directory, whether the changelog is on, and whether to reset the state.
    ///   - logger: where a damaged store or a reset is reported.
    ///   - now: when, for the names of files moved aside.
    /// - Returns: the store, ready.
    /// - Throws: ``WorkerError`` `state` when the store is damaged and there is no changelog, or cannot be opened.
    static func open(
        _ configuration: WorkerConfiguration,
        logger: Logger,
        now: Date = Date()
    ) throws(WorkerError) -> StateStore {
        let directory = configuration.stateDir
        let file = directory + "/" + StateStore.fileName
        if configuration.resetState {
            let moved = try moveAside(directory, now: now)
            if !moved.isEmpty {
                logger.warning(
                    "state reset as asked (--reset-state): the store is kept aside and the worker starts with no devices",
                    metadata: [ServiceLogKey.movedTo: "\(moved)"]
                )
            }
        } else if case .damaged(let finding) = StateStore.check(directory: directory, decodingDevices: false) {
            guard configuration.changelogSettings.enabled else {
                throw WorkerError(
                    .state,
                    """
                    the state file \(file) is damaged (\(finding)), and without a changelog there is nothing to \
                    rebuild it from: put back a good copy, or start once with --reset-state to move it aside and \
                    begin with no devices (their geofence and country state is then forgotten)
                    """
                )
            }
            let moved = try moveAside(directory, now: now)
            logger.error(
                "the state file is damaged: moved aside; its devices are restored from the changelog before any input is read",
                metadata: [
                    ServiceLogKey.file: "\(file)", ServiceLogKey.error: "\(finding)", ServiceLogKey.movedTo: "\(moved)",
                ]
            )
        }
        do {
            return try StateStore(directory: directory)
        } catch {
            throw WorkerError(.state, "cannot open the state directory \(directory)", underlying: error)
        }
    }

    private static func moveAside(_ directory: String, now: Date) throws(WorkerError) -> [String] {
        do {
            return try StateStore.moveAside(directory: directory, at: now)
        } catch {
            throw WorkerError(.state, "cannot move the damaged state aside", underlying: error)
        }
    }
}
