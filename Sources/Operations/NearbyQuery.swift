import GeoCore
import Hummingbird

/// The parameters of `GET /devices/nearby?lat=&lon=&radius=&limit=`, read and checked.
struct NearbyQuery {
    /// What is wrong with a request's parameters, for a 400 answer.
    struct Problem: Error {
        let message: String
    }

    let center: Coordinate
    /// Metres; default 5,000, at most 1,000 km.
    let radius: Double
    /// Default 10, at most `http.mapLimit`.
    let limit: Int

    static let defaultRadius = 5_000.0
    static let maximumRadius = 1_000_000.0
    static let defaultLimit = 10

    /// Reads `lat`, `lon` (required, degrees), `radius` (metres) and `limit`.
    static func read(_ parameters: Parameters, maximumLimit: Int) -> Result<NearbyQuery, Problem> {
        guard let latitude = parameters.get("lat").flatMap(Double.init),
            let longitude = parameters.get("lon").flatMap(Double.init),
            let center = Coordinate(latitude: latitude, longitude: longitude)
        else {
            return .failure(
                Problem(message: "lat and lon are required: degrees, latitude -90...90, longitude -180...180")
            )
        }
        var radius = defaultRadius
        if let text = parameters.get("radius") {
            guard let value = Double(text), value.isFinite, value > 0, value <= maximumRadius else {
                return .failure(Problem(message: "radius must be metres, more than 0 and at most 1000000"))
            }
            radius = value
        }
        var limit = min(defaultLimit, maximumLimit)
        if let text = parameters.get("limit") {
            guard let value = Int(text), value > 0 else {
                return .failure(Problem(message: "limit must be a positive integer"))
            }
            limit = min(value, maximumLimit)
        }
        return .success(NearbyQuery(center: center, radius: radius, limit: limit))
    }
}
