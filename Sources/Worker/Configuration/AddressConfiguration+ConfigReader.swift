public import Addresses
public import Configuration
import Kafka

extension AddressConfiguration {
    /// Reads `provider`, `dialect` (nominatim or photon), `bucketMeters`, `ttlSeconds`, `maxRequestsPerSecond`,
    /// `userAgent`, `timeoutMs`, `prefetch`, `cardWaitMs`, `queueCapacity`, `cacheCapacity`, `breakerFailures` and
    /// `breakerCoolDownMs` (under `address.` for the executable); each falls back to the default documented on the
    /// property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            provider: try config.optionalText("provider"),
            dialect: try config.choice("dialect", default: defaults.dialect),
            bucketMeters: try config.integer("bucketMeters", default: defaults.bucketMeters, in: 1...100_000),
            ttl: .seconds(
                try config.integer(
                    "ttlSeconds",
                    default: Int(defaults.ttl.components.seconds),
                    in: 1...(10 * 365 * 86_400)
                )
            ),
            maxRequestsPerSecond: try config.number(
                "maxRequestsPerSecond",
                default: defaults.maxRequestsPerSecond,
                in: 0.001...10_000
            ),
            userAgent: try config.text("userAgent", default: defaults.userAgent),
            timeout: .milliseconds(
                try config.integer("timeoutMs", default: defaults.timeout.wholeMilliseconds, in: 1...600_000)
            ),
            prefetch: try config.flag("prefetch", default: defaults.prefetch),
            cardWait: .milliseconds(
                try config.integer("cardWaitMs", default: defaults.cardWait.wholeMilliseconds, in: 0...60_000)
            ),
            queueCapacity: try config.integer("queueCapacity", default: defaults.queueCapacity, in: 1...10_000_000),
            cacheCapacity: try config.integer("cacheCapacity", default: defaults.cacheCapacity, in: 1...100_000_000),
            breakerFailures: try config.integer("breakerFailures", default: defaults.breakerFailures, in: 1...1_000),
            breakerCoolDown: .milliseconds(
                try config.integer(
                    "breakerCoolDownMs",
                    default: defaults.breakerCoolDown.wholeMilliseconds,
                    in: 0...86_400_000
                )
            )
        )
        if let problem = problems.first { throw WorkerError(.configuration, problem) }
    }
}
