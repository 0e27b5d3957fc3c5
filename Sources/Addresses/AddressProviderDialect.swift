public import Foundation
public import GeoCore

/// How a reverse geocoder is asked and how its answer reads: Nominatim's `/reverse?format=jsonv2` or Photon's
/// `/reverse` (GeoJSON).
///
/// Pure: builds the request's URL and reads the body; the HTTP exchange is the caller's.
public enum AddressProviderDialect: String, Sendable, CaseIterable {
    case nominatim
    case photon

    /// What an answer says: an address, no address at the point (a valid, cacheable answer: open sea, a desert), or
    /// a body that is not what the dialect answers.
    public enum Reading: Equatable, Sendable {
        case address(StreetAddress)
        case noAddress
    }

    /// A body that does not read as the dialect's answer.
    public struct MalformedAnswer: Error, Equatable, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The reverse request for `point`.
    ///
    /// - Parameters:
    ///   - base: the provider's base URL, with or without a trailing slash.
    ///   - point: where the address is wanted.
    ///   - language: the languages to answer in (`Accept-Language`-style, nil for the provider's default).
    /// - Returns: the request's URL; nil when `base` is not a URL.
    public func reverseURL(base: String, point: Coordinate, language: String? = nil) -> URL? {
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard var components = URLComponents(string: trimmed + "/reverse") else { return nil }
        var query = [
            URLQueryItem(name: "lat", value: Self.degrees(point.latitude)),
            URLQueryItem(name: "lon", value: Self.degrees(point.longitude)),
        ]
        switch self {
        case .nominatim:
            query += [
                URLQueryItem(name: "format", value: "jsonv2"), URLQueryItem(name: "addressdetails", value: "1"),
                URLQueryItem(name: "zoom", value: "18"),
            ]
            if let language { query.append(URLQueryItem(name: "accept-language", value: language)) }
        case .photon:
            query.append(URLQueryItem(name: "limit", value: "1"))
            if let language { query.append(URLQueryItem(name: "lang", value: language)) }
        }
        components.queryItems = (components.queryItems ?? []) + query
        return components.url
    }

    /// Reads an answer's body.
    public func read(_ body: [UInt8]) throws(MalformedAnswer) -> Reading {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(body))
        } catch {
            throw MalformedAnswer(description: "the answer is not JSON")
        }
        guard let answer = object as? [String: Any] else {
            throw MalformedAnswer(description: "the answer is not a JSON object")
        }
        switch self {
        case .nominatim: return try Self.readNominatim(answer)
        case .photon: return try Self.readPhoton(answer)
        }
    }

    private static func readNominatim(_ answer: [String: Any]) throws(MalformedAnswer) -> Reading {
        // Nominatim says "no address here" as {"error": "Unable to geocode"}.
        if answer["error"] != nil { return .noAddress }
        guard let label = answer["display_name"] as? String, !label.isEmpty else {
            throw MalformedAnswer(description: "the answer has no display_name")
        }
        let parts = answer["address"] as? [String: Any] ?? [:]
        func part(_ keys: String...) -> String? {
            keys.lazy.compactMap { parts[$0] as? String }.first { !$0.isEmpty }
        }
        let road = part("road", "pedestrian", "footway", "path", "square")
        let name = (answer["name"] as? String).flatMap { $0.isEmpty || $0 == road ? nil : $0 }
        return .address(
            StreetAddress(
                label: label,
                name: name,
                houseNumber: part("house_number"),
                road: road,
                suburb: part("suburb", "quarter", "neighbourhood", "city_district"),
                city: part("city", "town", "village", "municipality", "hamlet"),
                postcode: part("postcode"),
                country: part("country"),
                countryCode: part("country_code")?.uppercased()
            )
        )
    }

    private static func readPhoton(_ answer: [String: Any]) throws(MalformedAnswer) -> Reading {
        guard let features = answer["features"] as? [Any] else {
            throw MalformedAnswer(description: "the answer has no features")
        }
        guard let first = features.first else { return .noAddress }
        guard let feature = first as? [String: Any], let properties = feature["properties"] as? [String: Any] else {
            throw MalformedAnswer(description: "the first feature has no properties")
        }
        func part(_ key: String) -> String? { (properties[key] as? String).flatMap { $0.isEmpty ? nil : $0 } }
        let road = part("street")
        let name = part("name").flatMap { $0 == road ? nil : $0 }
        var address = StreetAddress(
            label: "",
            name: name,
            houseNumber: part("housenumber"),
            road: road,
            suburb: part("district"),
            city: part("city"),
            postcode: part("postcode"),
            country: part("country"),
            countryCode: part("countrycode")?.uppercased()
        )
        address.label = Self.label(of: address)
        guard !address.label.isEmpty else { return .noAddress }
        return .address(address)
    }

    /// A one-line label from the parts, for providers that give none: "name, road number, postcode city, country".
    static func label(of address: StreetAddress) -> String {
        let street = [address.road, address.houseNumber].compactMap { $0 }.joined(separator: " ")
        let place = [address.postcode, address.city].compactMap { $0 }.joined(separator: " ")
        return [address.name, street, place, address.country].compactMap { $0 }.filter { !$0.isEmpty }
            .joined(separator: ", ")
    }

    private static func degrees(_ value: Double) -> String {
        String(format: "%.7f", value)
    }
}
