public import Logging

extension Logger {
    /// A logger for tests that provoke failures on purpose (brokers taken down, records refused): only
    /// critical messages get through, so the expected warnings do not bury the test output.
    public static func quiet(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        return logger
    }
}
