/// A device arriving in another region (an ISO 3166-2 subdivision) of its country, or in a country where no
/// region is known (`to` nil).
public struct RegionChange: Hashable, Sendable {
    /// The region last announced, nil for the first.
    public let from: PlaceRegion?
    public let to: PlaceRegion?
    /// The device's country (ISO 3166-1 alpha-2) at the change.
    public let countryCode: String?
    public let position: Fix

    public init(from: PlaceRegion?, to: PlaceRegion?, countryCode: String?, position: Fix) {
        self.from = from
        self.to = to
        self.countryCode = countryCode
        self.position = position
    }
}
