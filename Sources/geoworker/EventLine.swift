import Foundation

/// One readable line for an event from the events topic, as an operator tailing the topic wants it.
///
/// For example:
///
///     2026-11-21T08:37:00Z  truck-17  country.changed     FR -> CH (Switzerland)
///
/// Not on the hot path (tail and demo only), so it reads the CloudEvent with Foundation.
enum EventLine {
    /// The line for a CloudEvents JSON value, or a line saying what could not be read.
    static func format(_ value: [UInt8]) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any],
            let type = object["type"] as? String
        else { return "(not a geoworker event: \(String(decoding: value.prefix(120), as: UTF8.self)))" }
        let time = object["time"] as? String ?? "-"
        let device = object["subject"] as? String ?? "-"
        let data = object["data"] as? [String: Any] ?? [:]
        return "\(time)  \(pad(device, 10))  \(pad(type, 20))  \(describe(type: type, data: data))"
    }

    private static func describe(type: String, data: [String: Any]) -> String {
        switch type {
        case "geofence.entered", "geofence.exited":
            let pin = data["pin"] as? [String: Any] ?? [:]
            let distance = metres(data["distanceMeters"])
            let from = pin["kind"] as? String == "polygon" ? "its edge" : "its centre"
            let initial = data["initial"] as? Bool == true ? ", already inside when tracked" : ""
            return "\(name(of: pin)), \(distance) from \(from)\(initial)"
        case "geofence.dwelled":
            let since = (data["insideSince"] as? String).map(clock) ?? "?"
            let seconds = (data["dwellSeconds"] as? Double).map(duration) ?? "?"
            return "\(name(of: data["pin"])), inside for \(seconds) (since \(since))"
        case "geofence.crossed":
            let from = data["from"] as? [String: Any] ?? [:]
            let to = data["to"] as? [String: Any] ?? [:]
            let start = (from["timestamp"] as? String).map(clock) ?? "?"
            let end = (to["timestamp"] as? String).map(clock) ?? "?"
            return "\(name(of: data["pin"])), passed through between the fixes of \(start) and \(end)"
        case "geofence.approaching":
            let eta = (data["etaSeconds"] as? Double).map(duration) ?? "?"
            let speed = (data["speedMetersPerSecond"] as? Double).map { String(Int($0.rounded())) } ?? "?"
            return "\(name(of: data["pin"])), ETA \(eta), \(metres(data["distanceMeters"])) to its edge at "
                + "\(speed) m/s (\(data["basis"] as? String ?? "?"))"
        case "country.changed":
            let from = data["from"] as? String ?? "(first fix)"
            let to = data["to"] as? String ?? "?"
            let near = (data["locality"] as? [String: Any]).map { ", near \(locality($0))" } ?? ""
            return "\(from) -> \(to) (\(data["countryName"] as? String ?? to))\(near)"
        case "region.changed":
            return "\(region(data["from"], first: "(first fix)")) -> \(region(data["to"], first: "no region"))"
        case "timezone.changed":
            return "\(zone(data["from"]) ?? "(first fix)") -> \(zone(data["to"]) ?? "?")"
        case "language.suggested":
            let alternatives = data["alternatives"] as? [String] ?? []
            let also = alternatives.isEmpty ? "" : "; also \(alternatives.joined(separator: ", "))"
            return "\(data["language"] as? String ?? "?") for \(data["countryCode"] as? String ?? "?") "
                + "(\(data["basis"] as? String ?? "?")\(also))"
        default:
            return String(describing: data)
        }
    }

    /// "US-TX Texas", or `none` for null.
    private static func region(_ value: Any?, first none: String) -> String {
        guard let region = value as? [String: Any] else { return none }
        return "\(region["code"] as? String ?? "?") \(region["name"] as? String ?? "")"
    }

    /// "America/Denver (UTC-07:00)".
    private static func zone(_ value: Any?) -> String? {
        guard let zone = value as? [String: Any], let name = zone["timeZone"] as? String else { return nil }
        guard let offset = zone["utcOffsetSeconds"] as? Int else { return name }
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        return
            "\(name) (UTC\(sign)\(minutes / 60 < 10 ? "0" : "")\(minutes / 60):\(minutes % 60 < 10 ? "0" : "")\(minutes % 60))"
    }

    /// "Kehl (61 m)", or "Berlin (Kreuzberg, 128 m)" with the district nearest the point.
    private static func locality(_ locality: [String: Any]) -> String {
        let name = locality["name"] as? String ?? "?"
        guard let district = locality["district"] as? [String: Any] else {
            return "\(name) (\(metres(locality["distanceMeters"])))"
        }
        return "\(name) (\(district["name"] as? String ?? "?"), \(metres(district["distanceMeters"])))"
    }

    /// "Title (id)", or the id alone.
    private static func name(of pin: Any?) -> String {
        let pin = pin as? [String: Any] ?? [:]
        let id = pin["id"] as? String ?? "?"
        return (pin["title"] as? String).map { "\($0) (\(id))" } ?? id
    }

    private static func metres(_ value: Any?) -> String {
        guard let metres = value as? Double else { return "? m" }
        return metres >= 10_000 ? "\(Int((metres / 1000).rounded())) km" : "\(Int(metres.rounded())) m"
    }

    /// "3 min 6 s", "45 s".
    private static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60) min\(whole % 60 == 0 ? "" : " \(whole % 60) s")" : "\(whole) s"
    }

    /// The time of day of an RFC 3339 timestamp: "08:06:00".
    private static func clock(_ timestamp: String) -> String {
        guard let t = timestamp.firstIndex(of: "T") else { return timestamp }
        return String(timestamp[timestamp.index(after: t)...].prefix(8))
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
