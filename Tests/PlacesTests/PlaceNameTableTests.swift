import GeoCore
import Places
import Testing

/// Places as the people who get the events name them, at well-known points: the city a local would name (never a
/// quarter of it), and the region a point is in (never one it is not in, none where the country has none).
///
/// The tables were written before the rules that answer them (issue 49), so that they are not tuned to them.
@Suite("Places as people name them", .timeLimit(.minutes(5)))
struct PlaceNameTableTests {
    @Test(
        "the locality is the town or city a person would name: at city centres, in their quarters, in suburbs that are towns of their own, at borders",
        arguments: [
            // (point, latitude, longitude, the names a local would give)
            ("Berlin: Alexanderplatz, in Mitte", 52.5219, 13.4132, ["Berlin"]),
            ("Berlin: Mitte, by the Humboldt Forum", 52.5170, 13.4000, ["Berlin"]),
            ("Berlin: Kreuzberg", 52.4986, 13.4030, ["Berlin"]),
            ("Berlin: Spandau's old town", 52.5360, 13.2000, ["Berlin"]),
            ("Madrid: Puerta del Sol", 40.4169, -3.7035, ["Madrid"]),
            ("Madrid: Salamanca", 40.4300, -3.6800, ["Madrid"]),
            ("Toronto: Bay Street", 43.6544, -79.3807, ["Toronto"]),
            ("Toronto: North York Centre", 43.7615, -79.4111, ["Toronto"]),
            ("São Paulo: Praça da Sé", -23.5503, -46.6340, ["São Paulo"]),
            ("São Paulo: Pinheiros", -23.5670, -46.6920, ["São Paulo"]),
            ("Belgrade: Republic Square", 44.8163, 20.4600, ["Belgrade"]),
            ("Paris: the Louvre", 48.8606, 2.3376, ["Paris"]),
            ("Paris: Montmartre", 48.8867, 2.3431, ["Paris"]),
            ("London: Westminster", 51.4995, -0.1248, ["London"]),
            ("London: Camden Town", 51.5390, -0.1426, ["London"]),
            ("New York: Times Square", 40.7580, -73.9855, ["New York City", "New York"]),
            ("Chicago: the Loop", 41.8818, -87.6231, ["Chicago"]),
            ("Los Angeles: downtown", 34.0522, -118.2437, ["Los Angeles"]),
            ("San Francisco: Union Square", 37.7880, -122.4075, ["San Francisco"]),
            ("Mexico City: the Zócalo", 19.4326, -99.1332, ["Mexico City", "Ciudad de México"]),
            ("Lima: Plaza de Armas", -12.0464, -77.0300, ["Lima"]),
            ("Bogotá: Plaza de Bolívar", 4.5981, -74.0760, ["Bogotá"]),
            ("Buenos Aires: Plaza de Mayo", -34.6083, -58.3712, ["Buenos Aires"]),
            ("Buenos Aires: Palermo", -34.5800, -58.4200, ["Buenos Aires"]),
            ("Vienna: Stephansplatz", 48.2085, 16.3721, ["Vienna"]),
            ("Rome: the Colosseum", 41.8902, 12.4922, ["Rome"]),
            ("Moscow: Red Square", 55.7539, 37.6208, ["Moscow"]),
            ("Warsaw: the old town", 52.2497, 21.0122, ["Warsaw"]),
            ("Stockholm: Gamla stan", 59.3251, 18.0711, ["Stockholm"]),
            ("Amsterdam: Dam Square", 52.3731, 4.8926, ["Amsterdam"]),
            ("Dublin: O'Connell Street", 53.3498, -6.2603, ["Dublin"]),
            ("Reykjavík: the old harbour", 64.1500, -21.9400, ["Reykjavík", "Reykjavik"]),
            ("Vilnius: the cathedral", 54.6858, 25.2877, ["Vilnius"]),
            ("Istanbul: Sultanahmet", 41.0054, 28.9768, ["Istanbul"]),
            ("Cairo: Tahrir Square", 30.0444, 31.2357, ["Cairo"]),
            ("Lagos: Lagos Island", 6.4550, 3.3941, ["Lagos"]),
            ("Nairobi: the central business district", -1.2864, 36.8172, ["Nairobi"]),
            ("Johannesburg: the central business district", -26.2041, 28.0473, ["Johannesburg"]),
            ("Seoul: City Hall", 37.5663, 126.9779, ["Seoul"]),
            ("Bangkok: the Grand Palace", 13.7500, 100.4913, ["Bangkok"]),
            ("Mumbai: Chhatrapati Shivaji Terminus", 18.9400, 72.8353, ["Mumbai"]),
            ("New Delhi: Connaught Place", 28.6315, 77.2167, ["New Delhi", "Delhi"]),
            ("Beijing: Tiananmen", 39.9055, 116.3976, ["Beijing"]),
            ("Shanghai: the Bund", 31.2400, 121.4900, ["Shanghai"]),
            ("Jakarta: Merdeka Square", -6.1754, 106.8272, ["Jakarta"]),
            ("Sydney: the central business district", -33.8688, 151.2093, ["Sydney"]),
            ("Melbourne: the central business district", -37.8136, 144.9631, ["Melbourne"]),
            ("Geneva: the old town", 46.2010, 6.1480, ["Geneva", "Genève"]),
            ("Meyrin, a town beside Geneva", 46.2342, 6.0802, ["Meyrin"]),
            ("Boulogne-Billancourt, a town beside Paris", 48.8353, 2.2400, ["Boulogne-Billancourt"]),
            ("Neuilly-sur-Seine, a town beside Paris", 48.8846, 2.2697, ["Neuilly-sur-Seine"]),
            ("Guarulhos, a city beside São Paulo", -23.4628, -46.5333, ["Guarulhos"]),
            ("Potsdam, a city beside Berlin", 52.3906, 13.0645, ["Potsdam"]),
            ("Cambridge, Massachusetts, beside Boston", 42.3736, -71.1190, ["Cambridge"]),
            ("Pasadena, beside Los Angeles", 34.1478, -118.1445, ["Pasadena"]),
            ("Mississauga, beside Toronto", 43.5890, -79.6441, ["Mississauga"]),
            ("Getafe, beside Madrid", 40.3083, -3.7327, ["Getafe"]),
            ("Fürth, beside Nuremberg", 49.4771, 10.9887, ["Fürth"]),
            ("Frankfurt (Oder), on the Polish border", 52.3471, 14.5506, ["Frankfurt (Oder)"]),
            ("Słubice, across the Oder from Frankfurt", 52.3490, 14.5680, ["Słubice"]),
            ("Gorizia, on the Slovenian border", 45.9350, 13.6100, ["Gorizia"]),
            ("Nova Gorica, across the border from Gorizia", 45.9560, 13.6483, ["Nova Gorica"]),
            ("Ciudad Juárez, across the Rio Grande from El Paso", 31.7200, -106.4600, ["Ciudad Juárez", "Juárez"]),
            ("Hong Kong: Central", 22.2820, 114.1588, ["Hong Kong"]),
            ("Monaco: Monte-Carlo", 43.7384, 7.4246, ["Monaco"]),
        ] as [(String, Double, Double, [String])]
    )
    func locality(point: String, latitude: Double, longitude: Double, names: [String]) {
        let locality = lookUp(latitude, longitude).locality
        #expect(names.contains(locality?.name ?? "none"), "\(point): \(locality?.name ?? "none")")
    }

