public import Foundation

/// One country's boundary: its code, its English name, and its rings (outer rings and holes alike, in degrees as
/// longitude/latitude pairs).
///
/// A point is in the country when it is inside an odd number of its rings, which is what polygons with holes mean.
public struct CountryBoundary: Sendable {
    public let code: String
    public let name: String
    public let rings: [[(longitude: Double, latitude: Double)]]

    public init(code: String, name: String, rings: [[(longitude: Double, latitude: Double)]]) {
        self.code = code
        self.name = name
        self.rings = rings
    }

    /// Reads a GeoJSON FeatureCollection: one Feature per country with `properties.code` (ISO 3166-1 alpha-2) and
    /// optionally `properties.name`, and a Polygon or MultiPolygon geometry.
    ///
    /// Features with the same code are merged. Other areas use the same index: `codeProperty` names the property
    /// that holds their code (`tzid` for time zones), up to 255 bytes.
    ///
    /// - Throws: ``CountryIndexError`` naming the feature that is not of this shape.
    public static func decodeGeoJSON(
        _ data: Data,
        codeProperty: String = "code"
    ) throws(CountryIndexError) -> [CountryBoundary] {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let features = root["features"] as? [[String: Any]]
        else { throw CountryIndexError("boundaries must be a GeoJSON FeatureCollection") }
        var ringsByCode: [String: [[(longitude: Double, latitude: Double)]]] = [:]
        var names: [String: String] = [:]
        for (number, feature) in features.enumerated() {
            let properties = feature["properties"] as? [String: Any] ?? [:]
            guard let code = properties[codeProperty] as? String, !code.isEmpty, code.utf8.count <= 255 else {
                throw CountryIndexError("feature \(number) has no properties.\(codeProperty) (of 1 to 255 bytes)")
            }
            names[code] = names[code] ?? (properties["name"] as? String) ?? code
            guard let geometry = feature["geometry"] as? [String: Any], let type = geometry["type"] as? String,
                let coordinates = geometry["coordinates"] as? [Any]
            else { throw CountryIndexError("feature \(number) (\(code)) has no geometry") }
            let polygons: [Any]
            switch type {
            case "Polygon": polygons = [coordinates]
            case "MultiPolygon": polygons = coordinates
            default: throw CountryIndexError("feature \(number) (\(code)) is a \(type), not a Polygon or MultiPolygon")
            }
            for polygon in polygons {
                guard let rings = polygon as? [[[Double]]] else {
                    throw CountryIndexError("feature \(number) (\(code)) has malformed coordinates")
                }
                for ring in rings {
                    var points: [(longitude: Double, latitude: Double)] = []
                    for position in ring {
                        guard position.count >= 2, (-180...180).contains(position[0]), (-90...90).contains(position[1])
                        else {
                            throw CountryIndexError(
                                "feature \(number) (\(code)) has a position off the globe: \(position)"
                            )
                        }
                        points.append((position[0], position[1]))
                    }
                    ringsByCode[code, default: []].append(points)
                }
            }
        }
        return ringsByCode.keys.sorted().map { CountryBoundary(code: $0, name: names[$0]!, rings: ringsByCode[$0]!) }
    }
}

/// A country index that cannot be built or read.
public struct CountryIndexError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
