/// A street address as a reverse geocoder gave it for a point: what a device card shows as "Route de Meyrin 49, 1217
/// Meyrin".
///
/// Every part is optional but the label: providers leave out what they do not know (a point in a park has no house
/// number, one at sea may have only a country).
public struct StreetAddress: Hashable, Sendable, Codable {
    /// The whole address on one line, as the provider wrote it (Nominatim's `display_name`), or made from the parts.
    public var label: String
    /// The named feature at the point, when it is not the street itself (a shop, a station).
    public var name: String?
    public var houseNumber: String?
    public var road: String?
    /// The quarter or suburb.
    public var suburb: String?
    /// The city, town or village.
    public var city: String?
    public var postcode: String?
    public var country: String?
    /// ISO 3166-1 alpha-2, upper case.
    public var countryCode: String?

    public init(
        label: String,
        name: String? = nil,
        houseNumber: String? = nil,
        road: String? = nil,
        suburb: String? = nil,
        city: String? = nil,
        postcode: String? = nil,
        country: String? = nil,
        countryCode: String? = nil
    ) {
        self.label = label
        self.name = name
        self.houseNumber = houseNumber
        self.road = road
        self.suburb = suburb
        self.city = city
        self.postcode = postcode
        self.country = country
        self.countryCode = countryCode
    }
}
