// Test helper for StateStoreTests: writes batches to a state store as fast as it can until killed.
//
//   state-store-crash-writer DIRECTORY
//
// Batch k changes all 100 devices "device-0"…"device-99": each one's last fix is stamped k, and its one
// pin's announced state is inside for even k and outside for odd k. The same transaction records
// next offset (k + 1) * 100 for input partition positions[0]. A store left by a kill at any moment must
// therefore hold one batch whole: every device stamped k and offset (k + 1) * 100. The writer resumes
// after the last stored batch, and prints "stored batch k" every 50 batches. It exits when its parent goes.
import Foundation
import GeoCore
import PartitionOffsets
import StateStore

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: state-store-crash-writer DIRECTORY\n".utf8))
    exit(2)
}
// A test that crashes before it kills this writer would leave it writing for ever (once for half an hour, under
// every benchmark run meanwhile): an orphan, adopted by init or a subreaper, stops itself.
let parent = getppid()
Thread.detachNewThread {
    while getppid() == parent { Thread.sleep(forTimeInterval: 0.2) }
    exit(3)
}
let key = TopicPartition("positions", 0)
do {
    let store = try StateStore(directory: CommandLine.arguments[1])
    var batch = Int64(try store.loadOffsets()[key] ?? 0) / 100
    let center = Coordinate(latitude: 50.85, longitude: 4.35)!
    let pin = Pin(id: "gate", center: center, radius: 100)!
    while true {
        let devices = (0..<100).map { index in
            DeviceState(
                deviceId: "device-\(index)",
                pins: [TrackedPin(pin: pin, membership: batch.isMultiple(of: 2) ? .inside : .outside)],
                lastFix: Fix(coordinate: center, timestamp: 1_795_000_000_000 + batch, accuracy: 5)
            )
        }
        try store.commit(states: devices, offsets: [key: (batch + 1) * 100])
        if batch % 50 == 0 { FileHandle.standardOutput.write(Data("stored batch \(batch)\n".utf8)) }
        batch += 1
    }
} catch {
    FileHandle.standardError.write(Data("state-store-crash-writer: \(error)\n".utf8))
    exit(1)
}
