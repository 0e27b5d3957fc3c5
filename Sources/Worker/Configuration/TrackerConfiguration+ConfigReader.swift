public import Configuration
import Foundation
public import GeoCore

extension TrackerConfiguration {
    /// Reads `maxPinsPerDevice`, `maxAccuracyMeters`, `assumedAccuracyMeters`, `countryConfirmations`,
    /// `maxVerticesPerPin`, `maxVerticesPerDevice`, `maxFixGapSeconds`, `approachHeadingToleranceDegrees` and
    /// `approachMinimumSpeed`, `placeConfirmations`, `disabledEvents` (a list of event types), `catalogTags` (a list of
    /// catalog tags) and `maxCatalogVisits` (under `tracker.` for the executable); each falls back to the default documented on the property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            maxPinsPerDevice: try config.integer(
                "maxPinsPerDevice",
                default: defaults.maxPinsPerDevice,
                in: 1...10_000
            ),
            maxAccuracyMeters: try config.number(
                "maxAccuracyMeters",
                default: defaults.maxAccuracyMeters,
                in: 1...1_000_000
            ),
            assumedAccuracyMeters: try config.number(
                "assumedAccuracyMeters",
                default: defaults.assumedAccuracyMeters,
                in: 0...10_000
            ),
            countryConfirmations: try config.integer(
                "countryConfirmations",
                default: defaults.countryConfirmations,
                in: 1...100
            ),
            maxVerticesPerPin: try config.integer(
                "maxVerticesPerPin",
                default: defaults.maxVerticesPerPin,
                in: 3...100_000
            ),
            maxVerticesPerDevice: try config.integer(
                "maxVerticesPerDevice",
                default: defaults.maxVerticesPerDevice,
                in: 3...1_000_000
            ),
            maxFixGapSeconds: try config.integer(
                "maxFixGapSeconds",
                default: defaults.maxFixGapSeconds,
                in: 1...86_400
            ),
            approachHeadingToleranceDegrees: try config.number(
                "approachHeadingToleranceDegrees",
                default: defaults.approachHeadingToleranceDegrees,
                in: 1...89
            ),
            approachMinimumSpeed: try config.number(
                "approachMinimumSpeed",
                default: defaults.approachMinimumSpeed,
                in: 0.01...1_000
            ),
            placeConfirmations: try config.integer(
                "placeConfirmations",
                default: defaults.placeConfirmations,
                in: 1...100
            ),
            disabledEventTypes: try Self.disabledEventTypes(config),
            catalogTags: try Self.catalogTags(config),
            maxCatalogVisits: try config.integer(
                "maxCatalogVisits",
                default: defaults.maxCatalogVisits,
                in: 1...100_000
            )
        )
    }

    /// The `catalogTags` list: tags of the fleet's catalog, each 1 to 64 bytes.
    private static func catalogTags(_ config: ConfigReader) throws(WorkerError) -> [String] {
        let listed = (config.stringArray(forKey: "catalogTags") ?? []).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for tag in listed where tag.utf8.count > CatalogGeofence.maximumTagLength {
            throw WorkerError(
                .configuration,
                "catalogTags: \"\(tag)\" is longer than \(CatalogGeofence.maximumTagLength) bytes, which no catalog tag is"
            )
        }
        return listed
    }

    /// The `disabledEvents` list: event types, each one geoworker emits.
    private static func disabledEventTypes(_ config: ConfigReader) throws(WorkerError) -> Set<String> {
        let listed = (config.stringArray(forKey: "disabledEvents") ?? []).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for type in listed where !DeviceEvent.types.contains(type) {
            throw WorkerError(
                .configuration,
                "disabledEvents: \"\(type)\" is not an event type (\(DeviceEvent.types.joined(separator: ", ")))"
            )
        }
        return Set(listed)
    }
}
