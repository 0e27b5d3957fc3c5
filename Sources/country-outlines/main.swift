// Writes the operations page's country outlines (simplified boundary rings) from the bundled country index.
//
//   swift run -c release country-outlines [OUTPUT.json]   (default: Sources/Worker/Resources/country-outlines.json)
//
// `make countries` runs it after rebuilding the index; a test checks the committed file is what it writes.
import Countries
import Foundation

let output =
    CommandLine.arguments.count > 1
    ? CommandLine.arguments[1] : "Sources/Worker/Resources/country-outlines.json"
do {
    let bytes = CountryOutlines.json(of: try CountryIndex.bundled())
    try Data(bytes).write(to: URL(fileURLWithPath: output))
    print("\(bytes.count) bytes -> \(output)")
} catch {
    FileHandle.standardError.write(Data("country-outlines: \(error)\n".utf8))
    exit(1)
}
