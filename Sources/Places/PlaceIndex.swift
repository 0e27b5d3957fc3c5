import Countries
public import GeoCore

/// Where a point is in human terms, offline: its region, its nearest populated place and its time zone.
///
/// Read from a places index (`places.idx`, built by `make places` with ``PlaceIndexBuilder``):
/// - **time zones** from timezone-boundary-builder's polygons, which cover the oceans too with the nautical zones
///   (`Etc/GMT+5`), so every point has one; looked up exactly as ``CountryIndex`` looks up countries;
/// - **regions** (ISO 3166-2 first-level subdivisions) from a polygon where the index has one for the point's
///   country (the US, Canada, Australia, India, China and a few more), else from the nearest populated place of
///   the same country that GeoNames gives a region: never another country's;
/// - **localities** from GeoNames' places of 500 people or more, in a k-d tree per country: the town of the point's
///   nearest place (of its country; of all, for a point no country claims), a quarter's nearest place being its
///   district (``Locality/district``).
public final class PlaceIndex: PlaceResolver {
    /// One region of the index.
    public struct Region: Hashable, Sendable {
        /// ISO 3166-2, or GeoNames' admin-1 code (`FO.VG`) for a division ISO 3166-2 does not code.
        public let code: String
        /// The English name where one is known, else the local one.
        public let name: String
        public let localName: String
        /// Whether the code is GeoNames' (a dot where ISO 3166-2's codes have a hyphen): decided once, at load, not
        /// at every lookup.
        let isGeoNamesAdmin1: Bool

        public init(code: String, name: String, localName: String) {
            self.code = code
            self.name = name
            self.localName = localName
            isGeoNamesAdmin1 = code.utf8.contains(UInt8(ascii: "."))
        }
    }

    /// What the index was built from, as its builder wrote it (for logs and `--version`-style answers).
    public let sources: String
    public let regions: [Region]
    let timeZones: CountryIndex
    let regionPolygons: CountryIndex
    /// For each region polygon (by its number in ``regionPolygons``), its region's number in ``regions``.
    let regionOfPolygon: [UInt16]
    let places: PlaceTable
    let tree: LocalityTree
    /// ISO 3166-1 alpha-2 code -> country number of ``tree``.
    let countryNumbers: [String: Int]
    let offsets: UTCOffsets

