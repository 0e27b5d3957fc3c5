/// Where the loop and its coordinators report what happened to the worker: each report is a transition of
/// the pure ``WorkerLifecycle``, whose action comes back, and the phase it leaves is published to the health
/// probes (``WorkerHealth``) at once, so that `/ready` says "restoring" while an assignment restores inside a
/// poll.
///
/// Owned by the loop's thread (the rebalance hooks run inside its poll); the probes read ``health``, which is
/// atomic.
final class LifecycleShell {
    private(set) var lifecycle: WorkerLifecycle
    let health: WorkerHealth

    init(backoff: WorkerLifecycle.Backoff, health: WorkerHealth) {
        lifecycle = WorkerLifecycle(backoff: backoff)
        self.health = health
    }

    /// Reports an event (`{ $0.assigned() }`) and returns the lifecycle's action.
    func report(_ event: (inout WorkerLifecycle) -> WorkerLifecycle.Action) -> WorkerLifecycle.Action {
        let action = event(&lifecycle)
        health.enter(lifecycle.phase, reason: lifecycle.reason)
        return action
    }

    /// The error the worker failed with, if it did.
    var failure: WorkerError? { lifecycle.failure }
}
