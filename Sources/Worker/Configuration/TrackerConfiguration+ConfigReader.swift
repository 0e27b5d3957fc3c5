public import Configuration
public import GeoCore

extension TrackerConfiguration {
    /// Reads `maxPinsPerDevice`, `maxAccuracyMeters`, `assumedAccuracyMeters`, `countryConfirmations`,
    /// `maxVerticesPerPin`, `maxVerticesPerDevice`, `maxFixGapSeconds`, `approachHeadingToleranceDegrees` and
    /// `approachMinimumSpeed` (under `tracker.` for the executable); each falls back to the default documented
    /// on the property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            maximumPinsPerDevice: try config.integer(
                "maxPinsPerDevice",
                default: defaults.maximumPinsPerDevice,
                in: 1...10_000
            ),
            maximumAccuracy: try config.number(
                "maxAccuracyMeters",
                default: defaults.maximumAccuracy,
                in: 1...1_000_000
            ),
            assumedAccuracy: try config.number(
                "assumedAccuracyMeters",
                default: defaults.assumedAccuracy,
                in: 0...10_000
            ),
            countryConfirmations: try config.integer(
                "countryConfirmations",
                default: defaults.countryConfirmations,
                in: 1...100
            ),
            maximumVerticesPerPin: try config.integer(
                "maxVerticesPerPin",
                default: defaults.maximumVerticesPerPin,
                in: 3...100_000
            ),
            maximumVerticesPerDevice: try config.integer(
                "maxVerticesPerDevice",
                default: defaults.maximumVerticesPerDevice,
                in: 3...1_000_000
            ),
            maximumFixGapSeconds: try config.integer(
                "maxFixGapSeconds",
                default: defaults.maximumFixGapSeconds,
                in: 1...86_400
            ),
            approachHeadingTolerance: try config.number(
                "approachHeadingToleranceDegrees",
                default: defaults.approachHeadingTolerance,
                in: 1...89
            ),
            approachMinimumSpeed: try config.number(
                "approachMinimumSpeed",
                default: defaults.approachMinimumSpeed,
                in: 0.01...1_000
            )
        )
    }
}
