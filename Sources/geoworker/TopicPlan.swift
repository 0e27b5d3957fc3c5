import Worker

/// The topics a worker with given settings reads and writes, and what each must be: the input topics co-partitioned
/// (a device's commands in the partition of its positions), the changelog co-partitioned with them and compacted, the
/// geofence catalog compacted.
///
/// Pure: `geoworker topics` asks the cluster and prints what this says.
struct TopicPlan {
    struct Topic: Equatable {
        let name: String
        /// What the worker uses it for, as `geoworker topics` prints it.
        let role: String
        /// Whether it must have the positions topic's partition count.
        let coPartitioned: Bool
        let compacted: Bool
        /// Whether the worker creates it itself at start when it is missing (the changelog, the instances topic).
        let createdByWorker: Bool
        /// The partition count it is made with whatever `--partitions` says (the instances topic: one).
        var ownPartitions: Int? = nil
    }

    /// A topic as the cluster has it.
    struct Found: Equatable {
        let partitions: Int
        /// nil when the cluster did not say (a broker without DescribeConfigs), or for a topic that need not be.
        let compacted: Bool?
    }

    let topics: [Topic]
    /// The positions topic's name: the others are measured against it.
    let positions: String

    /// - Parameters:
    ///   - configuration: the worker's settings, which name the topics.
    ///   - groupDirectory: whether the instances advertise their address (`http.advertisedAddress`), which needs the
    ///     instances topic.
    init(_ configuration: WorkerConfiguration, groupDirectory: Bool = false) {
        let names = configuration.topics
        positions = names.positions
        var topics = [
            Topic(
                name: names.positions,
                role: "positions",
                coPartitioned: true,
                compacted: false,
                createdByWorker: false
            ),
            Topic(
                name: names.commands,
                role: "commands",
                coPartitioned: true,
                compacted: false,
                createdByWorker: false
            ),
            Topic(
                name: names.events,
                role: "events",
                coPartitioned: false,
                compacted: false,
                createdByWorker: false
            ),
            Topic(
                name: names.deadLetters,
                role: "dead letters",
                coPartitioned: false,
                compacted: false,
                createdByWorker: false
            ),
        ]
        if configuration.changelogSettings.enabled {
            topics.append(
                Topic(
                    name: configuration.changelogTopic,
                    role: "device-state changelog",
                    coPartitioned: true,
                    compacted: true,
                    createdByWorker: true
                )
            )
        }
        if configuration.catalog.enabled {
            topics.append(
                Topic(
                    name: names.geofences,
                    role: "geofence catalog",
                    coPartitioned: false,
                    compacted: true,
                    createdByWorker: false
                )
            )
        }
        if groupDirectory {
            topics.append(
                Topic(
                    name: configuration.instancesTopic,
                    role: "group's instances",
                    coPartitioned: false,
                    compacted: true,
                    createdByWorker: true,
                    ownPartitions: 1
                )
            )
        }
        self.topics = topics
    }

    /// The partition count `topic` must be created with, when the topics found already decide it: a co-partitioned
    /// topic takes the positions topic's.
    func partitions(for topic: Topic, found: [String: Found]) -> Int? {
        if let own = topic.ownPartitions { return own }
        guard topic.coPartitioned, topic.name != positions else { return nil }
        return found[positions]?.partitions
    }

    /// What is wrong with the topics as found (missing ones are not counted here when the worker creates them).
    func problems(_ found: [String: Found]) -> [String] {
        var problems: [String] = []
        let inputPartitions = found[positions]?.partitions
        for topic in topics {
            guard let existing = found[topic.name] else {
                if !topic.createdByWorker { problems.append("the \(topic.role) topic \(topic.name) does not exist") }
                continue
            }
            if topic.coPartitioned, let inputPartitions, existing.partitions != inputPartitions {
                problems.append(
                    "the \(topic.role) topic \(topic.name) has \(existing.partitions) partitions and \(positions) has "
                        + "\(inputPartitions): it must have the positions topic's partition count (a device's records "
                        + "are found by its partition); a topic's partitions cannot be changed under stored state, "
                        + "so make it again with \(inputPartitions)"
                )
            }
            if topic.compacted, existing.compacted == false {
                problems.append(
                    "the \(topic.role) topic \(topic.name) is not compacted: set cleanup.policy=compact, or it loses the "
                        + "records it must keep once retention passes"
                )
            }
        }
        return problems
    }

    /// One line of `geoworker topics`: the topic, its role, its partitions and what was done, in columns.
    func line(_ topic: Topic, _ found: Found?, _ outcome: String) -> String {
        func padded(_ text: String, to width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        let partitions = found.map { "\($0.partitions) partition\($0.partitions == 1 ? "" : "s")" } ?? "-"
        let compaction =
            topic.compacted && found != nil ? (found?.compacted == false ? "not compacted" : "compacted") : ""
        return [
            padded(topic.name, to: topics.map(\.name.count).max() ?? 0),
            padded(topic.role, to: topics.map(\.role.count).max() ?? 0),
            padded(partitions, to: 14),
            padded(compaction, to: 13),
            outcome,
        ].joined(separator: "  ")
    }
}
