/// Where the loop and its coordinators report what happened to the worker: each report is a transition of
/// the pure ``WorkerLifecycle``, whose action comes back, and the phase it leaves is published to the health
/// probes (``WorkerHealth``) at once, so that `/ready` says "restoring" while an assignment restores inside a
/// poll.
///
/// Owned by the loop's thread (the rebalance hooks run inside its poll); the probes read ``health``, which is
/// atomic.
final class PublishedLifecycle {
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

    /// Waits out the back-off `action` names (``WorkerLifecycle/Action/backOff(until:)``), reporting
    /// ``WorkerLifecycle/backoffElapsed(now:)`` on `clock` until it answers otherwise; a stop asked for ends the
    /// wait at once.
    ///
    /// - Returns: the lifecycle's answer: consume or connect again, or what a stop asks for.
    func waitOutBackoff(
        _ action: WorkerLifecycle.Action,
        clock: any WorkerClock,
        stop: StopRequest
    ) -> WorkerLifecycle.Action {
        var next = action
        while case .backOff(let until) = next {
            if stop.isAsked { return report { $0.stopRequested() } }
            clock.sleep(until: until, unless: stop)
            next = report { $0.backoffElapsed(now: clock.now) }
        }
        return next
    }

    /// The error the worker failed with, if it did.
    var failure: WorkerError? { lifecycle.failure }
}
