#if canImport(CJemalloc)
import CJemalloc
#endif

/// The allocator the process runs on.
///
/// On Linux the executable links jemalloc, which then serves every allocation in the process (Swift's, librdkafka's and
/// SQLite's): the worker allocates and frees small blocks at a high rate on several threads, which glibc's malloc
/// serves with contention (docs/performance.md).
enum MemoryAllocator {
    /// "jemalloc" and its version when linked; "the C library's malloc" otherwise.
    static var name: String {
        #if canImport(CJemalloc)
        var version: UnsafePointer<CChar>?
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        if mallctl("version", &version, &size, nil, 0) == 0, let version {
            return "jemalloc \(String(cString: version))"
        }
        #endif
        return "the C library's malloc"
    }
}
