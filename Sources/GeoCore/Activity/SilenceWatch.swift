/// Silence: `device.silent` once a device has sent no fix for its threshold (its own from `setLimits`, else
/// ``LivenessRules/silentAfterSeconds``), and `device.resumed` at its next fix.
///
/// Decided by message time, two ways that give the same event: the fix that ends a gap longer than the threshold
/// announces the silence (unless announced already) and the resumption, which makes the events a function of the
/// input; and the stream's time (the newest message time its partition has applied) passing a device's deadline
/// announces it earlier (``silence(of:at:)``, asked by the ``DeviceRegistry``'s sweep), for a device that never comes
/// back. A silence's id is the device's and its last fix's (``DeviceSilence/eventId(deviceId:)``) and its time the
/// deadline, so whichever announces it, at whatever moment, it is one event; the state marks it announced, so it is
/// announced once.
///
/// Pure: the time is the messages' own.
struct SilenceWatch {
    let rules: LivenessRules

    /// The threshold of a device, in seconds: its own, else the default; nil: it is not watched.
    func threshold(of state: DeviceState) -> Int? {
        state.readActivity(absent: nil) { $0.silentAfterSeconds } ?? rules.silentAfterSeconds
    }

    /// When the device is silent unless a fix comes first (milliseconds): the threshold after its last fix, or after
    /// it was heard if that was later (``DeviceState/lastHeard``); nil when not watched, without a fix, or announced
    /// already.
    func deadline(of state: DeviceState) -> Int64? {
        guard let threshold = threshold(of: state), let fix = state.lastFix,
            !state.readActivity(absent: false, { $0.silenceAnnounced })
        else { return nil }
        return max(fix.timestamp, state.lastHeard ?? fix.timestamp) + Int64(threshold) * 1000
    }

    /// At a fix applied after `previous` (the device's last fix before it): the silence it ends, if longer than the
    /// threshold (announced here unless it was), and the resumption; the resumption alone after a silence the stream's
    /// time announced, even when the fix is stamped before the deadline (it came late: the device is back all the same).
    ///
    /// `heardAt` is the stream's time when the fix came (its pair's, the message's own time included; nil without a
    /// stream), kept when later than the fix's own time.
    func applyFix(
        _ fix: Fix,
        previous: Fix?,
        heardAt: Int64?,
        to state: inout DeviceState,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        let threshold = threshold(of: state)
        // Kept only while the device is watched.
        let late = threshold == nil ? nil : heardAt.flatMap { $0 > fix.timestamp ? $0 : nil }
        if state.lastHeard != late { state.lastHeard = late }
        let announced = state.readActivity(absent: false) { $0.silenceAnnounced }
        guard let previous else { return }
        if announced {
            state.withActivity { $0.silenceAnnounced = false }
        } else {
            guard let threshold, fix.timestamp - previous.timestamp > Int64(threshold) * 1000 else { return }
            events.append(Self.event(DeviceSilence(lastFix: previous, silentAfterSeconds: threshold), state.deviceId))
        }
        events.append(numbering.next(.deviceResumed(DeviceResumption(lastFix: previous, position: fix))))
    }

    /// The stream's time at `streamTime`: the device's silence, if its deadline has passed and it is not announced
    /// (marked announced then).
    func silence(of state: inout DeviceState, at streamTime: Int64) -> DeviceEvent? {
        guard let deadline = deadline(of: state), deadline <= streamTime, let fix = state.lastFix,
            let threshold = threshold(of: state)
        else { return nil }
        state.withActivity { $0.silenceAnnounced = true }
        return Self.event(DeviceSilence(lastFix: fix, silentAfterSeconds: threshold), state.deviceId)
    }

    private static func event(_ silence: DeviceSilence, _ deviceId: String) -> DeviceEvent {
        DeviceEvent(
            id: silence.eventId(deviceId: deviceId),
            deviceId: deviceId,
            time: silence.time,
            payload: .deviceSilent(silence)
        )
    }
}
