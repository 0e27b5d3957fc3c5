import Countries
public import GeoCore

extension PlaceIndex {
    /// The time zone of a fix, and how far around its point no zone boundary lies (up to `reach` metres).
    public func timeZone(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (timeZone: PlaceDecision<String>, clearance: Double?) {
        let (zone, clearance) = timeZones.country(at: coordinate, within: max(0, radius), clearanceUpTo: reach)
        guard let zone else { return (.undecided, nil) }
        return (.decided(zone.code), clearance)
    }

    /// The region of a fix, and how far around its point the answer stays the same (up to `reach` metres): for a
    /// polygon, how far no region boundary lies; for a nearest-place region, half the gap between the nearest
    /// place of the region and the nearest of another (a point that moves by less is still nearer the first).
    public func region(
        at coordinate: Coordinate,
        within radius: Double,
        countryCode: String?,
        clearanceUpTo reach: Double
    ) -> (region: PlaceDecision<PlaceRegion>, clearance: Double?) {
        let radius = max(0, radius)
        guard reach > radius, let countryCode, let country = countryNumbers[countryCode] else {
            return (region(at: coordinate, within: radius, countryCode: countryCode), nil)
        }
        if let polygon = regionPolygons.countryNumber(at: coordinate),
            regionPolygons.countries[polygon].code.hasPrefix(countryCode + "-")
        {
            let (whole, clearance) = regionPolygons.country(at: coordinate, within: radius, clearanceUpTo: reach)
            guard whole?.code == regionPolygons.countries[polygon].code else {
                return (region(at: coordinate, within: radius, countryCode: countryCode), nil)
            }
            return (.decided(region(number: regionOfPolygon[polygon], source: .polygon)), clearance)
        }
        let point = LocalityTree.unitVector(coordinate)
        guard let nearest = tree.nearest(to: point, inCountry: country, filter: .withRegion) else {
            return (.decided(nil), nil)
        }
        let number = tree.regions[nearest.node]
        let distance = LocalityTree.metres(chordSquared: nearest.chordSquared)
        let rival = tree.nearest(
            to: point,
            inCountry: country,
            filter: .regionOtherThan(number),
            within: LocalityTree.chordSquared(metres: distance + 2 * reach)
        )
        let gap = rival.map { LocalityTree.metres(chordSquared: $0.chordSquared) - distance } ?? 2 * reach
        // The disc decides when the other region's place lies beyond its diameter (region(at:within:...)'s rule).
        guard gap > 2 * radius else { return (.undecided, nil) }
        return (.decided(region(number: number, source: .nearestPlace)), min(reach, gap / 2))
    }
}
