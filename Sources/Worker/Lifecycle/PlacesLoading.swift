import Foundation
import Logging
import Places

/// Finds and reads the places index the configuration asks for, once at start-up.
enum PlacesLoading {
    /// The index, or nil when places are off or (looked for where it is by default) not found: then the worker runs
    /// without region and time-zone events, and says so.
    ///
    /// - Throws: ``WorkerError`` when a configured index (`places.index`) or one found cannot be read.
    static func load(_ settings: WorkerConfiguration.Places, logger: Logger) throws(WorkerError) -> PlaceIndex? {
        guard settings.enabled else {
            logger.info("places are off (places.enabled=false): no region or time-zone events")
            return nil
        }
        if settings.index == nil,
            !PlaceIndex.defaultLocations().contains(where: { FileManager.default.fileExists(atPath: $0) })
        {
            logger.warning(
                "no places index found: running without region and time-zone events",
                metadata: [
                    "looked-in": .string(PlaceIndex.defaultLocations().joined(separator: ", ")),
                    "hint": "build it with `make places`, or set places.index (GEOWORKER_PLACES_INDEX)",
                ]
            )
            return nil
        }
        do {
            let index = try PlaceIndex.load(from: settings.index)
            logger.info(
                "places index read",
                metadata: [
                    "places": .stringConvertible(index.placeCount),
                    "regions": .stringConvertible(index.regions.count),
                    "time-zones": .stringConvertible(index.timeZoneIdentifiers.count),
                    "sources": .string(index.sources),
                ]
            )
            return index
        } catch {
            throw WorkerError(.countries, "cannot read the places index", underlying: error)
        }
    }
}
