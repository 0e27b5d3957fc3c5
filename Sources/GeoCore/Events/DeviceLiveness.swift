/// A device that sent no fix for its silence threshold (`device.silent`).
public struct DeviceSilence: Hashable, Sendable {
    /// Its last fix before the silence.
    public let lastFix: Fix
    /// The threshold, in seconds: the device is silent from `lastFix`'s time plus this.
    public let silentAfterSeconds: Int

    public init(lastFix: Fix, silentAfterSeconds: Int) {
        self.lastFix = lastFix
        self.silentAfterSeconds = silentAfterSeconds
    }

    /// When the device became silent: its last fix's time plus the threshold.
    public var time: Int64 { lastFix.timestamp + Int64(silentAfterSeconds) * 1000 }

    /// The event's id: the device and its last fix, whatever announces it (the fix after the silence, or the stream's
    /// time passing it), so that one silence is one id.
    func eventId(deviceId: String) -> String { "device.silent:\(deviceId):\(lastFix.timestamp)" }
}

/// A device's first fix after a silence (`device.resumed`).
public struct DeviceResumption: Hashable, Sendable {
    /// Its last fix before the silence.
    public let lastFix: Fix
    /// The fix that ended it.
    public let position: Fix

    public init(lastFix: Fix, position: Fix) {
        self.lastFix = lastFix
        self.position = position
    }

    /// How long it sent nothing, in seconds.
    public var quietSeconds: Double { Double(position.timestamp - lastFix.timestamp) / 1000 }
}
