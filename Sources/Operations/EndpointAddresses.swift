public import AddressLookups
package import Addresses
import Foundation
import GeoCore
package import JSONCodec

/// The street addresses the device endpoints show, when an address provider is set (``AddressService``): the card's
/// (`address` of its last fix) and each nearby device's.
///
/// Added in the endpoint's task, after the loop answered: the loop never waits for the provider.
public struct EndpointAddresses: Sendable {
    public let service: AddressService

    public init(service: AddressService) {
        self.service = service
    }

    /// `card` (a device-status JSON object) with `address` added; unchanged when it has no last fix.
    func adding(to card: [UInt8]) async -> [UInt8] {
        guard let point = Self.lastFix(of: card), card.last == UInt8(ascii: "}") else { return card }
        let status = await service.address(at: point)
        var json = JSONWriter(output: Array(card.dropLast()))
        json.fixed(Array(#","address":"#.utf8))
        Self.write(status, to: &json)
        json.endObject()
        return json.takeOutput()
    }

    /// The nearby answer's JSON, each device with the `address` of its last fix: asked all at once, so that the
    /// answer waits at most `cardWait` in all (devices in one bucket share one request).
    func adding(to nearby: DeviceNearbySelection) async -> [UInt8] {
        let service = service
        let statuses = await withTaskGroup(of: (Int, AddressStatus).self) { group in
            for (index, device) in nearby.devices.enumerated() {
                guard let point = device.state.lastFix?.coordinate else { continue }
                group.addTask { (index, await service.address(at: point)) }
            }
            return await group.reduce(into: [Int: AddressStatus]()) { $0[$1.0] = $1.1 }
        }
        return nearby.json(addingTo: { index, json in
            guard let status = statuses[index] else { return }
            json.key("address")
            Self.write(status, to: &json)
        })
    }

    /// The card's `lastFix` point.
    private static func lastFix(of card: [UInt8]) -> Coordinate? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(card)) as? [String: Any],
            let fix = object["lastFix"] as? [String: Any],
            let latitude = (fix["lat"] as? NSNumber)?.doubleValue,
            let longitude = (fix["lon"] as? NSNumber)?.doubleValue
        else { return nil }
        return Coordinate(latitude: latitude, longitude: longitude)
    }

    /// The card's `address` object (Schemas/common.schema.json, `cardAddress`).
    package static func write(_ status: AddressStatus, to json: inout JSONWriter) {
        json.beginObject()
        switch status {
        case .current(let address):
            json.member("status", "current")
            write(address, to: &json)
        case .cached(let address, let age, let stale):
            json.member("status", "cached")
            json.key("ageSeconds")
            json.number(Double(age))
            json.key("stale")
            json.bool(stale)
            write(address, to: &json)
        case .pending:
            json.member("status", "pending")
        case .unavailable(let reason):
            json.member("status", "unavailable")
            json.member("reason", reason)
        }
        json.endObject()
    }

    /// The address's parts as members (only those the provider gave); `found: false` when it knows none there.
    private static func write(_ address: StreetAddress?, to json: inout JSONWriter) {
        json.key("found")
        json.bool(address != nil)
        guard let address else { return }
        json.member("label", address.label)
        let parts: [(StaticString, String?)] = [
            ("name", address.name), ("houseNumber", address.houseNumber), ("road", address.road),
            ("suburb", address.suburb), ("city", address.city), ("postcode", address.postcode),
            ("country", address.country), ("countryCode", address.countryCode),
        ]
        for (key, value) in parts {
            if let value { json.member(key, value) }
        }
    }
}
