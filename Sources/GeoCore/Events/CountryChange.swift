/// A device arriving in a country.
public struct CountryChange: Hashable, Sendable {
    /// The previous country (ISO 3166-1 alpha-2), nil for the first fix.
    public let from: String?
    public let to: String
    /// The English name of `to`.
    public let countryName: String
    public let position: Fix
    /// With places: the region of the fix that decided the change (nil where none is known, or without places).
    public let region: PlaceRegion?
    /// With places: the populated place nearest that fix.
    public let locality: Locality?

    public init(
        from: String?,
        to: String,
        countryName: String,
        position: Fix,
        region: PlaceRegion? = nil,
        locality: Locality? = nil
    ) {
        self.from = from
        self.to = to
        self.countryName = countryName
        self.position = position
        self.region = region
        self.locality = locality
    }
}

extension CountryChange {
    /// The same change with the region and locality of its fix.
    func described(region: PlaceRegion?, locality: Locality?) -> CountryChange {
        CountryChange(
            from: from,
            to: to,
            countryName: countryName,
            position: position,
            region: region,
            locality: locality
        )
    }
}
