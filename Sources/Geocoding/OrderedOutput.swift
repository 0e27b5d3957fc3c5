import Foundation

/// Writes ranges of one buffer to a file in the order given, with `writev`: the answers of a stretch, written in
/// the order their lines were looked up, go out in input order without being copied into that order first.
enum OrderedOutput {
    /// At most this many ranges per call (the system's `IOV_MAX` is 1024 on Linux).
    private static let rangesPerCall = 1024

    /// Writes `ranges` of `bytes`, in order, to `file`; ranges that follow each other in `bytes` go as one.
    static func write(_ ranges: [Range<Int>], of bytes: UnsafeRawBufferPointer, to file: Int32) throws {
        guard let base = bytes.baseAddress else { return }
        var pieces: [iovec] = []
        pieces.reserveCapacity(rangesPerCall)
        for range in ranges where !range.isEmpty {
            if let last = pieces.last, UnsafeRawPointer(last.iov_base) + last.iov_len == base + range.lowerBound {
                pieces[pieces.count - 1].iov_len += range.count
                continue
            }
            if pieces.count == rangesPerCall {
                try writeAll(&pieces, to: file)
                pieces.removeAll(keepingCapacity: true)
            }
            let start = UnsafeMutableRawPointer(mutating: base + range.lowerBound)
            pieces.append(iovec(iov_base: start, iov_len: range.count))
        }
        try writeAll(&pieces, to: file)
    }

    /// Writes every piece, again from where a short write stopped.
    private static func writeAll(_ pieces: inout [iovec], to file: Int32) throws {
        var first = 0
        while first < pieces.count {
            let written = pieces.withUnsafeBufferPointer { all in
                writev(file, all.baseAddress! + first, Int32(all.count - first))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw GeocodeError("cannot write the output: \(String(cString: strerror(errno)))")
            }
            var rest = written
            while first < pieces.count && rest >= pieces[first].iov_len {
                rest -= pieces[first].iov_len
                first += 1
            }
            if rest > 0 {
                pieces[first].iov_base += rest
                pieces[first].iov_len -= rest
            }
        }
    }
}
