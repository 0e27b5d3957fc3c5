public import Countries
import GeoCore
import IndexFile

/// Compiles the places' sources into the index ``PlaceIndex`` reads.
///
/// The sources are as `tools/places/prepare_places.py` writes them. Built twice from the same sources, the index
/// has the same bytes.
public enum PlaceIndexBuilder {
    /// The sources of one index.
    public struct Sources {
        /// `places.tsv`, one place a line.
        ///
        /// Its fields: geonameid, name, latitude, longitude, country, region (ISO 3166-2 or empty), population, time
        /// zone, and optionally the geonameid of its town (its own for a town) and of its neighbour town (or empty).
        /// A place without a town column is a town of its own without a neighbour.
        public var places: String
        /// `regions.tsv`: code (ISO 3166-2, or GeoNames' `CC.XX`), name, local name, GeoNames admin-1 code; one
        /// region a line.
        public var regions: String
        /// The time-zone polygons, their codes IANA names.
        public var timeZones: [CountryBoundary]
        /// The region polygons, their codes ISO 3166-2 codes (names are taken from `regions`).
        public var regionBoundaries: [CountryBoundary]
        /// What the sources are, for the index's readers (versions and licences).
        public var description: String

        public init(
            places: String,
            regions: String,
            timeZones: [CountryBoundary],
            regionBoundaries: [CountryBoundary],
            description: String
        ) {
            self.places = places
            self.regions = regions
            self.timeZones = timeZones
            self.regionBoundaries = regionBoundaries
            self.description = description
        }
    }

    /// One line of `places.tsv`.
    struct Place {
        var geonameId: UInt32
        var name: String
        var latitude: Int32
        var longitude: Int32
        var country: String
        var region: String
        var population: UInt32
        /// The geonameid of its town: its own for a town.
        var town: UInt32
        var neighbour: UInt32?
    }

    public static func build(_ sources: Sources) throws(PlaceIndexError) -> [UInt8] {
        let regions = try parseRegions(sources.regions)
        let regionNumbers = Dictionary(
            regions.enumerated().map { ($1.code, UInt16($0)) },
            uniquingKeysWith: { first, _ in first }
        )
        let regionNames = Dictionary(regions.map { ($0.code, $0.name) }, uniquingKeysWith: { first, _ in first })
        var places = try parsePlaces(sources.places)
        places.sort { ($0.country, $0.geonameId) < ($1.country, $1.geonameId) }
        let countries = Array(Set(places.map(\.country))).sorted()

        var writer = IndexFileWriter()
        writer.header(magic: PlaceIndexFormat.magic, version: PlaceIndexFormat.version)
        try writer.lengthAndText(sources.description, lengthAs: UInt32.self)
        writer.section(try polygons(sources.timeZones, of: "time-zone"))
        let regionBoundaries = sources.regionBoundaries.map { boundary in
            CountryBoundary(
                code: boundary.code,
                name: regionNames[boundary.code] ?? boundary.name,
                rings: boundary.rings
            )
        }
        writer.section(try polygons(regionBoundaries, of: "region"))
        writer.u32(UInt32(regions.count))
        for region in regions {
            try writer.lengthAndText(region.code, lengthAs: UInt8.self)
            try writer.lengthAndText(region.name, lengthAs: UInt16.self)
            try writer.lengthAndText(region.localName, lengthAs: UInt16.self)
        }

        // Each country's places in a range of their own, laid out as its k-d tree.
        var nodes = places.enumerated().map { number, place in
            let point = LocalityTree.unitVector(
                Coordinate(
                    latitude: Double(place.latitude) / PlaceIndexFormat.degreeUnits,
                    longitude: Double(place.longitude) / PlaceIndexFormat.degreeUnits
                )!  // in range: parsePlaces checked
            )
            return LocalityTree.Node(x: point.x, y: point.y, z: point.z, place: UInt32(number))
        }
        var axes = [UInt8](repeating: 0, count: places.count)
        writer.u32(UInt32(countries.count))
        var start = 0
        for country in countries {
            var end = start
            while end < places.count && places[end].country == country { end += 1 }
            LocalityTree.layOut(&nodes, axes: &axes, range: start..<end)
            try writer.lengthAndText(country, lengthAs: UInt8.self)
            writer.u32(UInt32(start))
            writer.u32(UInt32(end - start))
            start = end
        }
        let ordered = nodes.map { places[Int($0.place)] }
        writer.u32(UInt32(ordered.count))
        writer.array(ordered.map { $0.geonameId })
        writer.array(ordered.map { $0.latitude })
        writer.array(ordered.map { $0.longitude })
        writer.array(ordered.map { $0.population })
        writer.array(ordered.map { regionNumbers[$0.region] ?? LocalityTree.noRegion })
        writer.array(axes)
        var names: [UInt8] = []
        var ends: [UInt32] = []
        for place in ordered {
            names += place.name.utf8
            ends.append(UInt32(names.count))
        }
        writer.array(ends)
        let numbers = Dictionary(
            ordered.enumerated().map { ($1.geonameId, UInt32($0)) },
            uniquingKeysWith: { first, _ in first }
        )
        var towns: [UInt32] = []
        for place in ordered {
            guard let town = numbers[place.town], ordered[Int(town)].town == place.town else {
                throw PlaceIndexError("place \(place.geonameId)'s town \(place.town) is not a town of places.tsv")
            }
            towns.append(town)
        }
        writer.array(towns)
        writer.array(ordered.map { place in place.neighbour.flatMap { numbers[$0] } ?? PlaceTable.noPlace })
        let anywhere = LocalityTree.layOutAnywhere(nodes)
        writer.array(anywhere.order)
        writer.array(anywhere.axes)
        writer.u32(UInt32(names.count))
        writer.raw(names)
        return writer.bytes
    }

