import JSONCodec

/// The answers of a group's instances to one question, merged into the answer the whole fleet gives: the nearby
/// answer nearest first with the limit applied once, the map with its counts summed; and each instance named with
/// whether it answered, so that an answer with a part missing says so instead of failing whole.
enum GroupMerge {
    /// One instance's part of a gathered answer.
    struct Part {
        let instance: String
        let address: String
        /// The input partitions it holds, by the group's directory.
        let partitions: [Int32]
        /// Its JSON answer; nil when it did not answer (``problem`` says why).
        let answer: [UInt8]?
        let problem: String?
    }

    /// The nearby answers merged: the devices of every part, each once (a device two instances hold for a moment, as
    /// partitions move, from the instance that holds its partition: `holds`), nearest first (equal distances by
    /// device id), at most `limit`.
    ///
    /// - Parameters:
    ///   - parts: every instance's part, this instance's first.
    ///   - limit: the most devices the merged answer has.
    ///   - moving: the input partitions nobody holds now.
    ///   - holds: whether a part's instance holds a device (its partition), for a device two parts both have.
    /// - Returns: the merged JSON (`Schemas/device-nearby.schema.json`).
    static func nearby(
        _ parts: [Part],
        limit: Int,
        moving: [Int32],
        holds: (_ instance: String, _ deviceId: String) -> Bool
    ) -> [UInt8] {
        var head: [String: [UInt8]] = [:]
        var devices: [(id: String, distance: Double, text: [UInt8], instance: String)] = []
        for part in parts {
            guard let answer = part.answer, let members = RawJSON.members(answer) else { continue }
            if head.isEmpty { head = members }
            for text in members["devices"].flatMap(RawJSON.elements) ?? [] {
                guard let device = RawJSON.members(text), let id = RawJSON.string(device["deviceId"]) else { continue }
                devices.append((id, RawJSON.number(device["distanceMeters"]) ?? .infinity, text, part.instance))
            }
        }
        var chosen: [String: Int] = [:]
        for (index, device) in devices.enumerated() {
            guard let earlier = chosen[device.id] else {
                chosen[device.id] = index
                continue
            }
            if !holds(devices[earlier].instance, device.id) && holds(device.instance, device.id) {
                chosen[device.id] = index
            }
        }
        let merged = chosen.values.map { devices[$0] }.sorted { ($0.distance, $0.id) < ($1.distance, $1.id) }
            .prefix(limit)
        var json = JSONWriter()
        json.beginObject()
        if let center = head["center"] {
            json.key("center")
            json.raw(center)
        }
        if let radius = head["radiusMeters"] {
            json.key("radiusMeters")
            json.raw(radius)
        }
        json.key("devices")
        json.beginArray()
        for device in merged { json.raw(device.text) }
        json.endArray()
        writeGroup(parts, moving: moving, into: &json)
        json.endObject()
        return json.takeOutput()
    }

    /// The map answers merged: the devices of every part (evenly sampled down to `limit` when there are more), their
    /// counts summed.
    ///
    /// - Returns: the merged JSON (`Schemas/map-devices.schema.json`).
    static func map(_ parts: [Part], limit: Int, moving: [Int32]) -> [UInt8] {
        var view: [UInt8]?
        var inView = 0.0
        var sampled = false
        var truncated = false
        var devices: [[UInt8]] = []
        for part in parts {
            guard let answer = part.answer, let members = RawJSON.members(answer) else { continue }
            view = view ?? members["view"]
            inView += RawJSON.number(members["inView"]) ?? 0
            sampled = sampled || members["sampled"] == Array("true".utf8)
            truncated = truncated || members["truncated"] == Array("true".utf8)
            devices += members["devices"].flatMap(RawJSON.elements) ?? []
        }
        if devices.count > limit {
            // Every instance sent up to the limit: an even sample of them all, so that no instance's share of the
            // map is left out.
            let stride = Double(devices.count) / Double(limit)
            devices = (0..<limit).map { devices[Int(Double($0) * stride)] }
            sampled = true
        }
        var json = JSONWriter()
        json.beginObject()
        if let view {
            json.key("view")
            json.raw(view)
        }
        json.key("inView")
        json.number(inView)
        json.key("shown")
        json.number(Double(devices.count))
        json.key("sampled")
        json.bool(sampled)
        json.key("truncated")
        json.bool(truncated)
        json.key("devices")
        json.beginArray()
        for device in devices { json.raw(device) }
        json.endArray()
        writeGroup(parts, moving: moving, into: &json)
        json.endObject()
        return json.takeOutput()
    }

    /// `"complete": bool, "movingPartitions": [...], "instances": [{"instance", "address", "partitions",
    /// "answered", "error"?}]`: which instances the answer covers.
    static func writeGroup(_ parts: [Part], moving: [Int32], into json: inout JSONWriter) {
        json.key("complete")
        json.bool(moving.isEmpty && parts.allSatisfy { $0.answer != nil })
        json.partitions("movingPartitions", moving)
        json.key("instances")
        json.beginArray()
        for part in parts {
            json.beginObject()
            json.instance(part.instance, at: part.address, holding: part.partitions)
            json.key("answered")
            json.bool(part.answer != nil)
            if let problem = part.problem { json.member("error", problem) }
            json.endObject()
        }
        json.endArray()
    }
}

extension JSONWriter {
    /// `"key": [partition, ...]`.
    mutating func partitions(_ key: StaticString, _ partitions: [Int32]) {
        self.key(key)
        beginArray()
        for partition in partitions { number(Double(partition)) }
        endArray()
    }

    /// An instance's members: `"instance", "address", "partitions"`.
    mutating func instance(_ instance: String, at address: String, holding partitions: [Int32]) {
        member("instance", instance)
        member("address", address)
        self.partitions("partitions", partitions)
    }
}
