// Benchmarks of the core: message decoding, the tracker, and state store writes.
//
//   swift run -c release geocore-bench [--only decode|tracker|shapes|activity|map|nearby|million|catalog|encode|store]
//
// 1. Decode: 1M position messages (the documented layout, RFC 3339 or epoch-ms timestamps, varied
//    devices, coordinates with 6 decimals as GPS receivers report them) decoded from their bytes on one core;
//    then the same with full 17-digit coordinates (as computed doubles print), and Foundation's
//    JSONDecoder on 50k of them for comparison.
// 2. Tracker: 100k devices tracking 3 pins each, then 5M positions through DeviceRegistry on one core.
//    Countries come from a stand-in resolver (two hemispheres), so this measures the tracker itself.
//    Shapes: the same wandering devices with 3 circle pins, 3 polygon pins of 100 vertices (the circles drawn
//    as polygons) and 3 circle pins with dwell and approach times, in alternating runs; heap and changelog
//    bytes per pin of each kind.
//    Map: the operations page's questions over 1M devices with 3 circle pins each (what the worker's loop
//    pauses for): the map's device selection for the whole world and for a city, and a status card.
//    Nearby: the nearby grid (issue 32) over 1M devices: placing and moving them, a 5 km query, a city's box.
//    Million: 1M devices with 3 circle pins (and 100k with a 100-vertex polygon): resident bytes per device,
//    positions/s with the bundled country index, a checkpoint of every device, loading them from the store.
//    Catalog: the fleet geofence catalog (issue 64) with 1M geofences: filling it, its resident bytes, a fix's lookup.
//    Activity: trips and speeding (issue 67) on a steady stream with stops, against the same stream with them off.
// 3. Encode: the tracker's events as CloudEvents JSON, one buffer each, as the worker publishes them.
// 4. Store: batches of 10,000 changed devices written to SQLite (position-only, then with pins rewritten).
//
// Each part is in a file of its own; this one reads the arguments and runs the parts asked for.
import Countries
import Foundation
import GeoCore
import Kafka
import StateStore
import TestSupport

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let (whole, fraction) = (ContinuousClock.now - start).components
    return Double(whole) + Double(fraction) / 1e18
}

func report(_ label: String, count: Int, seconds: Double, unit: String) {
    print(String(format: "%@: %.0f %@/s (%d in %.3f s)", label, Double(count) / seconds, unit, count, seconds))
}

var random = SplitMix64(seed: 2026)
let only: String? =
    CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--only" ? CommandLine.arguments[2] : nil
func runs(_ phase: String) -> Bool { only == nil || only == phase }

print("geocore-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores")

if runs("decode") { try benchmarkDecoding() }

// The operations page's questions over a million devices: the worker's loop answers them between batches,
// so their time is a pause of the worker.
if runs("nearby") { benchmarkNearby(random: &random) }
if runs("map") { benchmarkMap(random: &random) }
if runs("shapes") { benchmarkShapes() }
if runs("activity") { benchmarkActivity() }
if runs("million") { try benchmarkMillion() }
if runs("catalog") { benchmarkCatalog(random: &random) }
if runs("tracker") || runs("encode") || runs("store") { try benchmarkTrackerEncodingAndStore(random: &random) }
