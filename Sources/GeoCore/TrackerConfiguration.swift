/// Rules of the ``DeviceTracker`` that an operator may tune.
public struct TrackerConfiguration: Hashable, Sendable {
    /// The most pins one device may track; a `track` beyond it is refused. Default: 100.
    public var maximumPinsPerDevice: Int
    /// Fixes reporting a worse accuracy (in metres) are not used for geofence decisions at all; they
    /// still count as the device's latest position and for its country. Default: 500 m.
    public var maximumAccuracy: Double
    /// The hysteresis margin, in metres, for fixes that report no accuracy. Default: 10 m.
    public var assumedAccuracy: Double
    /// How many consecutive fixes must place a device in another country before it is announced there,
    /// so that jitter along a border does not flap. The first country is announced at the first fix.
    /// Default: 2.
    public var countryConfirmations: Int

    public init(
        maximumPinsPerDevice: Int = 100,
        maximumAccuracy: Double = 500,
        assumedAccuracy: Double = 10,
        countryConfirmations: Int = 2
    ) {
        self.maximumPinsPerDevice = maximumPinsPerDevice
        self.maximumAccuracy = maximumAccuracy
        self.assumedAccuracy = assumedAccuracy
        self.countryConfirmations = countryConfirmations
    }
}
