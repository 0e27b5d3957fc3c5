import ArgumentParser
import StateStore

/// `geoworker state`: the state directory, without starting a worker.
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Inspect a worker's state directory without starting a worker.",
        subcommands: [Check.self]
    )

    /// `geoworker state check`: whether the store can be trusted.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Report the health of the state directory's store (read-only).",
            discussion: """
                Opens the store read-only, runs SQLite's quick_check and decodes every device. Exit status 0: \
                healthy, or no store yet; 1: damaged (a worker would move it aside and rebuild it from the \
                changelog, or, without one, refuse to start until --reset-state).
                """
        )

        @Option(help: "Directory of the SQLite state (default ./geoworker-state).")
        var stateDir = "./geoworker-state"

        func run() throws {
            let file = stateDir + "/" + StateStore.fileName
            switch StateStore.check(directory: stateDir) {
            case .missing:
                print("\(file): no state store yet")
            case .healthy(let summary):
                print(
                    "\(file): healthy: \(summary.devices) devices, input offsets for \(summary.inputPartitions) "
                        + "partitions, changelog offsets for \(summary.changelogPartitions) partitions"
                )
            case .damaged(let finding):
                print("\(file): damaged: \(finding)")
                throw ExitCode.failure
            }
        }
    }
}
