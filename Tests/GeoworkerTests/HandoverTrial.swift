import Foundation
import TestSupport

/// The random choices of one multi-instance run (when to stop or kill a member, for how long), from a seed.
///
/// `make test` runs each multi-instance test once with its fixed seed; `tools/handover-trials.sh` runs them many
/// times, each with a seed of its own (`GEOWORKER_TRIAL_SEED`). Every run prints its seed and choices, so that a
/// failing run can be repeated.
struct HandoverTrial {
    let seed: UInt64
    /// Whether the seed came from the environment: the choices are then all random.
    let isRandom: Bool
    private var random: SplitMix64

    /// The environment's seed if the trials script set one, else `fixed`.
    init(_ test: String, fixed: UInt64) {
        let given = ProcessInfo.processInfo.environment["GEOWORKER_TRIAL_SEED"].flatMap { UInt64($0) }
        // Mixed with the test's own number, so that one seed gives each case of a parameterized test its own choices.
        seed = given.map { $0 &+ fixed } ?? fixed
        isRandom = given != nil
        random = SplitMix64(seed: seed)
        print("trial \(test): seed \(seed)")
    }

    /// A duration in `range`, printed with `what` it is for; `usual` instead when the seed is not random and one
    /// is given (the moments `make test` has always used).
    mutating func duration(_ what: String, _ range: ClosedRange<Duration>, usual: Duration? = nil) -> Duration {
        let milliseconds = { (duration: Duration) in Int(duration / .milliseconds(1)) }
        let low = milliseconds(range.lowerBound)
        let random = Duration.milliseconds(low + random.next(below: milliseconds(range.upperBound) - low + 1))
        let chosen = isRandom ? random : usual ?? random
        print("trial: \(what) \(chosen)")
        return chosen
    }
}
