import Foundation
import TestSupport
import Testing

/// The random choices of one multi-instance run (when to stop or kill a member, for how long), from a seed.
///
/// `make test` runs each multi-instance test with two seeds (``TrialSeed/pair(_:)``): its usual moments, and moments
/// drawn from a second seed; `tools/handover-trials.sh` runs them many times, each with a seed of its own
/// (`GEOWORKER_TRIAL_SEED`). Every run prints its seed and choices, so that a failing run can be repeated.
struct HandoverTrial {
    let seed: TrialSeed
    private var random: SplitMix64

    init(_ test: String, seed: TrialSeed) {
        self.seed = seed
        random = SplitMix64(seed: seed.value)
        print("trial \(test): seed \(seed.value)\(seed.drawsMoments ? "" : " (the usual moments)")")
    }

    /// A duration in `range`, printed with `what` it is for; `usual` instead when the seed keeps the usual moments
    /// and one is given (the moments `make test` has always used).
    mutating func duration(_ what: String, _ range: ClosedRange<Duration>, usual: Duration? = nil) -> Duration {
        let milliseconds = { (duration: Duration) in Int(duration / .milliseconds(1)) }
        let low = milliseconds(range.lowerBound)
        let random = Duration.milliseconds(low + random.next(below: milliseconds(range.upperBound) - low + 1))
        let chosen = seed.drawsMoments ? random : usual ?? random
        print("trial: \(what) \(chosen)")
        return chosen
    }
}

/// The seed of one run of a multi-instance test: a test's argument, so that each run is a test case of its own.
struct TrialSeed: Sendable, CustomTestStringConvertible {
    let value: UInt64
    /// Whether every choice comes from the seed; otherwise the test's usual moments where it has them.
    let drawsMoments: Bool

    var testDescription: String { drawsMoments ? "seed \(value)" : "seed \(value), the usual moments" }

    /// The runs of a test whose own number is `test`: the trials script's seed alone when it gives one (mixed with the
    /// number, so that the cases of a parameterized test differ), else the usual moments and one draw.
    static func pair(_ test: UInt64) -> [TrialSeed] {
        if let given = ProcessInfo.processInfo.environment["GEOWORKER_TRIAL_SEED"].flatMap({ UInt64($0) }) {
            return [TrialSeed(value: given &+ test, drawsMoments: true)]
        }
        return [TrialSeed(value: test, drawsMoments: false), TrialSeed(value: test &+ 1_000, drawsMoments: true)]
    }

    /// One run with the usual moments of `test` (the trials script's seed instead when it gives one): for a test whose
    /// cases already differ in their moments.
    static func one(_ test: UInt64) -> TrialSeed { pair(test)[0] }
}
