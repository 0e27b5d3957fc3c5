/// A command that cannot do what was asked: ArgumentParser prints `Error: <message>` and exits 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
