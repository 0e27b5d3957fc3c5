import Foundation
import TestSupport
import Testing
import Worker

/// The published contract (`Schemas/asyncapi.yaml`, `Schemas/openapi.yaml`) against what the service does, through
/// `tools/contract/check_contract.py`.
extension ServiceTestBed {
    /// The repository's root.
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs `tools/contract/check_contract.py MODE SCHEMAS` (default: the repository's `Schemas/`) with `input` on
    /// its standard input.
    static func checkContract(
        _ mode: String,
        schemas: URL? = nil,
        input: String = ""
    ) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            "/usr/bin/env",
            [
                "python3", repositoryRoot.appendingPathComponent("tools/contract/check_contract.py").path, mode,
                (schemas ?? repositoryRoot.appendingPathComponent("Schemas")).path,
            ],
            input: input
        )
    }

    /// A Kafka message as the checker reads it: its AsyncAPI channel, key, headers and value (as text).
    static func contractLine(channel: String, _ message: Message) -> String {
        let object: [String: Any] = [
            "channel": channel,
            "key": message.key ?? NSNull(),
            "headers": message.headers,
            "value": String(decoding: message.value, as: UTF8.self),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// Every message the service wrote to this bed's events, dead-letter and changelog topics, checked against the
    /// channel each went to in `Schemas/asyncapi.yaml`; fails the test with the checker's words when one does not
    /// match.
    ///
    /// - Returns: how many messages each channel held.
    @discardableResult
    func expectProducedMessagesMatchAsyncAPI() async throws -> [String: Int] {
        let topics = [
            ("events", topics.events, partitions),
            ("deadLetters", topics.deadLetters, deadLetterPartitions),
            ("changelog", DeviceChangelog.defaultTopic(groupId: group), partitions),
        ]
        var lines: [String] = []
        var counts: [String: Int] = [:]
        for (channel, topic, partitions) in topics {
            let messages = try await readAll(topic, partitions: partitions)
            counts[channel] = messages.count
            lines += messages.map { Self.contractLine(channel: channel, $0) }
        }
        let result = try await Self.checkContract("messages", input: lines.joined(separator: "\n") + "\n")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("validated \(lines.count) messages"), "\(result.output)")
        return counts
    }
}
