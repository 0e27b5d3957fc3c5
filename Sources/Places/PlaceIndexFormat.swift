/// The places index's file format.
///
/// `places.idx`, little-endian:
///
/// ```
/// "GWPL", u32 version
/// u32 length, UTF-8: what it was built from
/// u32 length, bytes: the time-zone polygons as a country index (codes: IANA names)
/// u32 length, bytes: the region polygons as a country index (codes: ISO 3166-2)
/// u32 count, then per region: u8 length + code (ISO 3166-2, or GeoNames' `CC.XX`), u16 length + name, u16 length +
///   local name
/// u32 count, then per country: u8 length + code, u32 first place, u32 place count
/// u32 count N, then the places in k-d tree order, column by column: u32[N] GeoNames ids, i32[N] latitudes and
///   i32[N] longitudes (1e-7 degree), u32[N] populations, u16[N] regions (0xFFFF none), u8[N] splitting axes,
///   u32[N] ends of their names in the name bytes, u32[N] towns and u32[N] neighbour towns (place numbers; a
///   town's town is itself; 0xFFFFFFFF for no neighbour), then every place in one k-d tree (for points no country
///   claims): u32[N] place numbers in its order and u8[N] its splitting axes
/// u32 length, bytes: the places' names, UTF-8, one after the other
/// ```
enum PlaceIndexFormat {
    static let magic = "GWPL"
    static let version: UInt32 = 5
    static let kind = "places index"
    static let degreeUnits = 10_000_000.0
}
