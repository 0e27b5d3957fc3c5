/// A device's state in ``DeviceStateEncoding``, with what its store row and changelog record are keyed and
/// placed by: encoded once per checkpoint, then sent to the changelog and written to the store as they are.
public struct EncodedDevice: Hashable, Sendable {
    public let deviceId: String
    /// The device's input partition: the changelog partition its record goes to.
    public let partition: Int32
    public let bytes: [UInt8]

    public init(deviceId: String, partition: Int32, bytes: [UInt8]) {
        self.deviceId = deviceId
        self.partition = partition
        self.bytes = bytes
    }

    public init(_ state: DeviceState) {
        self.init(deviceId: state.deviceId, partition: state.inputPartition, bytes: DeviceStateEncoding.encode(state))
    }
}
