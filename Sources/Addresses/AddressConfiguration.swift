/// The street-address lookups' settings (`address.*`): the provider, how often it is asked, how long answers keep.
///
/// Off unless `provider` is set.
public struct AddressConfiguration: Sendable, Equatable {
    /// The base URL of a Nominatim-compatible `/reverse` endpoint (or Photon's, with `dialect`).
    ///
    /// Default: nil, off.
    public var provider: String?
    /// How the provider is asked and answers.
    ///
    /// Default: Nominatim's `format=jsonv2`.
    public var dialect: AddressProviderDialect
    /// The side of a location bucket: devices within one share one lookup and one cached answer.
    ///
    /// Default: 100 m.
    public var bucketMeters: Int
    /// How long an answer is current; after that it is shown as stale while a fresh one is asked (key:
    /// `ttlSeconds`).
    ///
    /// Default: 7 days.
    public var ttl: Duration
    /// How many requests a second the provider gets at most.
    ///
    /// Default: 1 (Nominatim's public usage policy).
    public var maxRequestsPerSecond: Double
    /// The User-Agent of every request: Nominatim's policy asks each application to name itself with a contact.
    ///
    /// Default: ``defaultUserAgent``, which names the software but no contact: the public Nominatim
    /// (``publicNominatimHost``) is refused with it (``problems``), as its policy asks for one.
    public var userAgent: String

    /// The software, without a deployment or a contact, which only its operator can give.
    public static let defaultUserAgent = "geoworker (stream worker for device locations; no contact set)"
    /// The public Nominatim, whose usage policy asks every application for a User-Agent with a contact.
    public static let publicNominatimHost = "nominatim.openstreetmap.org"
    /// How long a request may take before it counts as failed (key: `timeoutMs`).
    ///
    /// Default: 10 s.
    public var timeout: Duration
    /// Whether a device's fix that enters a new bucket asks for its address before anyone looks.
    ///
    /// Default: false.
    public var prefetch: Bool
    /// How long a device card waits for an address nobody asked for before (it shows `pending` after; key:
    /// `cardWaitMs`).
    ///
    /// Default: 2 s.
    public var cardWait: Duration
    /// How many buckets may wait for the provider; beyond it the oldest asks are dropped.
    ///
    /// Default: 1,000.
    public var queueCapacity: Int
    /// How many answers `addresses.sqlite` keeps; the least recently used go first.
    ///
    /// Default: 100,000.
    public var cacheCapacity: Int
    /// Failed requests in a row after which the provider is left alone for ``breakerCoolDown``.
    ///
    /// Default: 5.
    public var breakerFailures: Int
    /// How long the provider is left alone before one trial request (key: `breakerCoolDownMs`).
    ///
    /// Default: 30 s.
    public var breakerCoolDown: Duration

    public init(
        provider: String? = nil,
        dialect: AddressProviderDialect = .nominatim,
        bucketMeters: Int = 100,
        ttl: Duration = .seconds(7 * 24 * 3600),
        maxRequestsPerSecond: Double = 1,
        userAgent: String = AddressConfiguration.defaultUserAgent,
        timeout: Duration = .seconds(10),
        prefetch: Bool = false,
        cardWait: Duration = .seconds(2),
        queueCapacity: Int = 1_000,
        cacheCapacity: Int = 100_000,
        breakerFailures: Int = 5,
        breakerCoolDown: Duration = .seconds(30)
    ) {
        self.provider = provider
        self.dialect = dialect
        self.bucketMeters = bucketMeters
        self.ttl = ttl
        self.maxRequestsPerSecond = maxRequestsPerSecond
        self.userAgent = userAgent
        self.timeout = timeout
        self.prefetch = prefetch
        self.cardWait = cardWait
        self.queueCapacity = queueCapacity
        self.cacheCapacity = cacheCapacity
        self.breakerFailures = breakerFailures
        self.breakerCoolDown = breakerCoolDown
    }

    /// Whether addresses are looked up at all.
    public var isEnabled: Bool { provider != nil }

    /// What is wrong with the settings, one line each naming the key (under `address.`); empty when they are usable.
    public var problems: [String] {
        var problems: [String] = []
        if let provider, !(provider.hasPrefix("http://") || provider.hasPrefix("https://")) {
            problems.append("provider must be an http:// or https:// URL, not \(provider)")
        }
        if bucketMeters < 1 { problems.append("bucketMeters must be at least 1") }
        if ttl < .seconds(1) { problems.append("ttlSeconds must be at least 1") }
        if !(maxRequestsPerSecond > 0) { problems.append("maxRequestsPerSecond must be above 0") }
        if timeout < .milliseconds(1) { problems.append("timeoutMs must be at least 1") }
        if cardWait < .zero { problems.append("cardWaitMs must be 0 or more") }
        if queueCapacity < 1 { problems.append("queueCapacity must be at least 1") }
        if cacheCapacity < 1 { problems.append("cacheCapacity must be at least 1") }
        if breakerFailures < 1 { problems.append("breakerFailures must be at least 1") }
        if breakerCoolDown < .zero { problems.append("breakerCoolDownMs must be 0 or more") }
        if let provider, provider.contains("://" + Self.publicNominatimHost), userAgent == Self.defaultUserAgent {
            problems.append(
                "userAgent must name your application and a contact (an e-mail or URL) to ask the public Nominatim, "
                    + "as its usage policy says (https://operations.osmfoundation.org/policies/nominatim/)"
            )
        }
        return problems
    }
}