    @Test(
        "a quarter nearer the point than its town's centre is the district beside the town; a town has none",
        arguments: [
            // (point, latitude, longitude, town, district or nil)
            ("Berlin: Kreuzberg", 52.4986, 13.4030, "Berlin", "Kreuzberg"),
            ("Madrid: Puerta del Sol", 40.4169, -3.7035, "Madrid", "Sol"),
            ("Paris: the Louvre", 48.8606, 2.3376, "Paris", "Paris 01 Louvre"),
            ("Monaco: Monte-Carlo", 43.7384, 7.4246, "Monaco", "Monte-Carlo"),
            ("Meyrin", 46.2342, 6.0802, "Meyrin", nil),
            ("Vienna: Stephansplatz", 48.2085, 16.3721, "Vienna", nil),
        ] as [(String, Double, Double, String, String?)]
    )
    func district(point: String, latitude: Double, longitude: Double, town: String, district: String?) throws {
        let locality = try #require(lookUp(latitude, longitude).locality, "\(point)")
        #expect(locality.name == town, "\(point)")
        #expect(locality.district?.name == district, "\(point)")
        if let found = locality.district {
            #expect(found.distance < locality.distance, "\(point): the district is nearer than the town's point")
        }
    }

    @Test(
        "a region wherever the country has first-level ISO 3166-2 regions, never one the point is not in; none in city-states",
        arguments: [
            // (point, latitude, longitude, ISO 3166-2 code, or nil where the country has no regions)
            ("Reykjavík", 64.1466, -21.9426, "IS-1"),
            ("Akureyri", 65.6835, -18.0878, "IS-6"),
            ("Dublin", 53.3498, -6.2603, "IE-L"),
            ("Cork", 51.8985, -8.4756, "IE-M"),
            ("Vilnius", 54.6858, 25.2877, "LT-VL"),
            ("Kaunas", 54.8985, 23.9036, "LT-KU"),
            ("Belgrade: Republic Square", 44.8163, 20.4600, "RS-00"),
            ("Novi Sad", 45.2551, 19.8452, "RS-VO"),
            ("Niš", 43.3209, 21.8958, "RS-20"),
            ("Kragujevac", 44.0128, 20.9114, "RS-12"),
            ("Munich", 48.1370, 11.5750, "DE-BY"),
            ("Singapore", 1.2903, 103.8520, nil),
            ("Hong Kong", 22.2820, 114.1588, nil),
            ("Macau", 22.1987, 113.5439, nil),
            ("Monaco", 43.7384, 7.4246, nil),
            ("the Vatican", 41.9029, 12.4534, nil),
        ] as [(String, Double, Double, String?)]
    )
    func region(point: String, latitude: Double, longitude: Double, code: String?) {
        let region = lookUp(latitude, longitude).region
        #expect(region == .decided(region.value) && region.value?.code == code, "\(point): \(region)")
    }

