// swift-tools-version:6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "geoworker",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Kafka", targets: ["Kafka"]),
        .library(name: "GeoCore", targets: ["GeoCore"]),
        .executable(name: "kafka-bench", targets: ["kafka-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0")
    ],
    targets: [
        // librdkafka from the system: `apt-get install librdkafka-dev` (scripts/setup.sh does it).
        .systemLibrary(
            name: "CRdKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        .target(
            name: "Kafka",
            dependencies: [
                "CRdKafka",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The pure core: model, tracker, message codecs. No I/O, no dependencies.
        .target(name: "GeoCore", swiftSettings: strictSwift),
        .executableTarget(
            name: "kafka-bench",
            dependencies: ["Kafka", "CRdKafka"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "KafkaTests",
            dependencies: ["Kafka"],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "GeoCoreTests",
            dependencies: ["GeoCore"],
            swiftSettings: strictSwift
        ),
    ]
)
