/// An answer that a fix may leave open: a boundary lies within its accuracy.
public enum PlaceDecision<Value: Hashable & Sendable>: Hashable, Sendable {
    /// Every point of the fix's accuracy disc has this answer (nil: none, such as no region at sea).
    case decided(Value?)
    /// The disc reaches across a boundary: the fix does not decide.
    case undecided

    /// The decided value, nil when undecided or decided as none.
    public var value: Value? {
        if case .decided(let value) = self { return value }
        return nil
    }
}
