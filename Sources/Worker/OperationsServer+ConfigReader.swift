public import Configuration

extension OperationsServer.Configuration {
    /// Reads `host` and `port` (under `http.` for the executable); each falls back to the default documented
    /// on the property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            host: try config.text("host", default: defaults.host),
            port: try config.integer("port", default: defaults.port, in: 0...65_535)
        )
    }
}
