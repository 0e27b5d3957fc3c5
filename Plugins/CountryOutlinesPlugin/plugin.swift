import Foundation
import PackagePlugin

/// Writes the operations page's country outlines at build time: `country-outlines` simplifies the rings of the bundled
/// country index (`Sources/Countries/Resources/countries.idx`) into `country-outlines.json`, which the target gets as a
/// resource.
///
/// Rebuilt only when the index changes.
@main
struct CountryOutlinesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let index = context.package.directoryURL.appending(path: "Sources/Countries/Resources/countries.idx")
        let output = context.pluginWorkDirectoryURL.appending(path: "country-outlines.json")
        return [
            .buildCommand(
                displayName: "Simplifying the country outlines for the operations page",
                executable: try context.tool(named: "country-outlines").url,
                arguments: [index.path(), output.path()],
                inputFiles: [index],
                outputFiles: [output]
            )
        ]
    }
}
