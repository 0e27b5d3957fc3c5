public import Configuration
public import Worker

extension OperationsServer.Configuration {
    /// Reads `host`, `port`, `devices`, `token` (a secret), `streamBuffer`, `recentEvents`, `mapLimit`,
    /// `allowOpenDevices`, `advertisedAddress`, `peerTimeoutMs`, `mapTiles`, `mapTilesAttribution` and
    /// `leafletDirectory` (under `http.` for the executable); each falls back to the default documented on the
    /// property.
    ///
    /// - Throws: ``WorkerError`` naming the key of a value that is set but unusable, or the device endpoints open to
    ///   every host without a token (``openDevicesProblem``).
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            host: try config.text("host", default: defaults.host),
            port: try config.integer("port", default: defaults.port, in: 0...65_535),
            devices: try config.flag("devices", default: defaults.devices),
            token: try config.secretText("token"),
            streamBuffer: try config.integer("streamBuffer", default: defaults.streamBuffer, in: 1...1_000_000),
            recentEvents: try config.integer("recentEvents", default: defaults.recentEvents, in: 0...10_000),
            mapLimit: try config.integer("mapLimit", default: defaults.mapLimit, in: 1...100_000),
            allowOpenDevices: try config.flag("allowOpenDevices", default: defaults.allowOpenDevices),
            advertisedAddress: try config.optionalText("advertisedAddress"),
            peerTimeout: .milliseconds(try config.integer("peerTimeoutMs", default: 2000, in: 1...600_000)),
            map: MapPage.Settings(
                tiles: try config.optionalText("mapTiles"),
                tilesAttribution: try config.optionalText("mapTilesAttribution"),
                leafletDirectory: try config.text("leafletDirectory", default: MapPage.Settings().leafletDirectory)
            )
        )
        if let tiles = map.tiles {
            guard tiles.hasPrefix("http://") || tiles.hasPrefix("https://") || tiles.hasPrefix("/"),
                ["{z}", "{x}", "{y}"].allSatisfy(tiles.contains)
            else {
                throw WorkerError(
                    .configuration,
                    "http.mapTiles must be a tile URL template with {z}, {x} and {y} "
                        + "(https://tile.example.org/{z}/{x}/{y}.png); got \(tiles)"
                )
            }
            guard map.tilesAttribution != nil else {
                throw WorkerError(
                    .configuration,
                    "http.mapTiles needs http.mapTilesAttribution: the credit the tile provider requires, shown on the "
                        + "map (for OpenStreetMap's tiles: © OpenStreetMap contributors)"
                )
            }
        }
        if let address = advertisedAddress, !Self.isAdvertisable(address) {
            throw WorkerError(
                .configuration,
                "http.advertisedAddress must be an http:// URL other instances reach this one at (http://host:port, "
                    + "or http://host for the port it listens on); got \(address)"
            )
        }
        if let openDevicesProblem { throw WorkerError(.configuration, openDevicesProblem) }
    }
}
