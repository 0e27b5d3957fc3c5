import JSONCodec

/// How events and cards write pins, positions and polygons.
extension JSONWriter {
    /// A pin as events carry it.
    ///
    /// A circle whole; a polygon by its bounding box (`bbox`, west, south, east, north, as GeoJSON writes it) and
    /// vertex count, so that events stay small whatever the shape. A geofence of the fleet's catalog says so
    /// (`"source":"catalog"`) and gives its `tags`; a tracked pin has neither member.
    mutating func eventPin(_ pin: Pin, catalogTags: [String]? = nil) {
        beginObject()
        member("id", pin.id)
        switch pin.shape {
        case .circle(let center, let radius):
            member("kind", "circle")
            circle(center, radius)
        case .polygon(let polygon):
            member("kind", "polygon")
            key("bbox")
            beginArray()
            for value in [polygon.bounds.west, polygon.bounds.south, polygon.bounds.east, polygon.bounds.north] {
                number(value)
            }
            endArray()
            key("vertices")
            number(Double(polygon.vertexCount))
        }
        pinDetails(pin)
        if let catalogTags {
            member("source", "catalog")
            tags(catalogTags)
        }
        endObject()
    }

    /// The `pin` and `position` members most geofence events start with.
    mutating func pinAndPosition(_ pin: Pin, _ position: Fix, catalogTags: [String]?) {
        key("pin")
        eventPin(pin, catalogTags: catalogTags)
        key("position")
        fix(position)
    }

    /// A pin as a `track` command carries it, polygons whole (GeoJSON); a catalog geofence as its record has it, with
    /// its `tags`.
    mutating func pinDefinition(_ pin: Pin, catalogTags: [String]? = nil) {
        beginObject()
        member("id", pin.id)
        switch pin.shape {
        case .circle(let center, let radius):
            circle(center, radius)
        case .polygon(let polygon):
            key("shape")
            geoJSON(polygon)
        }
        pinDetails(pin)
        if let catalogTags { tags(catalogTags) }
        endObject()
    }

    /// A catalog geofence's `tags` member.
    mutating func tags(_ tags: [String]) {
        key("tags")
        beginArray()
        for tag in tags { string(tag) }
        endArray()
    }

    /// A circle's `lat`, `lon` and `radius` members.
    private mutating func circle(_ center: Coordinate, _ radius: Double) {
        key("lat")
        number(center.latitude)
        key("lon")
        number(center.longitude)
        key("radius")
        number(radius)
    }

    private mutating func pinDetails(_ pin: Pin) {
        if let title = pin.title { member("title", title) }
        if let metadata = pin.metadataJSON {
            key("metadata")
            raw(metadata)
        }
        if let dwell = pin.dwellSeconds {
            key("dwellSeconds")
            number(Double(dwell))
        }
        if let approach = pin.approachSeconds {
            key("approachSeconds")
            number(Double(approach))
        }
    }

    /// The shape as a GeoJSON Polygon or MultiPolygon geometry.
    mutating func geoJSON(_ polygon: PolygonShape) {
        beginObject()
        member("type", polygon.isMulti ? "MultiPolygon" : "Polygon")
        key("coordinates")
        let polygons = polygon.coordinates
        if polygon.isMulti { beginArray() }
        for rings in polygons {
            beginArray()
            for ring in rings {
                beginArray()
                for position in ring {
                    beginArray()
                    number(position[0])
                    number(position[1])
                    endArray()
                }
                endArray()
            }
            endArray()
        }
        if polygon.isMulti { endArray() }
        endObject()
    }

    mutating func fix(_ fix: Fix) {
        beginObject()
        key("lat")
        number(fix.coordinate.latitude)
        key("lon")
        number(fix.coordinate.longitude)
        key("timestamp")
        timestamp(fix.timestamp)
        if let accuracy = fix.accuracy {
            key("accuracy")
            number(accuracy)
        }
        endObject()
    }
}
