/// Speeding: `speed.exceeded` once a device's speed has stayed above its limit for the minimum duration (once per
/// episode), and `speed.normal` at its first fix at or under the limit after that (``SpeedRules``).
///
/// The speed of a fix is the one it reports, else the one derived from the fix before (``FixMotion``: only over a
/// movement beyond both fixes' accuracies, so a device standing still has none). A derived speed is filtered for the
/// GPS's jumps: one above the plausible maximum decides nothing, and a derived heading that turns back (more than 90
/// degrees from the episode's last) is the return from a jump, which drops an episode not yet announced. A fix within
/// both accuracies of the one before stands: under any limit. A fix with no speed otherwise decides nothing.
///
/// Pure: the time is the fixes' own.
struct SpeedWatch {
    let rules: SpeedRules

    /// The limit that applies to a device: its own, else the default; nil: it is not watched.
    func limit(of activity: DeviceActivity) -> Double? {
        activity.speedLimit ?? rules.limitMetersPerSecond
    }

    /// Applies one usable fix with its motion.
    func apply(
        _ fix: Fix,
        motion: FixMotion,
        to activity: inout DeviceActivity,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        guard let limit = limit(of: activity) else {
            activity.speeding = nil
            return
        }
        guard let speed = motion.speed ?? (motion.isStanding ? 0 : nil) else { return }
        let derived = motion.speedBasis == .derivedSpeed
        if derived && speed > rules.maximumPlausibleMetersPerSecond { return }
        guard speed > limit else {
            if let episode = activity.speeding {
                if episode.announced {
                    events.append(numbering.next(.speedNormal(report(episode, limit, speed, motion, fix))))
                }
                activity.speeding = nil
            }
            return
        }
        if derived, let episode = activity.speeding, !episode.announced, let before = episode.heading,
            let heading = motion.heading, FixMotion.angle(between: before, and: heading) > 90
        {
            // There and straight back: a jump of the GPS, not a drive.
            activity.speeding = nil
            return
        }
        var episode = activity.speeding ?? SpeedEpisode(since: fix.timestamp, topSpeed: speed, announced: false)
        episode.topSpeed = max(episode.topSpeed, speed)
        episode.heading = derived ? motion.heading : nil
        if !episode.announced && fix.timestamp - episode.since >= Int64(rules.minimumDurationSeconds) * 1000 {
            episode.announced = true
            events.append(numbering.next(.speedExceeded(report(episode, limit, speed, motion, fix))))
        }
        activity.speeding = episode
    }

    private func report(
        _ episode: SpeedEpisode,
        _ limit: Double,
        _ speed: Double,
        _ motion: FixMotion,
        _ fix: Fix
    ) -> SpeedReport {
        SpeedReport(
            limitMetersPerSecond: limit,
            speedMetersPerSecond: speed,
            basis: motion.speedBasis,
            topSpeedMetersPerSecond: max(episode.topSpeed, speed),
            since: episode.since,
            position: fix
        )
    }
}
