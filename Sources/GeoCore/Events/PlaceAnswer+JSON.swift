package import JSONCodec

extension JSONWriter {
    /// `{"code":"DE-BY","name":"Bavaria","localName":"Bayern","source":"polygon"}`, or null.
    mutating func region(_ region: PlaceRegion?) {
        guard let region else { return null() }
        beginObject()
        member("code", region.code)
        member("name", region.name)
        member("localName", region.localName)
        member("source", region.source.rawValue)
        endObject()
    }

    /// `{"name":…,"geonameId":…,"population":…,"distanceMeters":…}` (whole metres), with
    /// `"district":{"name":…,"geonameId":…,"distanceMeters":…}` when the locality has one, or null.
    mutating func locality(_ locality: Locality?) {
        guard let locality else { return null() }
        beginObject()
        member("name", locality.name)
        key("geonameId")
        number(Double(locality.geonameId))
        key("population")
        number(Double(locality.population))
        key("distanceMeters")
        number(locality.distance.rounded())
        if let district = locality.district {
            key("district")
            beginObject()
            member("name", district.name)
            key("geonameId")
            number(Double(district.geonameId))
            key("distanceMeters")
            number(district.distance.rounded())
            endObject()
        }
        endObject()
    }

    /// `{"timeZone":"America/Denver","utcOffsetSeconds":-25200}`, or null.
    mutating func zone(_ zone: TimeZoneChange.Zone?) {
        guard let zone else { return null() }
        beginObject()
        member("timeZone", zone.identifier)
        key("utcOffsetSeconds")
        if let offset = zone.utcOffsetSeconds { number(Double(offset)) } else { null() }
        endObject()
    }

    mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { null() }
    }
}

extension PlaceAnswer {
    /// One line of `geoworker geocode --places`, without its newline:
    /// `{"lat":…,"lon":…,"country":"US"|null,"region":{…}|null,"locality":{…}|null,"timeZone":"…"|null}`.
    ///
    /// The region and time zone as a point decides them (an undecided one, which only a fix with an accuracy
    /// radius can leave, is null).
    package func writeGeocodeLine(at coordinate: Coordinate, country: String?, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("lat")
        writer.number(coordinate.latitude)
        writer.key("lon")
        writer.number(coordinate.longitude)
        writer.key("country")
        writer.optionalString(country)
        writer.key("region")
        writer.region(region.value)
        writer.key("locality")
        writer.locality(locality)
        writer.key("timeZone")
        writer.optionalString(timeZone.value)
        writer.endObject()
    }
}
