import ArgumentParser
import Foundation

/// The options that define a geofence's place and rules, as `pins track` and `geofences put` take them: a circle or a
/// GeoJSON shape, dwell and approach times, a title and metadata.
struct PinDefinitionOptions: ParsableArguments {
    @Option(help: "Latitude of the centre of a circle, degrees.") var lat: Double?
    @Option(help: "Longitude of the centre of a circle, degrees.") var lon: Double?
    @Option(help: "Radius of a circle in metres (1 to 100000).") var radius: Double?
    @Option(help: "Instead of a circle: a GeoJSON Polygon or MultiPolygon geometry, as text or @file.json.")
    var shape: String?
    @Option(help: "Announce geofence.dwelled after this many seconds inside (1 to 604800).")
    var dwellSeconds: Int?
    @Option(help: "Announce geofence.approaching when this many seconds away or less (1 to 86400).")
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
    /// - Throws: `ValidationError` for a shape or metadata that is not JSON of the right kind.
    func members() throws -> [String: Any] {
        var members: [String: Any] = [:]
        if let shape {
            let text =
                shape.hasPrefix("@") ? try String(contentsOfFile: String(shape.dropFirst()), encoding: .utf8) : shape
            guard let geometry = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else {
                throw ValidationError("--shape must be GeoJSON text (or @file.json).")
            }
            members["shape"] = geometry
        } else {
            members["lat"] = lat
            members["lon"] = lon
            members["radius"] = radius
        }
        if let metadata {
            guard let object = try? JSONSerialization.jsonObject(with: Data(metadata.utf8)) as? [String: Any] else {
                throw ValidationError("--metadata must be a JSON object.")
            }
            members["metadata"] = object
        }
        members["title"] = title
        members["dwellSeconds"] = dwellSeconds
        members["approachSeconds"] = approachSeconds
        return members
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
