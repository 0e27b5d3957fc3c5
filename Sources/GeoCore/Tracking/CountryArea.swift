#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a device's country was last looked up, and how far around that point no border or coast lies (the resolver's
/// clearance): while the accuracy disc of each next fix stays inside that circle, the fix decides the same country, and
/// the tracker skips the lookup.
///
/// Most fixes of a moving device fall well inside a country, where a lookup could only repeat the last answer.
///
/// Not part of the device's state: nothing stores it, and a device restored from the store or the changelog
/// starts without one (its next fix looks its country up). 16 bytes, kept beside each device's state.
public struct CountryArea: Sendable {
    // The centre in single precision: the rounding (under a metre) is in the slack of `holds`.
    private var latitude: Float = 0
    private var longitude: Float = 0
    /// The cosine of the centre's latitude: metres east per metre of longitude degree, as the resolver measures.
    private var cosine: Float = 0
    /// Metres; 0 for no area.
    private var clearance: Float = 0

    /// No area: the next fix is looked up.
    public static let none = CountryArea()

    private init() {}

    /// The circle of `clearance` metres around `center`, which holds no boundary.
    init(center: Coordinate, clearance: Double) {
        latitude = Float(center.latitude)
        longitude = Float(center.longitude)
        cosine = Float(_cos(center.latitude * Double.pi / 180))
        self.clearance = Float(clearance)
    }

    /// Whether a fix at `coordinate` whose accuracy is `accuracy` metres lies with its whole disc inside the area.
    ///
    /// Measured as the resolver measures (a local frame at the centre), with room for the centre's rounding (a metre)
    /// and 1 % for the frames: the fix's own, which the resolver measures its disc in, and the sphere, which a
    /// nearest-place region's clearance is measured on. Within the 10 km areas the tracker asks for, below 80° of
    /// latitude (no area above), the fix's frame is at most 0.9 % apart from the centre's, and the centre's frame
    /// measures the distance to the fix at most 0.5 % off the sphere's.
    func holds(_ coordinate: Coordinate, accuracy: Double) -> Bool {
        guard clearance > 0 else { return false }
        let north = (coordinate.latitude - Double(latitude)) * LocalPlane.metresPerDegree
        let east =
            LocalPlane.wrapped(coordinate.longitude - Double(longitude)) * LocalPlane.metresPerDegree
            * Double(cosine)
        return ((north * north + east * east).squareRoot() + accuracy) * 1.01 + 2 <= Double(clearance)
    }
}

/// The areas clear of boundaries that the tracker keeps beside a device's state from one fix to the next (neither is
/// stored): its country's, and its region's and time zone's together.
public struct DeviceAreas: Sendable {
    public var country = CountryArea.none
    /// Where the device's region and time zone were last looked up, and how far around no boundary of either lies:
    /// used only while the country's area holds the fix too and the device is in the country it was looked up in
    /// (`placesCountry`; a nearest-place region is looked for among the country's own places).
    public var places = CountryArea.none
    public var placesCountry: String?
    /// The catalog geofences around the device (``CatalogArea``); nil until its first fix decided against the catalog.
    public var catalog: CatalogArea?

    public init() {}
}
