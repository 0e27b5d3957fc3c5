/// Rules of the ``DeviceTracker`` that an operator may tune.
public struct TrackerConfiguration: Hashable, Sendable {
    /// The most pins one device may track; a `track` beyond it is refused. Default: 100.
    public var maximumPinsPerDevice: Int
    /// Fixes reporting a worse accuracy (in metres) are not used for geofence decisions at all; they
    /// still count as the device's latest position and for its country. Default: 500 m.
    public var maximumAccuracy: Double
    /// The hysteresis margin, in metres, for fixes that report no accuracy. Default: 10 m.
    public var assumedAccuracy: Double
    /// How many deciding fixes in a row (each with its whole accuracy disc in the other country) must place a
    /// device in another country before it is announced there. The accuracy rule alone keeps a device along
    /// a border from flapping, so one is enough; more delay every crossing. The first country is announced at
    /// the first fix. Default: 1.
    public var countryConfirmations: Int

    public init(
        maximumPinsPerDevice: Int = 100,
        maximumAccuracy: Double = 500,
        assumedAccuracy: Double = 10,
        countryConfirmations: Int = 1
    ) {
        self.maximumPinsPerDevice = maximumPinsPerDevice
        self.maximumAccuracy = maximumAccuracy
        self.assumedAccuracy = assumedAccuracy
        self.countryConfirmations = countryConfirmations
    }
}
