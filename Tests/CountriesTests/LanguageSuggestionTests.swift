import Countries
import GeoCore
import Testing

let bundledLanguages: CountryLanguages = {
    do {
        return try CountryLanguages.bundled()
    } catch {
        fatalError("bundled language table: \(error)")
    }
}()

@Suite("Language suggestion", .timeLimit(.minutes(5)))
struct LanguageSuggestionTests {
    @Test(
        "the policy: a device language official in the country, else the main official language",
        arguments: [
            ("CH", ["fr-BE", "en"], "fr-CH", LanguageSuggestion.Basis.deviceLanguage),
            ("CH", ["en-US"], "de-CH", .officialLanguage),
            ("CH", [], "de-CH", .officialLanguage),
            ("CH", ["it"], "it-CH", .deviceLanguage),
            ("BE", [], "nl-BE", .officialLanguage),
            ("BE", ["fr-FR"], "fr-BE", .deviceLanguage),
            ("BE", ["de"], "de-BE", .deviceLanguage),
            ("CA", [], "en-CA", .officialLanguage),
            ("CA", ["fr-FR", "en"], "fr-CA", .deviceLanguage),
            ("TW", [], "zh-Hant-TW", .officialLanguage),
            ("TW", ["zh-Hans-CN"], "zh-Hant-TW", .deviceLanguage),
            ("IN", [], "hi-IN", .officialLanguage),
            ("IN", ["en-GB"], "en-IN", .deviceLanguage),
            ("IN", ["ta"], "hi-IN", .officialLanguage),  // Tamil is official only regionally
            ("FR", ["de"], "fr-FR", .officialLanguage),
            ("US", ["es-MX"], "en-US", .officialLanguage),  // English is de facto official; Spanish regional
        ]
    )
    func policy(country: String, device: [String], expected: String, basis: LanguageSuggestion.Basis) throws {
        let suggestion = try #require(bundledLanguages.suggestion(for: country, deviceLanguages: device))
        #expect(suggestion.language == expected)
        #expect(suggestion.basis == basis)
        #expect(suggestion.countryCode == country)
        #expect(!suggestion.alternatives.contains(expected))
    }

    @Test("alternatives are the other official languages, most spoken first")
    func alternatives() throws {
        let swiss = try #require(bundledLanguages.suggestion(for: "CH", deviceLanguages: ["fr"]))
        #expect(swiss.alternatives.prefix(2) == ["de-CH", "gsw-CH"])
        #expect(swiss.alternatives.contains("it-CH"))
    }

    @Test("a country without official-language data falls back to ICU likely subtags")
    func likelySubtags() throws {
        // CLDR lists no official language for Antarctica; ICU's likely subtags give en-Latn-AQ.
        let antarctica = try #require(bundledLanguages.suggestion(for: "AQ", deviceLanguages: ["fr"]))
        #expect(antarctica.language == "en-AQ")
        #expect(antarctica.basis == .likelySubtags)
        #expect(antarctica.alternatives.isEmpty)

        // A table without France: ICU supplies French; a table with Germany: the table wins.
        let table = try CountryLanguages(table: "ZZ\t\nDE\tde:official:95\n")
        #expect(table.suggestion(for: "DE", deviceLanguages: [])?.language == "de-DE")
        #expect(table.suggestion(for: "DE", deviceLanguages: [])?.basis == .officialLanguage)
        #expect(table.suggestion(for: "FR", deviceLanguages: [])?.language == "fr-FR")
        #expect(table.suggestion(for: "FR", deviceLanguages: [])?.basis == .likelySubtags)
        // Where the region's script is not the language's usual one, it stays.
        #expect(table.suggestion(for: "TW", deviceLanguages: [])?.language == "zh-Hant-TW")
    }

    @Test("the index and the table drive the tracker: a French speaker entering Switzerland is offered fr-CH")
    func trackerIntegration() throws {
        let tracker = DeviceTracker(countries: bundledIndex, languages: bundledLanguages)
        var state = DeviceState(deviceId: "truck-17")
        var events: [DeviceEvent] = []
        let origin = { (offset: Int64) in MessageOrigin(topic: "positions", partition: 0, offset: offset, timestamp: 0)
        }
        let lyon = Position(
            deviceId: "truck-17",
            coordinate: Coordinate(latitude: 45.764, longitude: 4.8357)!,
            timestamp: 1_795_000_000_000,
            languages: ["fr-FR"]
        )
        _ = tracker.apply(lyon, origin: origin(0), to: &state, events: &events)
        for (offset, second) in [(1, 1), (2, 2)] {
            let geneva = Position(
                deviceId: "truck-17",
                coordinate: Coordinate(latitude: 46.2044, longitude: 6.1432)!,
                timestamp: 1_795_000_000_000 + Int64(second) * 60_000
            )
            _ = tracker.apply(geneva, origin: origin(Int64(offset)), to: &state, events: &events)
        }
        let summary = events.map { event -> String in
            switch event.payload {
            case .countryChanged(let change): "country \(change.from ?? "nil")->\(change.to) \(change.countryName)"
            case .languageSuggested(let suggestion): "language \(suggestion.language)"
            default: event.type
            }
        }
        #expect(
            summary == ["country nil->FR France", "language fr-FR", "country FR->CH Switzerland", "language fr-CH"]
        )
    }
}
