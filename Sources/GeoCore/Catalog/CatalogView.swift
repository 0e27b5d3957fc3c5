import JSONCodec

/// The catalog geofences in a map view, as `GET /geofences` answers (`Schemas/geofences.schema.json`): each whole, as
/// its record has it (polygons as GeoJSON) with its tags, at most `limit` of them, and how many are in view.
///
/// Pure: read from the catalog as it stands now.
public struct CatalogView: Sendable {
    /// The geofences shown, by id.
    public let geofences: [CatalogGeofence]
    /// How many geofences with the tag lie in the view (the shown ones and the others).
    public let inView: Int

    /// - Parameters:
    ///   - catalog: the catalog.
    ///   - view: the map view (a west past its east crosses the antimeridian).
    ///   - tag: only geofences with this tag; nil for all.
    ///   - limit: the most shown (the first ids).
    public init(_ catalog: GeofenceCatalog, view: MapView, tag: String?, limit: Int) {
        var found: [CatalogGeofence] = []
        let east = view.east < view.west ? view.east + 360 : view.east
        catalog.forEach(meeting: (view.west, view.south, east, view.north), at: .max - 1) { geofence, _ in
            if let tag, !geofence.tags.contains(tag) { return }
            found.append(geofence)
        }
        inView = found.count
        geofences = Array(found.sorted { $0.id < $1.id }.prefix(limit))
    }

    public func json() -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("geofences")
        json.beginArray()
        for geofence in geofences { json.pinDefinition(geofence.geofence, catalogTags: geofence.tags) }
        json.endArray()
        json.key("shown")
        json.number(Double(geofences.count))
        json.key("inView")
        json.number(Double(inView))
        json.endObject()
        return json.takeOutput()
    }
}
