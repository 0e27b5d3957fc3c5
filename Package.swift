// swift-tools-version:6.1
import PackageDescription

// `make test` builds with GEOWORKER_WARNINGS_AS_ERRORS=1: a warning fails the tests, as review would. Only this
// package's targets get the flag (dependencies build with their warnings suppressed), and a user's `make demo` on a
// newer toolchain is not stopped by a warning it may bring.
let warningsAsErrors: [SwiftSetting] =
    Context.environment["GEOWORKER_WARNINGS_AS_ERRORS"] == "1" ? [.unsafeFlags(["-warnings-as-errors"])] : []

let strictSwift: [SwiftSetting] =
    warningsAsErrors + [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        // A member is visible only where its module is imported, not through another import that happens to
        // bring it: each file's imports say what it uses.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]

let package = Package(
    name: "geoworker",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "geoworker", targets: ["geoworker"]),
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "GeoCore", targets: ["GeoCore"]),
        .library(name: "StateStore", targets: ["StateStore"]),
        .library(name: "Countries", targets: ["Countries"]),
        .library(name: "Places", targets: ["Places"]),
        .library(name: "Geocoding", targets: ["Geocoding"]),
        .library(name: "Worker", targets: ["Worker"]),
        .library(name: "Operations", targets: ["Operations"]),
        .executable(name: "kafka-bench", targets: ["kafka-bench"]),
        .executable(name: "geocore-bench", targets: ["geocore-bench"]),
        .executable(name: "json-codec-bench", targets: ["json-codec-bench"]),
        .executable(name: "country-bench", targets: ["country-bench"]),
        .executable(name: "service-bench", targets: ["service-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // librdkafka from the system: `apt-get install librdkafka-dev` (scripts/setup.sh does it).
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // jemalloc from the system (`apt-get install libjemalloc-dev`): the geoworker executable allocates through
        // it, as it allocates small blocks at a high rate on several threads (docs/performance.md).
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        // The project's one thread helper: a named thread that runs jobs in order, for blocking work kept off
        // Swift's cooperative pool.
        .target(name: "Threads", swiftSettings: strictSwift),
        // A topic's partition and a span of its offsets: shared by the Kafka layer and the state store, which needs
        // no more of Kafka.
        .target(name: "PartitionOffsets", swiftSettings: strictSwift),
        .target(
            name: "Kafka",
            dependencies: [
                "CRdKafka", "Threads", "PartitionOffsets",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // JSON text and numbers, read and written straight from and into bytes (RFC 8259 and RFC 3339; numbers
        // correctly rounded both ways): knows no geoworker type.
        .target(name: "JSONCodec", swiftSettings: strictSwift),
        // The pure core: model, tracker, geometry, messages and events. No I/O.
        .target(name: "GeoCore", dependencies: ["JSONCodec"], swiftSettings: strictSwift),
        // Device state and input offsets in SQLite (system libsqlite3 through GRDB); no Kafka.
        .target(
            name: "StateStore",
            dependencies: [
                "GeoCore", "PartitionOffsets", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift
        ),
        // The binary format the country and places indexes share: its reader (one header check, one error naming
        // the file and the byte), its writer, and the mapped file they load from.
        .target(name: "IndexFile", swiftSettings: strictSwift),
        // Offline country lookup and language suggestion; the compiled index ships as a resource.
        .target(
            name: "Countries",
            dependencies: ["GeoCore", "IndexFile"],
            resources: [.copy("Resources/countries.idx"), .copy("Resources/languages.tsv")],
            swiftSettings: strictSwift
        ),
        // Offline places: region, nearest locality and time zone, from the places index `make places` builds.
        .target(name: "Places", dependencies: ["Countries", "GeoCore", "IndexFile"], swiftSettings: strictSwift),
        // `geoworker geocode --input`'s engine: files of `lat,lon` lines answered in parallel, in input order.
        .target(
            name: "Geocoding",
            dependencies: ["Countries", "Places", "GeoCore", "JSONCodec"],
            swiftSettings: strictSwift
        ),
        // Street addresses from an external reverse geocoder (Nominatim, Photon), the pure part: location buckets, the
        // lookup queue, the breaker, the pace, the providers' dialects, and what the pipeline tells it.
        .target(name: "Addresses", dependencies: ["GeoCore"], swiftSettings: strictSwift),
        // The street addresses' lookups: the provider over HTTP (AsyncHTTPClient), the cache in SQLite, the `Service`.
        .target(
            name: "AddressLookups",
            dependencies: [
                "Addresses", "GeoCore", "Threads", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        // The service: pipeline, configuration, metrics and health. Wires the modules above together.
        .target(
            name: "Worker",
            dependencies: [
                "PartitionOffsets",
                "Kafka", "GeoCore", "JSONCodec", "StateStore", "Countries", "Places", "Threads", "Addresses",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // The operations port beside the pipeline: probes, /metrics, the device endpoints, the live event stream and
        // the page. It reads the worker only through what the worker shares for it (`DeviceQueries`, `EventFeed`,
        // `WorkerHealth`, `GroupDirectory`) and the Prometheus registry; other instances of its group over HTTP.
        .target(
            name: "Operations",
            dependencies: [
                "Worker", "GeoCore", "JSONCodec", "Addresses", "AddressLookups",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Another instance's part of an answer (GroupAnswers).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            // The operations page; the country outlines it draws come from CountryOutlinesPlugin.
            resources: [.copy("Resources/map.html")],
            swiftSettings: strictSwift,
            plugins: ["CountryOutlinesPlugin"]
        ),
        // The command-line tool: the service's process, the demo and the operator's tools.
        .executableTarget(
            name: "geoworker",
            dependencies: [
                "PartitionOffsets",
                "Worker", "Operations", "Kafka", "Countries", "GeoCore", "Geocoding", "JSONCodec", "StateStore",
                "Places", "Addresses", "AddressLookups", "Threads", "IndexFile",
                .target(name: "CJemalloc", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.copy("Resources/demo-trace.jsonl")],
            swiftSettings: strictSwift
        ),
        // Compiles boundaries (GeoJSON) into the country index: see tools/countries/.
        .executableTarget(
            name: "country-index-builder",
            dependencies: ["Countries"],
            swiftSettings: strictSwift
        ),
        // Compiles the places' sources into the places index: see tools/places/.
        .executableTarget(
            name: "places-index-builder",
            dependencies: ["Places", "Countries"],
            swiftSettings: strictSwift
        ),
        // Simplifies the country index's rings into the operations page's outlines, at build time.
        .executableTarget(
            name: "country-outlines",
            dependencies: ["Countries"],
            swiftSettings: strictSwift
        ),
        .plugin(
            name: "CountryOutlinesPlugin",
            capability: .buildTool(),
            dependencies: ["country-outlines"]
        ),
        // Seeded random inputs and child processes, for tests and benchmarks.
        .target(
            name: "TestSupport",
            dependencies: [
                "GeoCore",
                "Kafka",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // libFuzzer entry point for the parsers of untrusted input (`make fuzz`); a corpus replayer when built
        // without the fuzzer.
        .executableTarget(name: "geoworker-fuzz", dependencies: ["GeoCore"], swiftSettings: strictSwift),
        // Test helper: writes state-store batches until killed (StateStoreTests kill it with SIGKILL).
        .executableTarget(
            name: "state-store-crash-writer",
            dependencies: ["StateStore", "GeoCore", "PartitionOffsets"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "country-bench",
            dependencies: ["Countries", "GeoCore", "TestSupport"],
            swiftSettings: strictSwift
        ),
        // The places index's size, agreement with independent answers, lookup cost and the tracker with it.
        .executableTarget(
            name: "places-bench",
            dependencies: ["Places", "Countries", "GeoCore", "TestSupport"],
            swiftSettings: strictSwift
        ),
        // The JSON codec alone: reading objects, numbers and times; writing numbers, times and strings.
        .executableTarget(name: "json-codec-bench", dependencies: ["JSONCodec"], swiftSettings: strictSwift),
        .executableTarget(
            name: "geocore-bench",
            dependencies: ["PartitionOffsets", "GeoCore", "StateStore", "Kafka", "Countries", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "kafka-bench",
            dependencies: [
                "PartitionOffsets", "Kafka", "CRdKafka", "BenchSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // Raw librdkafka consumption, the reference the benchmarks measure against.
        .target(name: "BenchSupport", dependencies: ["CRdKafka"], swiftSettings: strictSwift),
        // The service end to end: `geoworker run --until-caught-up` next to raw librdkafka, and latency.
        .executableTarget(
            name: "service-bench",
            dependencies: [
                "PartitionOffsets",
                "Kafka", "Worker", "GeoCore", "BenchSupport", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "WorkerTests",
            dependencies: [
                "Addresses",
                "PartitionOffsets",
                "Worker", "Kafka", "GeoCore", "JSONCodec", "StateStore", "Countries", "TestSupport", "Threads",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "OperationsTests",
            dependencies: [
                "PartitionOffsets",
                "Operations", "Worker", "Kafka", "GeoCore", "TestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "KafkaTests",
            dependencies: [
                "PartitionOffsets", "Kafka", "TestSupport", "Threads", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "StateStoreTests",
            dependencies: ["StateStore", "GeoCore", "PartitionOffsets", "TestSupport", "state-store-crash-writer"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "CountriesTests",
            dependencies: ["Countries", "GeoCore", "IndexFile", "TestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "GeoworkerTests",
            dependencies: [
                "PartitionOffsets",
                "geoworker", "Worker", "Operations", "Kafka", "TestSupport", "Addresses", "AddressLookups", "GeoCore",
                "StateStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "AddressesTests",
            dependencies: ["Addresses", "GeoCore"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "AddressLookupsTests",
            dependencies: [
                "AddressLookups", "Addresses", "GeoCore", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "GeocodingTests",
            dependencies: ["Geocoding", "Countries", "Places", "GeoCore", "JSONCodec", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "PlacesTests",
            dependencies: ["Places", "Countries", "GeoCore", "IndexFile", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(name: "ThreadsTests", dependencies: ["Threads"], swiftSettings: strictSwift),
        .testTarget(
            name: "JSONCodecTests",
            dependencies: ["JSONCodec", "TestSupport"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "GeoCoreTests",
            dependencies: ["GeoCore", "JSONCodec", "TestSupport"],
            swiftSettings: strictSwift
        ),
    ]
)
