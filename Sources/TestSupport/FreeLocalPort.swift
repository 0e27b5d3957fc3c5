import Foundation

/// A port nobody listens on now on 127.0.0.1 (the kernel's pick for a socket bound to port 0), for a helper
/// program that cannot take port 0 and say which it got.
public func freeLocalPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
        }
    }
    guard bound else { throw NoFreePort() }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The kernel gave no port on 127.0.0.1.
public struct NoFreePort: Error {}
