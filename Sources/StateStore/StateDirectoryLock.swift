import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One process per state directory: an advisory lock (`flock`) on the directory's `lock` file, held from
/// ``init(directory:)`` until the lock is released or the process ends.
///
/// The operating system drops the lock when the process dies however it dies, so a restart after SIGKILL is
/// never blocked (Kafka Streams guards its state directories the same way). The holder writes its process id
/// into the file, so that a refused start can name it. Readers that only look (`geoworker pins list`) take
/// no lock.
public final class StateDirectoryLock: Sendable {
    /// The lock file's name inside the state directory.
    public static let fileName = "lock"

    private let descriptor: Int32

    /// Takes the lock of `directory`, creating the directory and the file if needed.
    ///
    /// - Throws: ``StateStoreError`` `lock` naming the directory and, when it can be read, the process that
    ///   holds the lock; `open` when the file cannot be created.
    public init(directory: String) throws(StateStoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StateStoreError(.open, error)
        }
        let path = directory + "/" + Self.fileName
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StateStoreError(code: .open, message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.processId(in: descriptor)
            close(descriptor)
            guard reason == EWOULDBLOCK else {
                throw StateStoreError(code: .lock, message: "cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw StateStoreError(
                code: .lock,
                message: "state directory \(directory) is in use by "
                    + (holder.map { "process \($0)" } ?? "another process")
                    + " (its lock file \(path) is held); each instance needs its own state directory"
            )
        }
        self.descriptor = descriptor
        Self.write(processId: getpid(), to: descriptor)
    }

    deinit {
        // Closing the last descriptor of the file releases the lock.
        close(descriptor)
    }

    /// The process id the holder wrote, if the file holds one.
    private static func processId(in descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    private static func write(processId: Int32, to descriptor: Int32) {
        let text = Array("\(processId)\n".utf8)
        // Best effort: the lock is what counts, the id only helps an operator find the holder.
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}
