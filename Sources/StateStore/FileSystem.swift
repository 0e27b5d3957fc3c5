import Foundation

enum FileSystem {
    /// Creates `path` and its parents if they do not exist yet.
    static func createDirectory(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
}
