import GeoCore

// The one case a test expects, as an optional, so that `try #require` states the expectation and stops the test
// with the value's description when it does not hold.

extension DeviceCommand {
    var trackedPin: (deviceId: String, pin: Pin)? {
        if case .track(let deviceId, let pin) = self { return (deviceId, pin) }
        return nil
    }
}

extension PinShape {
    var polygon: PolygonShape? {
        if case .polygon(let shape) = self { return shape }
        return nil
    }
}

extension DeviceTracker.Outcome.Kind {
    var rejection: String? {
        if case .rejected(let reason) = self { return reason }
        return nil
    }
}

extension InputMessage {
    var decodedPosition: Position? {
        if case .position(let position) = self { return position }
        return nil
    }
}
