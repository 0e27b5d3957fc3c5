// Writes the operations page's country outlines (simplified boundary rings) from a country index.
//
//   country-outlines INDEX.idx OUTPUT.json
//
// Run at build time by the CountryOutlinesPlugin for the Worker target (from the bundled index), so the
// outlines always match the index the worker uses.
import Countries
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: country-outlines INDEX.idx OUTPUT.json\n".utf8))
    exit(2)
}
do {
    let index = try CountryIndex(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: arguments[1]))))
    try Data(CountryOutlines.json(of: index)).write(to: URL(fileURLWithPath: arguments[2]))
} catch {
    FileHandle.standardError.write(Data("country-outlines: \(error)\n".utf8))
    exit(1)
}