    init(contents: PlaceIndexContents) {
        sources = contents.sources
        regions = contents.regions
        timeZones = contents.timeZones
        regionPolygons = contents.regionPolygons
        let regionNumbers = Dictionary(
            contents.regions.enumerated().map { ($1.code, UInt16($0)) },
            uniquingKeysWith: { first, _ in first }
        )
        regionOfPolygon = contents.regionPolygons.countries.map { regionNumbers[$0.code] ?? LocalityTree.noRegion }
        places = contents.places
        tree = contents.tree
        countryNumbers = Dictionary(
            contents.countryCodes.enumerated().map { ($1, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        offsets = UTCOffsets(identifiers: contents.timeZones.countries.map(\.code))
    }

    /// The number of populated places the index holds.
    public var placeCount: Int { places.count }

    /// The IANA names of the time zones the index draws.
    public var timeZoneIdentifiers: [String] { timeZones.countries.map(\.code) }

    /// Bytes the index's tables take in memory.
    public var memoryFootprint: Int {
        timeZones.memoryFootprint + regionPolygons.memoryFootprint + places.memoryFootprint
            + tree.nodes.count * (MemoryLayout<LocalityTree.Node>.stride + 3)
    }

    public func region(
        at coordinate: Coordinate,
        within radius: Double,
        countryCode: String?
    ) -> PlaceDecision<PlaceRegion> {
        region(
            at: coordinate,
            within: max(0, radius),
            countryCode: countryCode,
            country: countryCode.flatMap { countryNumbers[$0] }
        )
    }

    public func locality(near coordinate: Coordinate, countryCode: String?) -> Locality? {
        let country = countryCode.flatMap { countryNumbers[$0] }
        // A country the index has no places of (Antarctica's claims, Bouvet Island) has no locality.
        if countryCode != nil && country == nil { return nil }
        return locality(near: coordinate, point: LocalityTree.unitVector(coordinate), country: country)
    }

    public func utcOffset(ofTimeZone identifier: String, at time: Int64) -> Int? {
        offsets.offset(of: identifier, at: time)
    }

    /// The time zone at a point (accuracy 0): the polygons cover the whole globe, the oceans with nautical zones.
    public func timeZone(at coordinate: Coordinate) -> String? {
        timeZones.country(at: coordinate)?.code
    }

    public func timeZone(at coordinate: Coordinate, within radius: Double) -> PlaceDecision<String> {
        guard radius > 0 else { return .decided(timeZones.country(at: coordinate)?.code) }
        guard let zone = timeZones.country(at: coordinate, within: radius) else { return .undecided }
        return .decided(zone.code)
    }

    /// The region: a polygon of the point's country that holds the point (within the coastal tolerance at sea),
    /// else the region of the nearest place of that country that has one.
    func region(
        at coordinate: Coordinate,
        within radius: Double,
        countryCode: String?,
        country: Int?
    ) -> PlaceDecision<PlaceRegion> {
        guard let countryCode, let country else { return .decided(nil) }
        if let polygon = regionPolygon(at: coordinate, countryCode: countryCode) {
            guard radius > 0 else { return .decided(region(number: regionOfPolygon[polygon], source: .polygon)) }
            // A disc that reaches into another region, or beyond the polygons, decides nothing.
            guard let whole = regionPolygons.country(at: coordinate, within: radius),
                whole.code == regionPolygons.countries[polygon].code
            else { return .undecided }
            return .decided(region(number: regionOfPolygon[polygon], source: .polygon))
        }
        let point = LocalityTree.unitVector(coordinate)
        guard let nearest = tree.nearest(to: point, inCountry: country, filter: .withRegion) else {
            return .decided(nil)
        }
        let number = tree.regions[nearest.node]
        if radius > 0 {
            // Every point of the disc is nearer this place than any place of another region when such a place lies
            // beyond the nearest's distance plus the disc's diameter (the triangle inequality, on the chord).
            let reach = LocalityTree.metres(chordSquared: nearest.chordSquared) + 2 * radius
            let rival = tree.nearest(
                to: point,
                inCountry: country,
                filter: .regionOtherThan(number),
                within: LocalityTree.chordSquared(metres: reach)
            )
            if rival != nil { return .undecided }
        }
        return .decided(region(number: number, source: .nearestPlace))
    }

    /// The region polygon of the country that holds the point (within the coastal tolerance at sea), by its number in
    /// ``regionPolygons``; nil where the index draws none of the country's there.
    private func regionPolygon(at coordinate: Coordinate, countryCode: String) -> Int? {
        guard let polygon = regionPolygons.countryNumber(at: coordinate),
            regionPolygons.countries[polygon].code.hasPrefix(countryCode + "-")
        else { return nil }
        return polygon
    }

    func region(number: UInt16, source: PlaceRegion.Source) -> PlaceRegion? {
        guard number != LocalityTree.noRegion else { return nil }
        let region = regions[Int(number)]
        return PlaceRegion(
            code: region.code,
            name: region.name,
            localName: region.localName,
            source: region.isGeoNamesAdmin1 ? .geonamesAdmin1 : source
        )
    }

    /// The nearest populated place of the point's country, or of all places when no country claims the point.
    func locality(near coordinate: Coordinate, point: SIMD3<Float>, country: Int?) -> Locality? {
        let found =
            country.map { tree.nearest(to: point, inCountry: $0, filter: .any) } ?? tree.nearestAnywhere(to: point)
        return found.map { locality(node: $0.node, from: coordinate) }
    }

    /// A point's region, locality and time zone at once, as the resolver's three answers give them, with one
    /// search of the places where they can share it (a point, with no accuracy disc, whose nearest place has a region,
    /// in a country without region polygons there, has that place's region) and one look at the region polygons.
    public func places(at coordinate: Coordinate, within radius: Double, countryCode: String?) -> PlaceAnswer {
        let zone = timeZone(at: coordinate, within: radius)
        guard radius <= 0, let countryCode, let country = countryNumbers[countryCode] else {
            return PlaceAnswer(
                region: region(at: coordinate, within: radius, countryCode: countryCode),
                locality: locality(near: coordinate, countryCode: countryCode),
                timeZone: zone
            )
        }
        let point = LocalityTree.unitVector(coordinate)
        if let polygon = regionPolygon(at: coordinate, countryCode: countryCode) {
            return PlaceAnswer(
                region: .decided(region(number: regionOfPolygon[polygon], source: .polygon)),
                locality: locality(near: coordinate, point: point, country: country),
                timeZone: zone
            )
        }
        guard let nearest = tree.nearest(to: point, inCountry: country, filter: .any) else {
            return PlaceAnswer(region: .decided(nil), locality: nil, timeZone: zone)
        }
        let number = tree.regions[nearest.node]
        let region =
            number != LocalityTree.noRegion
            ? PlaceDecision.decided(self.region(number: number, source: .nearestPlace))
            : self.region(at: coordinate, within: 0, countryCode: countryCode, country: country)
        return PlaceAnswer(region: region, locality: locality(node: nearest.node, from: coordinate), timeZone: zone)
    }

    /// The locality of a point whose nearest place is `node`: the town that place belongs to, unless the point lies
    /// beyond twice that town's reach and within the reach of the place's neighbour town, which is then the locality;
    /// with the place as the district when it is a quarter of the town given.
    ///
    /// Twice: a reach is a rough radius, and a point just beyond a small town's is still more likely that town's than
    /// a large neighbour's whose reach ends near it (Las Rozas beside Madrid); a point well beyond it, in the
    /// neighbour's reach, is the neighbour's (the old harbour of Reykjavík, nearer Seltjarnarnes' point).
    private func locality(node: Int, from coordinate: Coordinate) -> Locality {
        let town = Int(places.towns[node])
        var townDistance = coordinate.distance(to: places.coordinate(of: town))
        var chosen = town
        let neighbour = places.neighbours[node]
        if townDistance >= 2 * places.reach(of: town) && neighbour != PlaceTable.noPlace {
            let neighbourDistance = coordinate.distance(to: places.coordinate(of: Int(neighbour)))
            if neighbourDistance < places.reach(of: Int(neighbour)) {
                (chosen, townDistance) = (Int(neighbour), neighbourDistance)
            }
        }
        let district =
            chosen != node && town == chosen
            ? Locality.District(
                name: places.name(of: node),
                geonameId: Int(places.geonameIds[node]),
                distance: coordinate.distance(to: places.coordinate(of: node))
            ) : nil
        return Locality(
            name: places.name(of: chosen),
            geonameId: Int(places.geonameIds[chosen]),
            population: Int(places.populations[chosen]),
            coordinate: places.coordinate(of: chosen),
            distance: townDistance,
            district: district
        )
    }
}
