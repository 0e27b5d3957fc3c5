extension DeviceStateEncoding {
    /// Appends a state's parts in the encoding's binary form: what ``encode(_:)`` writes, in the order its version says.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func pin(_ tracked: TrackedPin) {
            let pin = tracked.pin
            string(pin.id)
            var flags: UInt8 = 0
            if pin.title != nil { flags |= PinFlag.title }
            if pin.metadataJSON != nil { flags |= PinFlag.metadata }
            if case .polygon(let polygon) = pin.shape {
                flags |= PinFlag.polygon
                if polygon.isMulti { flags |= PinFlag.multiPolygon }
            }
            if pin.dwellSeconds != nil { flags |= PinFlag.dwell }
            if pin.approachSeconds != nil { flags |= PinFlag.approach }
            if tracked.since != nil { flags |= PinFlag.since }
            byte(flags)
            byte(
                tracked.membership.rawValue | (tracked.dwellAnnounced ? PinState.dwellAnnounced : 0)
                    | (tracked.approachAnnounced ? PinState.approachAnnounced : 0)
                    | (tracked.approachArrival != nil ? PinState.approachArrival : 0)
            )
            switch pin.shape {
            case .circle(let center, let radius):
                double(center.latitude)
                double(center.longitude)
                double(radius)
            case .polygon(let polygon):
                varint(UInt64(polygon.polygonEnds.count))
                var ring = 0
                for polygonEnd in polygon.polygonEnds {
                    varint(UInt64(Int(polygonEnd) - ring))
                    while ring < Int(polygonEnd) {
                        let range = polygon.ringRange(ring)
                        varint(UInt64(range.count))
                        for index in range {
                            let vertex = polygon.vertex(index)
                            double(vertex.longitude)
                            double(vertex.latitude)
                        }
                        ring += 1
                    }
                }
            }
            if let dwell = pin.dwellSeconds { varint(UInt64(dwell)) }
            if let approach = pin.approachSeconds { varint(UInt64(approach)) }
            if let since = tracked.since { varint(zigzag(since)) }
            if let arrival = tracked.approachArrival { varint(zigzag(arrival)) }
            if let title = pin.title { string(title) }
            if let metadata = pin.metadataJSON { string(metadata) }
        }

        mutating func places(_ places: DevicePlaces) {
            var flags: UInt8 = 0
            if places.region != nil { flags |= PlacesFlag.region }
            if places.regionCandidate != nil { flags |= PlacesFlag.regionCandidate }
            if places.timeZone != nil { flags |= PlacesFlag.timeZone }
            if places.timeZoneCandidate != nil { flags |= PlacesFlag.timeZoneCandidate }
            byte(flags)
            if let region = places.region {
                string(region.code)
                string(region.name)
                byte(region.source.encodedByte)
                string(region.localName == region.name ? "" : region.localName)
            }
            if let candidate = places.regionCandidate { string(candidate) }
            varint(UInt64(max(0, places.regionCandidateFixes)))
            if let zone = places.timeZone { string(zone) }
            if let candidate = places.timeZoneCandidate { string(candidate) }
            varint(UInt64(max(0, places.timeZoneCandidateFixes)))
        }

        mutating func catalog(_ catalog: CatalogVisits) {
            varint(UInt64(catalog.subscriptions.count))
            for tag in catalog.subscriptions { string(tag) }
            byte(catalog.decidedAt == nil ? 0 : 1)
            if let decidedAt = catalog.decidedAt { varint(zigzag(decidedAt)) }
            varint(UInt64(catalog.visits.count))
            // By id: one encoding per state, whatever order the dictionary holds them in.
            for (id, visit) in catalog.visits.sorted(by: { $0.key < $1.key }) {
                string(id)
                byte(
                    visit.membership.rawValue | (visit.dwellAnnounced ? PinState.dwellAnnounced : 0)
                        | (visit.approachAnnounced ? PinState.approachAnnounced : 0)
                        | (visit.approachArrival != nil ? PinState.approachArrival : 0)
                        | (visit.since != nil ? VisitState.since : 0)
                )
                if let since = visit.since { varint(zigzag(since)) }
                if let arrival = visit.approachArrival { varint(zigzag(arrival)) }
            }
        }

        mutating func byte(_ value: UInt8) { bytes.append(value) }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func double(_ value: Double) {
            var bits = value.bitPattern
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        }
    }
}
