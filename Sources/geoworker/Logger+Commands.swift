public import ArgumentParser
import Logging

/// Every command's `--log-level` and its one logging set-up: lines of that level and above on standard error.
extension Logger.Level: @retroactive ExpressibleByArgument {
    /// Logs of this level and above go to standard error (the commands' one logging set-up).
    func bootstrapStandardErrorLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = self
            return handler
        }
    }
}
