import Addresses
import Foundation
import GeoCore
import Testing

@Suite("Reverse geocoders' requests and answers: Nominatim's jsonv2 and Photon's GeoJSON", .timeLimit(.minutes(5)))
struct AddressProviderDialectTests {
    private let casino = Coordinate(latitude: 43.7396, longitude: 7.4277)!

    @Test("the request asks Nominatim for jsonv2 with address details at street level")
    func nominatimURL() throws {
        let url = try #require(
            AddressProviderDialect.nominatim.reverseURL(base: "http://127.0.0.1:8088/", point: casino, language: "fr")
        )
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        let query = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") })
        #expect(url.path == "/reverse")
        #expect(
            query == [
                "lat": "43.7396000", "lon": "7.4277000", "format": "jsonv2", "addressdetails": "1", "zoom": "18",
                "accept-language": "fr",
            ]
        )
    }

    @Test("Nominatim's answer reads into its parts, the feature's name kept apart from the road")
    func nominatimAnswer() throws {
        // The body a Nominatim 5.3.3 with Monaco's extract gave for the casino square.
        let body = #"""
            {"place_id":101402,"licence":"Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
            "osm_type":"node","osm_id":1,"lat":"43.7394","lon":"7.4276","category":"amenity","type":"cafe",
            "place_rank":30,"importance":0.0001,"addresstype":"amenity","name":"Cafe de Paris",
            "display_name":"Cafe de Paris, Avenue des Spélugues, Monte-Carlo, Monaco, 98000, Monaco",
            "address":{"amenity":"Cafe de Paris","road":"Avenue des Spélugues","suburb":"Monte-Carlo",
            "city":"Monaco","postcode":"98000","country":"Monaco","country_code":"mc"}}
            """#
        let reading = try AddressProviderDialect.nominatim.read(Array(body.utf8))
        #expect(
            reading
                == .address(
                    StreetAddress(
                        label: "Cafe de Paris, Avenue des Spélugues, Monte-Carlo, Monaco, 98000, Monaco",
                        name: "Cafe de Paris",
                        road: "Avenue des Spélugues",
                        suburb: "Monte-Carlo",
                        city: "Monaco",
                        postcode: "98000",
                        country: "Monaco",
                        countryCode: "MC"
                    )
                )
        )
    }

    @Test("Nominatim's 'Unable to geocode' is no address, not an error")
    func nominatimNone() throws {
        #expect(try AddressProviderDialect.nominatim.read(Array(#"{"error":"Unable to geocode"}"#.utf8)) == .noAddress)
    }

    @Test(
        "a body that is not the dialect's answer is refused, saying why",
        arguments: [
            (AddressProviderDialect.nominatim, "<html>502 Bad Gateway</html>", "the answer is not JSON"),
            (.nominatim, "[1,2]", "the answer is not a JSON object"),
            (.nominatim, #"{"address":{}}"#, "the answer has no display_name"),
            (.photon, #"{"type":"FeatureCollection"}"#, "the answer has no features"),
            (.photon, #"{"features":[{"type":"Feature"}]}"#, "the first feature has no properties"),
        ]
    )
    func malformed(dialect: AddressProviderDialect, body: String, reason: String) {
        #expect(throws: AddressProviderDialect.MalformedAnswer(description: reason)) {
            try dialect.read(Array(body.utf8))
        }
    }

    @Test("Photon's first feature reads into the same parts, with a label made from them")
    func photonAnswer() throws {
        let body = #"""
            {"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point",
            "coordinates":[6.0567,46.2316]},"properties":{"osm_type":"N","name":"CERN","street":"Route de Meyrin",
            "housenumber":"385","postcode":"1217","city":"Meyrin","country":"Switzerland","countrycode":"CH"}}]}
            """#
        let reading = try AddressProviderDialect.photon.read(Array(body.utf8))
        #expect(
            reading
                == .address(
                    StreetAddress(
                        label: "CERN, Route de Meyrin 385, 1217 Meyrin, Switzerland",
                        name: "CERN",
                        houseNumber: "385",
                        road: "Route de Meyrin",
                        city: "Meyrin",
                        postcode: "1217",
                        country: "Switzerland",
                        countryCode: "CH"
                    )
                )
        )
        #expect(try AddressProviderDialect.photon.read(Array(#"{"features":[]}"#.utf8)) == .noAddress)
    }
}
