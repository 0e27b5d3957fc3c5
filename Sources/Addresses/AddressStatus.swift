/// What a device card shows of the street address at the device's last fix (the seeds' cache-first status).
public enum AddressStatus: Equatable, Sendable {
    /// Asked of the provider for this look and answered (nil: it knows no address there).
    case current(StreetAddress?)
    /// From the cache, fetched `ageSeconds` ago; `stale` when past the time-to-live, a fresh one then being asked.
    case cached(StreetAddress?, ageSeconds: Int64, stale: Bool)
    /// Asked of the provider, not answered yet: look again.
    case pending
    /// No address to show, and why (the provider failing, too many asks, an error it answered).
    case unavailable(reason: String)
}
