import Foundation

/// One readable line for an event from the events topic, as an operator tailing the topic wants it:
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
        return "\(time)  \(pad(device, 10))  \(pad(type, 19))  \(describe(type: type, data: data))"
    }

    private static func describe(type: String, data: [String: Any]) -> String {
        switch type {
        case "geofence.entered", "geofence.exited":
            let pin = data["pin"] as? [String: Any] ?? [:]
            let id = pin["id"] as? String ?? "?"
            let title = (pin["title"] as? String).map { "\($0) (\(id))" } ?? id
            let distance = (data["distanceMeters"] as? Double).map { String(Int($0.rounded())) } ?? "?"
            let initial = data["initial"] as? Bool == true ? ", already inside when tracked" : ""
            return "\(title), \(distance) m from its centre\(initial)"
        case "country.changed":
            let from = data["from"] as? String ?? "(first fix)"
            let to = data["to"] as? String ?? "?"
            return "\(from) -> \(to) (\(data["countryName"] as? String ?? to))"
        case "language.suggested":
            let alternatives = data["alternatives"] as? [String] ?? []
            let also = alternatives.isEmpty ? "" : "; also \(alternatives.joined(separator: ", "))"
            return "\(data["language"] as? String ?? "?") for \(data["countryCode"] as? String ?? "?") "
                + "(\(data["basis"] as? String ?? "?")\(also))"
        default:
            return String(describing: data)
        }
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