    private static func polygons(_ boundaries: [CountryBoundary], of kind: String) throws(PlaceIndexError) -> [UInt8] {
        do {
            return try CountryIndexBuilder.build(boundaries)
        } catch {
            throw PlaceIndexError("the \(kind) polygons: \(error.description)")
        }
    }

    static func parseRegions(_ text: String) throws(PlaceIndexError) -> [PlaceIndex.Region] {
        var regions: [PlaceIndex.Region] = []
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 3, fields[0].contains("-") || fields[0].contains("."), !fields[1].isEmpty,
                !fields[2].isEmpty
            else {
                throw PlaceIndexError("regions.tsv line \(number + 1) is not code, name, local name, admin-1 code")
            }
            regions.append(
                PlaceIndex.Region(code: String(fields[0]), name: String(fields[1]), localName: String(fields[2]))
            )
        }
        guard regions.count < Int(LocalityTree.noRegion) else { throw PlaceIndexError("too many regions") }
        return regions.sorted { $0.code < $1.code }
    }

    static func parsePlaces(_ text: String) throws(PlaceIndexError) -> [Place] {
        var places: [Place] = []
        for (number, line) in text.split(separator: "\n").enumerated() {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count >= 7, let id = UInt32(fields[0]), let latitude = Double(fields[2]),
                let longitude = Double(fields[3]), (-90...90).contains(latitude), (-180...180).contains(longitude),
                fields[4].utf8.count == 2, let population = UInt32(fields[6]),
                let town = fields.count > 8 ? UInt32(fields[8]) : id,
                fields.count <= 9 || fields[9].isEmpty || UInt32(fields[9]) != nil
            else { throw PlaceIndexError("places.tsv line \(number + 1) is not a place (\(line.prefix(80)))") }
            places.append(
                Place(
                    geonameId: id,
                    name: String(fields[1]),
                    latitude: Int32((latitude * PlaceIndexFormat.degreeUnits).rounded()),
                    longitude: Int32((longitude * PlaceIndexFormat.degreeUnits).rounded()),
                    country: String(fields[4]),
                    region: String(fields[5]),
                    population: population,
                    town: town,
                    neighbour: fields.count > 9 ? UInt32(fields[9]) : nil
                )
            )
        }
        return places
    }
}

extension IndexFileWriter {
    /// ``string(_:lengthAs:)``, failing as the builder fails.
    fileprivate mutating func lengthAndText<Length: FixedWidthInteger>(
        _ text: String,
        lengthAs: Length.Type
    ) throws(PlaceIndexError) {
        do { try string(text, lengthAs: lengthAs) } catch { throw PlaceIndexError(error.description) }
    }
}
