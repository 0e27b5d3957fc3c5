/// Numbers one message's events, which makes their ids.
struct EventNumbering {
    let origin: MessageOrigin
    let deviceId: String
    let time: Int64
    private var count = 0

    init(origin: MessageOrigin, deviceId: String, time: Int64) {
        self.origin = origin
        self.deviceId = deviceId
        self.time = time
    }

    mutating func next(_ payload: DeviceEvent.Payload) -> DeviceEvent {
        defer { count += 1 }
        return DeviceEvent(id: origin.eventId(count), deviceId: deviceId, time: time, payload: payload)
    }
}