    @Test(
        "a region's name is its English one where it has one",
        arguments: [
            ("Munich", 48.1370, 11.5750, "Bavaria"),
            ("Cologne", 50.9375, 6.9603, "North Rhine-Westphalia"),
            ("Vilnius", 54.6858, 25.2877, "Vilnius County"),
            ("Reykjavík", 64.1466, -21.9426, "Capital Region"),
            ("Texas: Dallas", 32.7767, -96.7970, "Texas"),
        ] as [(String, Double, Double, String)]
    )
    func regionName(point: String, latitude: Double, longitude: Double, name: String) {
        #expect(lookUp(latitude, longitude).region.value?.name == name, "\(point)")
    }

    @Test(
        "beside the English name, the local one: ISO 3166-2's, or the same name where no English one is known",
        arguments: [
            ("Munich", 48.1370, 11.5750, "Bavaria", "Bayern"),
            ("Reykjavík", 64.1466, -21.9426, "Capital Region", "Höfuðborgarsvæði"),
            ("Belgrade", 44.8163, 20.4600, "Belgrade", "Beograd"),
            ("Madrid", 40.4169, -3.7035, "Community of Madrid", "Comunidad de Madrid"),
            ("Paris", 48.8606, 2.3376, "Île-de-France", "Île-de-France"),
            ("Tokyo", 35.6812, 139.7671, "Tokyo", "Tokyo"),
            ("Hamburg", 53.5511, 9.9937, "Hamburg", "Hamburg"),
            ("Jacksonville, Florida", 30.3322, -81.6557, "Florida", "Florida"),
        ] as [(String, Double, Double, String, String)]
    )
    func localName(point: String, latitude: Double, longitude: Double, name: String, localName: String) {
        let region = lookUp(latitude, longitude).region.value
        #expect(region?.name == name, "\(point)")
        #expect(region?.localName == localName, "\(point)")
    }

    @Test(
        "where ISO 3166-2 codes no region for the place, GeoNames' admin-1 division, said by its source and code",
        arguments: [
            ("Tórshavn, Faroe Islands", 62.0097, -6.7716, "FO.ST", "Streymoy"),
            ("Pristina, Kosovo", 42.6629, 21.1655, "XK.10097360", "Pristina"),
            ("Nouméa, New Caledonia", -22.2758, 166.4580, "NC.02", "South Province"),
            ("Antsiranana, Madagascar", -12.2787, 49.2917, "MG.71", "Diana"),
        ] as [(String, Double, Double, String, String)]
    )
    func geonamesRegion(point: String, latitude: Double, longitude: Double, code: String, name: String) {
        let region = lookUp(latitude, longitude).region.value
        #expect(region?.code == code, "\(point)")
        #expect(region?.name == name, "\(point)")
        #expect(region?.source == .geonamesAdmin1, "\(point)")
    }
}
