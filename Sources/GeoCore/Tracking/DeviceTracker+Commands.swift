/// The tracker's commands: a pin tracked (with its initial-state check) or untracked, catalog tags subscribed to or
/// left; and the event types the configuration turns off, dropped from what positions and commands append.
extension DeviceTracker {
    /// Applies a command to its device's state, appending the events it causes to `events`.
    public func apply(
        _ command: DeviceCommand,
        origin: MessageOrigin,
        to state: inout DeviceState,
        events: inout [DeviceEvent]
    ) -> Outcome {
        let first = events.count
        defer { dropDisabledEvents(from: first, in: &events) }
        return applyCommand(command, origin: origin, to: &state, events: &events)
    }

    /// Removes the events of types the configuration turns off from those appended since `first` (they were
    /// numbered all the same, so the others keep their ids whichever types are off).
    func dropDisabledEvents(from first: Int, in events: inout [DeviceEvent]) {
        guard !configuration.disabledEventTypes.isEmpty, events.count > first else { return }
        let kept = events[first...].filter { !configuration.disabledEventTypes.contains($0.type) }
        events.replaceSubrange(first..., with: kept)
    }

    private func applyCommand(
        _ command: DeviceCommand,
        origin: MessageOrigin,
        to state: inout DeviceState,
        events: inout [DeviceEvent]
    ) -> Outcome {
        switch command {
        case .track(_, let pin):
            var tracked = TrackedPin(pin: pin)
            let existing = state.pins.firstIndex { $0.pin.id == pin.id }
            if let existing, state.pins[existing].pin == pin { return .applied }  // a retried command: nothing changes
            if existing == nil && state.pins.count >= configuration.maxPinsPerDevice {
                let reason = "device '\(state.deviceId)' already tracks \(state.pins.count) pins, the most allowed"
                return Outcome(kind: .rejected(reason))
            }
            if let refusal = vertexLimitRefusal(pin, replacing: existing, in: state) {
                return Outcome(kind: .rejected(refusal))
            }
            if let existing { state.pins.remove(at: existing) }
            // The initial-state check, from the last known position.
            if let context = state.lastFix.flatMap(decidingContext) {
                var numbering = EventNumbering(origin: origin, deviceId: state.deviceId, time: origin.timestamp)
                tracked.evaluate(geofences, context, numbering: &numbering, events: &events)
            }
            state.pins.append(tracked)
            return Outcome(kind: .applied)
        case .untrack(_, let pinId):
            // Refused, not ignored: a mistyped id would otherwise leave the pin it meant announcing events.
            guard state.pins.contains(where: { $0.pin.id == pinId }) else {
                let pins = state.pins.prefix(5).map { "'\($0.pin.id)'" }.joined(separator: ", ")
                return Outcome(
                    kind: .rejected(
                        "device '\(state.deviceId)' has no pin '\(pinId)' to untrack (never tracked, or untracked "
                            + "already); \(pins.isEmpty ? "it has no pins" : "its pins: \(pins)\(state.pins.count > 5 ? ", ..." : "")")"
                    )
                )
            }
            state.pins.removeAll { $0.pin.id == pinId }
            return Outcome(kind: .applied)
        case .untrackAll:
            state.pins.removeAll()
            return Outcome(kind: .applied)
        case .subscribe(_, let tags):
            var visits = state.catalog ?? CatalogVisits()
            var numbering = EventNumbering(origin: origin, deviceId: state.deviceId, time: origin.timestamp)
            let notDecided = catalogTracking.subscribe(
                to: tags,
                &visits,
                lastFix: state.lastFix.flatMap(decidingContext),
                at: origin.timestamp,
                catalog: catalog?.geofences ?? GeofenceCatalog(),
                defaultTags: configuration.catalogTags,
                numbering: &numbering,
                events: &events
            )
            state.catalog = visits
            return Outcome(kind: .applied, catalogGeofencesNotDecided: notDecided)
        case .unsubscribe(_, let tags):
            state.catalog?.unsubscribe(from: tags)
            // Back to a device without catalog state when nothing is left of it (no event, as for `untrack`).
            if let visits = state.catalog, visits.subscriptions.isEmpty, configuration.catalogTags.isEmpty {
                state.catalog = nil
            }
            return Outcome(kind: .applied)
        case .setLimits(_, let speedLimit, let silentAfterSeconds):
            // An episode under way is judged against the new limit at the next fix.
            state.activity.speedLimit = speedLimit
            state.activity.silentAfterSeconds = silentAfterSeconds
            if speedWatch.limit(of: state.activity) == nil { state.activity.speeding = nil }
            return Outcome(kind: .applied)
        }
    }

    /// The last fix as a command's initial-state check uses it: alone (no path, no motion), when it is accurate enough
    /// to decide geofences.
    private func decidingContext(_ fix: Fix) -> GeofenceEvaluator.FixContext? {
        let margin = fix.accuracy ?? configuration.assumedAccuracyMeters
        return margin <= configuration.maxAccuracyMeters ? GeofenceEvaluator.FixContext(fix: fix, margin: margin) : nil
    }

    /// Why a polygon pin is refused for its size: over the vertices allowed per pin, or per device with the
    /// device's other pins (`replacing` is the pin it replaces).
    private func vertexLimitRefusal(_ pin: Pin, replacing: Int?, in state: DeviceState) -> String? {
        let vertices = pin.vertexCount
        guard vertices > 0 else { return nil }
        if vertices > configuration.maxVerticesPerPin {
            return "pin '\(pin.id)' has \(vertices) vertices, more than the \(configuration.maxVerticesPerPin) "
                + "allowed per pin (tracker.maxVerticesPerPin)"
        }
        var total = vertices
        for (index, tracked) in state.pins.enumerated() where index != replacing { total += tracked.pin.vertexCount }
        if total > configuration.maxVerticesPerDevice {
            return "device '\(state.deviceId)' would track \(total) polygon vertices with pin '\(pin.id)', more than "
                + "the \(configuration.maxVerticesPerDevice) allowed per device (tracker.maxVerticesPerDevice)"
        }
        return nil
    }
}
