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
    ]
)
