import JSONCodec

/// The devices a map shows, bounded whatever the fleet: those whose last fix is in view, at most `limit` of
/// them (an even sample of the rest when more are in view, said in the answer), and no more than
/// `maximumBytes` of JSON.
///
/// Devices come from several registries (one per apply thread): the selection counts those in view over all
/// of them first, which sets the sample's stride, then writes the ones the sample takes.
public struct DeviceMapSelection: Sendable {
    public let view: MapView
    public let limit: Int
    public let maximumBytes: Int
    /// Devices with a fix in view, over every registry counted.
    public private(set) var inView = 0
    /// Devices written.
    public private(set) var shown = 0
    /// Whether the byte budget cut the answer short.
    public private(set) var truncated = false
    private var seen = 0
    private var writer = JSONWriter()

    public init(view: MapView, limit: Int, maximumBytes: Int = 4 << 20, from registries: [DeviceRegistry]) {
        precondition(limit > 0, "a map shows at least one device")
        self.view = view
        self.limit = limit
        self.maximumBytes = maximumBytes
        writer.beginArray()
        for registry in registries { count(registry) }
        for registry in registries { add(registry) }
    }

    /// Counts the registry's devices in view (the first pass, which sizes the sample).
    private mutating func count(_ registry: DeviceRegistry) {
        registry.forEachState(inView: view) { _, _ in inView += 1 }
    }

    /// Writes the registry's devices in view that the sample takes.
    private mutating func add(_ registry: DeviceRegistry) {
        // Every stride-th device in view: an even spread over the fleet rather than the first ones met.
        let stride = max(1, (inView + limit - 1) / limit)
        registry.forEachState(inView: view) { state, confirmedByFix in
            guard let fix = state.lastFix else { return }
            defer { seen += 1 }
            guard seen % stride == 0, shown < limit, !truncated else { return }
            guard writer.count < maximumBytes else {
                truncated = true
                return
            }
            writer.mapDevice(state, fix: fix, confirmedByFix: confirmedByFix)
            shown += 1
        }
    }

    /// `{"view": [w, s, e, n], "inView": n, "shown": n, "sampled": bool, "truncated": bool, "devices": [...]}`.
    public func json() -> [UInt8] {
        var devices = writer
        devices.endArray()
        var json = JSONWriter()
        json.beginObject()
        json.key("view")
        json.beginArray()
        for value in [view.west, view.south, view.east, view.north] { json.number(value) }
        json.endArray()
        json.key("inView")
        json.number(Double(inView))
        json.key("shown")
        json.number(Double(shown))
        json.key("sampled")
        json.bool(shown < inView && !truncated)
        json.key("truncated")
        json.bool(truncated)
        json.key("devices")
        json.raw(devices.takeOutput())
        json.endObject()
        return json.takeOutput()
    }
}

extension JSONWriter {
    fileprivate mutating func mapDevice(_ state: DeviceState, fix: Fix, confirmedByFix: Bool) {
        beginObject()
        member("deviceId", state.deviceId)
        key("lastFix")
        self.fix(fix)
        member("status", confirmedByFix ? "current" : "cached")
        if let country = state.country { member("country", country) }
        key("pins")
        beginArray()
        for tracked in state.pins { pinStatus(tracked, lastFix: fix) }
        endArray()
        endObject()
    }

}
