// service-bench's command line: the parts to run and their sizes (main.swift has the usage in its header).

struct Options {
    var devices = 50_000
    var positions = 1_000_000
    var rate = 50_000
    var seconds = 10
    let partitions = 64
    /// The partition counts the latency part runs on, one after the other.
    var latencyPartitions = [8, 64]
    var restoreDevices = 1_000_000
    /// The steady part's fleet, each device reporting once a second, and how long it is measured.
    var steadyDevices = 20_000
    var steadySeconds = 30
    /// The addresses part's walkers, and how long they walk.
    var addressDevices = 100_000
    var addressSeconds = 300
    /// The catalog part's geofences (`--only catalog`).
    var catalogGeofences = 1_000_000
    /// The one part to run, or nil for all.
    var only: String?
    /// Another build's geoworker to alternate with this one's in the throughput runs.
    var baseline: String?
    /// How many runs of each build alternate: more to tell small differences from this host's noise.
    var pairs = 3
    /// The geoworker to measure, instead of the one built beside this benchmark.
    var worker: String?
    /// The broker: `mock` (librdkafka's mock cluster, in this process) or `noida` (``BenchBroker``).
    var broker = "mock"
    /// Added to every `geoworker run`.
    var workerArguments: [String] = []
    /// Arguments of the baseline's runs alone.
    var baselineArguments: [String] = []

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            let text = iterator.next()
            let value = text.flatMap(Int.init)
            switch (argument, value) {
            case ("--only", _) where text != nil: only = text
            case ("--baseline", _) where text != nil: baseline = text
            case ("--worker", _) where text != nil: worker = text
            case ("--broker", _) where text != nil: broker = text!
            case ("--worker-arg", _) where text != nil: workerArguments.append(text!)
            case ("--baseline-arg", _) where text != nil: baselineArguments.append(text!)
            case ("--devices", let value?): devices = value
            case ("--positions", let value?): positions = value
            case ("--rate", let value?): rate = value
            case ("--seconds", let value?): seconds = value
            case ("--latency-partitions", let value?): latencyPartitions = [value]
            case ("--restore-devices", let value?): restoreDevices = value
            case ("--steady-devices", let value?): steadyDevices = value
            case ("--steady-seconds", let value?): steadySeconds = value
            case ("--address-devices", let value?): addressDevices = value
            case ("--address-seconds", let value?): addressSeconds = value
            case ("--catalog-geofences", let value?) where value > 0: catalogGeofences = value
            case ("--pairs", let value?) where value > 0: pairs = value
            default:
                fail(
                    "usage: service-bench [--devices N] [--positions N] [--rate N] [--seconds S] [--latency-partitions N] "
                        + "[--restore-devices N] [--steady-devices N] [--steady-seconds S] [--address-devices N] [--address-seconds S] [--catalog-geofences N] [--only throughput|compare|restore|startup|latency|steady|geocode|addresses|catalog] [--baseline PATH [--pairs N]] [--worker PATH] [--worker-arg ARG]... [--baseline-arg ARG]... [--broker mock|noida]"
                )
            }
        }
    }

    /// Whether `part` runs: every part without --only; `compare` is the throughput part's alternating runs only.
    func runs(_ part: String) -> Bool { only == nil || only == part || (only == "compare" && part == "throughput") }
}
