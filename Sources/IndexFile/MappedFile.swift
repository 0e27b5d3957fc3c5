#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file mapped read-only into memory, its pages read at once, unmapped when the value goes.
///
/// The indexes load from one: their tables are copied out of the page cache once, with no second copy of the
/// file in fresh memory first (a load is most of a start-up).
package final class MappedFile {
    package let bytes: UnsafeRawBufferPointer

    /// Maps the file at `path`.
    ///
    /// - Throws: ``MappedFileError`` with the reason (errno's text) when it cannot be opened, is empty or cannot be
    ///   mapped.
    package init(path: String) throws(MappedFileError) {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { throw MappedFileError(reason: String(cString: strerror(errno))) }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { throw MappedFileError(reason: String(cString: strerror(errno))) }
        guard status.st_size > 0 else { throw MappedFileError(reason: "the file is empty") }
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file, 0), mapping != MAP_FAILED
        else { throw MappedFileError(reason: String(cString: strerror(errno))) }
        bytes = UnsafeRawBufferPointer(start: mapping, count: size)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
}

/// Why a file could not be mapped.
package struct MappedFileError: Error {
    package let reason: String
}
