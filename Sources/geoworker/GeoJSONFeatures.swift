import Foundation

/// GeoJSON features as geojson.io and QGIS export them (a FeatureCollection, or one Feature), turned into catalog
/// records.
///
/// The tools' side of `geoworker geofences import`; the records are then checked by the worker's own decoder.
/// A feature's id is its `id` (a string or a number), else its `properties.id`; its geometry a Polygon or MultiPolygon,
/// or a Point with `properties.radius` (metres) for a circle. From its properties: `tags` (a list, or one string of
/// comma-separated tags), `title` (else `name`), `dwellSeconds`, `approachSeconds`; the other properties go into the
/// geofence's `metadata`, which its events carry.
enum GeoJSONFeatures {
    /// A feature that cannot be a catalog record, with its place in the file.
    struct Problem: Error, CustomStringConvertible {
        let feature: Int
        let id: String?
        let reason: String

        var description: String { "feature \(feature)\(id.map { " ('\($0)')" } ?? ""): \(reason)" }
    }

    /// The catalog record (id and JSON value) of each feature in `data`, with `extraTags` added to each, or why that
    /// feature cannot be one.
    ///
    /// - Throws: ``Problem`` for a document that is not GeoJSON features.
    static func records(in data: Data, extraTags: [String]) throws -> [Result<(id: String, json: Data), Problem>] {
        guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Problem(feature: 0, id: nil, reason: "the file is not a JSON object (a GeoJSON FeatureCollection)")
        }
        let features: [Any]
        switch document["type"] as? String {
        case "FeatureCollection":
            guard let list = document["features"] as? [Any] else {
                throw Problem(feature: 0, id: nil, reason: "the FeatureCollection has no `features` list")
            }
            features = list
        case "Feature":
            features = [document]
        case let other:
            throw Problem(
                feature: 0,
                id: nil,
                reason: "a GeoJSON FeatureCollection or Feature is expected, not \(other.map { "a \($0)" } ?? "this")"
            )
        }
        return features.enumerated().map { index, feature in
            Result { () throws(Problem) in try record(feature, index: index, extraTags) }
        }
    }

    private static func record(
        _ value: Any,
        index: Int,
        _ extraTags: [String]
    ) throws(Problem) -> (id: String, json: Data) {
        guard let feature = value as? [String: Any], feature["type"] as? String == "Feature" else {
            throw Problem(feature: index, id: nil, reason: "not a GeoJSON Feature")
        }
        var properties = feature["properties"] as? [String: Any] ?? [:]
        let id: String? =
            switch feature["id"] ?? properties["id"] {
            case let text as String: text
            case let number as NSNumber: number.stringValue
            default: nil
            }
        guard let id, !id.isEmpty else {
            throw Problem(feature: index, id: nil, reason: "no id (the feature's `id`, or `properties.id`)")
        }
        properties["id"] = nil
        var record: [String: Any] = ["id": id]
        let tags: [String]
        switch properties.removeValue(forKey: "tags") {
        case let list as [String]: tags = list
        case let text as String: tags = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        case nil: tags = []
        default: throw Problem(feature: index, id: id, reason: "`properties.tags` must be a list of strings")
        }
        record["tags"] = Array(Set(tags + extraTags)).filter { !$0.isEmpty }.sorted()
        guard let geometry = feature["geometry"] as? [String: Any] else {
            throw Problem(feature: index, id: id, reason: "no geometry")
        }
        switch geometry["type"] as? String {
        case "Polygon", "MultiPolygon":
            record["shape"] = geometry
        case "Point":
            guard let position = geometry["coordinates"] as? [Double], position.count >= 2 else {
                throw Problem(feature: index, id: id, reason: "a Point without [lon, lat] coordinates")
            }
            guard let radius = properties.removeValue(forKey: "radius") else {
                throw Problem(feature: index, id: id, reason: "a Point needs `properties.radius` (metres) for a circle")
            }
            record["lon"] = position[0]
            record["lat"] = position[1]
            record["radius"] = radius
        case let other:
            throw Problem(
                feature: index,
                id: id,
                reason: "a \(other ?? "geometry without a type") is not a geofence (Polygon, MultiPolygon, or a Point "
                    + "with properties.radius)"
            )
        }
        if let title = properties.removeValue(forKey: "title") ?? properties.removeValue(forKey: "name") {
            record["title"] = title
        }
        for key in ["dwellSeconds", "approachSeconds"] {
            if let value = properties.removeValue(forKey: key) { record[key] = value }
        }
        if !properties.isEmpty { record["metadata"] = properties }
        guard let json = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else {
            throw Problem(feature: index, id: id, reason: "its properties cannot be written as JSON")
        }
        return (id, json)
    }
}
