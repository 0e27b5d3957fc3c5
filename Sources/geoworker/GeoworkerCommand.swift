import ArgumentParser

@main
struct GeoworkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geoworker",
        abstract: "A stream worker for device locations: geofences, countries and languages, from Kafka.",
        subcommands: [
            RunCommand.self, DemoCommand.self, TopicsCommand.self, TailCommand.self, PinsCommand.self,
            GeofencesCommand.self, GeocodeCommand.self, StateCommand.self, ProbeCommand.self,
        ]
    )
}
