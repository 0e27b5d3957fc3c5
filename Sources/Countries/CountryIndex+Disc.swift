public import GeoCore

extension CountryIndex {
    /// The country of every point within `radius` metres of `coordinate` (a fix and its accuracy), or nil
    /// when they are not all one country: a border, or a coast with sea beyond the coastal tolerance, lies
    /// within the disc, or the disc is open sea.
    ///
    /// Each point of the disc counts as ``country(at:)`` answers it, coastal tolerance included. A disc with
    /// no boundary edge in it is one country's land (its centre's) or all sea; at sea, every point of it
    /// resolves to the one country whose coast lies within the tolerance of them all, if there is one. A disc
    /// crossed only by one country's coast is that country's when the tolerance reaches across the disc (its
    /// sea part then lies within the tolerance of that coast, and no other land is that near). A disc deep
    /// inside a country answers from the grid without testing an edge.
    public func country(at coordinate: Coordinate, within radius: Double) -> Country? {
        let radius = max(0, radius)
        let x = Self.x(coordinate.longitude)
        let y = FixedPoint.units(coordinate.latitude)
        let land = countryNumber(x: x, y: y)
        // The common case: no boundary edge within the disc (no mixed subcell in reach: no edge tested).
        let noBoundaryInDisc = boundary(nearX: x, y: y, within: radius, finding: .nearestCountry).nearest == nil
        if noBoundaryInDisc, let land { return countries[land] }
        // The disc holds a boundary, or lies at sea: its sea resolves to the nearest land within the coastal
        // tolerance, so what decides is which country's boundary lies nearest to all of it.
        guard coastalTolerance > 0,
            let (distance, country) = boundary(nearX: x, y: y, within: radius + coastalTolerance, finding: .nearestEdge)
                .nearest,
            land == nil || land == country
        else { return nil }
        // Every point of the disc lies within `reach` of `country`'s boundary: at sea it resolves to `country`
        // if that is within the tolerance and no other country's boundary comes as near (none within
        // `reach + radius` of the centre); on land it is `country`'s, as no other boundary enters the disc.
        let reach = noBoundaryInDisc ? distance + radius : 2 * radius
        guard reach <= coastalTolerance else { return nil }
        let near = boundary(nearX: x, y: y, within: reach + radius, finding: .everyCountry).distances
        guard near.keys.allSatisfy({ $0 == country }) else { return nil }
        return countries[country]
    }
}

extension CountryIndex {
    /// The country of a fix's disc, with the clearance around the point where no boundary lies.
    ///
    /// As ``country(at:within:)``, and, when the disc lies in one country's land, how far from the point no
    /// boundary lies (its clearance, up to `reach` metres, measured as ``country(at:within:)`` measures): any
    /// disc within that circle lies in the same country, so a caller that sees its next fixes stay inside it
    /// knows their country without looking it up (``CountryArea``). nil clearance at sea, near a boundary,
    /// above 80° of latitude (where the local frame's distances drift from the sphere's faster) or when `reach`
    /// is not beyond `radius`.
    public func country(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (country: Country?, clearance: Double?) {
        let radius = max(0, radius)
        guard reach > radius, abs(coordinate.latitude) < 80 else {
            return (country(at: coordinate, within: radius), nil)
        }
        let x = Self.x(coordinate.longitude)
        let y = FixedPoint.units(coordinate.latitude)
        guard let land = countryNumber(x: x, y: y) else { return (country(at: coordinate, within: radius), nil) }
        // The nearest edge itself (not the first edge of the only country in reach, which is all the plain
        // lookup needs): nothing of any boundary lies nearer.
        guard let nearest = boundary(nearX: x, y: y, within: reach, finding: .nearestEdge).nearest else {
            return (countries[land], reach)
        }
        // A boundary within the disc: the plain lookup's coastal rules decide, and there is no clear circle.
        guard nearest.distance > radius else { return (country(at: coordinate, within: radius), nil) }
        // No edge within `radius`: the plain lookup answers `land` too (its first case).
        return (countries[land], nearest.distance)
    }
}
