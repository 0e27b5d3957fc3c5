/// What ``PlaceResolver/places(at:within:countryCode:)`` answers for one fix.
public struct PlaceAnswer: Hashable, Sendable {
    public var region: PlaceDecision<PlaceRegion>
    /// nil only when the index holds no place the search may answer with.
    public var locality: Locality?
    /// IANA time-zone name; at sea, the nautical zone (`Etc/GMT+5`) the polygons draw there.
    public var timeZone: PlaceDecision<String>

    public init(region: PlaceDecision<PlaceRegion>, locality: Locality?, timeZone: PlaceDecision<String>) {
        self.region = region
        self.locality = locality
        self.timeZone = timeZone
    }
}
