public import Configuration
public import GeoCore

extension TripRules {
    /// Reads `minimumDistanceMeters`, `minimumDurationSeconds`, `minimumParkingSeconds` and `maximumGapSeconds` (under
    /// `trips.` for the executable, where `trips.enabled` turns them on); each falls back to the default documented on
    /// the property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            minimumDistanceMeters: try config.number(
                "minimumDistanceMeters",
                default: defaults.minimumDistanceMeters,
                in: 1...1_000_000
            ),
            minimumDurationSeconds: try config.integer(
                "minimumDurationSeconds",
                default: defaults.minimumDurationSeconds,
                in: 1...86_400
            ),
            minimumParkingSeconds: try config.integer(
                "minimumParkingSeconds",
                default: defaults.minimumParkingSeconds,
                in: 1...86_400
            ),
            maximumGapSeconds: try config.integer(
                "maximumGapSeconds",
                default: defaults.maximumGapSeconds,
                in: 60...(7 * 86_400)
            )
        )
    }
}

extension SpeedRules {
    /// Reads `limitMetersPerSecond` (the default limit; unset: only devices with their own), `minimumDurationSeconds`
    /// and `maximumPlausibleMetersPerSecond` (under `speed.` for the executable); each falls back to the default
    /// documented on the property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            limitMetersPerSecond: try config.optionalNumber(
                "limitMetersPerSecond",
                in: DeviceCommand.speedLimitRange
            ),
            minimumDurationSeconds: try config.integer(
                "minimumDurationSeconds",
                default: defaults.minimumDurationSeconds,
                in: 0...86_400
            ),
            maximumPlausibleMetersPerSecond: try config.number(
                "maximumPlausibleMetersPerSecond",
                default: defaults.maximumPlausibleMetersPerSecond,
                in: 1...1_000
            )
        )
    }
}
