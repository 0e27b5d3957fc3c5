public import Configuration

extension ConfigReader {
    /// A reader of exactly these values, as a test sets them (keys with dots, `"topics.events"`).
    public static func inMemory(_ values: [AbsoluteConfigKey: ConfigValue]) -> ConfigReader {
        ConfigReader(provider: InMemoryProvider(values: values))
    }
}
