import ArgumentParser
import Foundation

/// The options that define a geofence's place and rules, as `pins track` and `geofences put` take them: a circle or a
/// GeoJSON shape, dwell and approach times, a title and metadata.
///
/// The numbers are read whatever they start with (`.unconditional`): `--lon -74.0060` is a longitude west of Greenwich,
/// not a flag, and `--radius -5` reaches the range check that names the allowed range.
struct PinDefinitionOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Latitude of the centre of a circle, degrees.") var lat: Double?
    @Option(parsing: .unconditional, help: "Longitude of the centre of a circle, degrees.") var lon: Double?
    @Option(parsing: .unconditional, help: "Radius of a circle in metres (1 to 100000).") var radius: Double?
    @Option(help: "Instead of a circle: a GeoJSON Polygon or MultiPolygon geometry, as text or @file.json.")
    var shape: String?
    @Option(parsing: .unconditional, help: "Announce geofence.dwelled after this many seconds inside (1 to 604800).")
    var dwellSeconds: Int?
    @Option(
        parsing: .unconditional,
        help: "Announce geofence.approaching when this many seconds away or less (1 to 86400)."
    )
    var approachSeconds: Int?
    @Option(help: "A title carried into the events.") var title: String?
    @Option(help: "A JSON object carried into the events.") var metadata: String?

    func validate() throws {
        let circle = [lat == nil, lon == nil, radius == nil]
        if shape == nil {
            guard !circle.contains(true) else { throw ValidationError("Give --lat, --lon and --radius, or --shape.") }
        } else {
            guard !circle.contains(false) else {
                throw ValidationError("Give either --shape or --lat, --lon and --radius, not both.")
            }
        }
    }

    /// The JSON members these options give (a pin's, or a catalog record's top level), for the worker's own decoder
    /// to check.
    ///
    /// - Throws: ``CommandFailure`` for a shape or metadata that is not JSON of the right kind.
    func members() throws(CommandFailure) -> [String: Any] {
        var members: [String: Any] = [:]
        if let shape {
            members["shape"] = try Self.geometry(shape)
        } else {
            members["lat"] = lat
            members["lon"] = lon
            members["radius"] = radius
        }
        if let metadata {
            guard let object = try? JSONSerialization.jsonObject(with: Data(metadata.utf8)) as? [String: Any] else {
                throw CommandFailure("--metadata must be a JSON object, such as '{\"account\":42}'.")
            }
            members["metadata"] = object
        }
        members["title"] = title
        members["dwellSeconds"] = dwellSeconds
        members["approachSeconds"] = approachSeconds
        return members
    }

    /// The geometry `--shape` gives, as text or `@file`: a GeoJSON Polygon or MultiPolygon, or a Feature of one, or a
    /// FeatureCollection of a single such Feature (what geojson.io and QGIS export).
    static func geometry(_ argument: String) throws(CommandFailure) -> Any {
        var text = argument
        if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandFailure("--shape \(argument): cannot read \(path) (\(error.localizedDescription)).")
            }
        }
        guard let document = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw CommandFailure(
                "--shape must be a GeoJSON object (a Polygon or MultiPolygon, or a Feature of one), as text or @file.json."
            )
        }
        switch document["type"] as? String {
        case "Feature":
            guard let geometry = document["geometry"] as? [String: Any] else {
                throw CommandFailure("--shape: the Feature has no geometry.")
            }
            return geometry
        case "FeatureCollection":
            let features = document["features"] as? [Any] ?? []
            guard features.count == 1, let feature = features[0] as? [String: Any],
                let geometry = feature["geometry"] as? [String: Any]
            else {
                throw CommandFailure(
                    "--shape: the FeatureCollection has \(features.count) features; a pin has one shape. Give one"
                        + " Feature, or import every feature as a fleet geofence: geoworker geofences import FILE."
                )
            }
            return geometry
        default:
            return document
        }
    }

    /// A decoder's failure in the words of these options: `pin.radius` (or `radius`) becomes `--radius`.
    static func inOptionWords(_ problem: String, prefix: String) -> String {
        var problem = problem
        for (member, option) in [
            ("id", "--id"), ("lat", "--lat"), ("lon", "--lon"), ("radius", "--radius"), ("shape", "--shape"),
            ("title", "--title"), ("dwellSeconds", "--dwell-seconds"), ("approachSeconds", "--approach-seconds"),
            ("tags", "--tags"),
        ] {
            problem = problem.replacingOccurrences(of: "'\(prefix)\(member)'", with: "'\(option)'")
                .replacingOccurrences(of: "\(prefix)\(member) ", with: "\(option) ")
        }
        return problem
    }
}
