import Foundation
import Hummingbird
import Prometheus
import TestSupport
import Testing

@testable import Worker

/// `Schemas/openapi.yaml` against the routes the operations server registers: every route documented, every
/// documented path served.
@Suite("OpenAPI document and routes")
struct OpenAPIRoutesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `METHOD /path/{parameter}` for every route of the server, device endpoints on.
    static func servedRoutes() -> Set<String> {
        let router = OperationsServer.router(
            configuration: .init(devices: true),
            health: WorkerHealth(),
            registry: PrometheusCollectorRegistry()
        )
        return Set(
            router.routes.map { route in
                let path = "\(route.path)".split(separator: "/", omittingEmptySubsequences: true).map { element in
                    element.hasPrefix(":") ? "{\(element.dropFirst())}" : String(element)
                }
                return "\(route.method.rawValue) /" + path.joined(separator: "/")
            }
        )
    }

    /// `METHOD /path` for every operation of `document` (OpenAPI YAML), read by PyYAML.
    static func documentedRoutes(_ document: URL) throws -> Set<String> {
        let script = """
            import json, sys, yaml
            paths = yaml.safe_load(open(sys.argv[1]))["paths"]
            methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
            print(json.dumps([m.upper() + " " + p for p, ops in paths.items() for m in ops if m in methods]))
            """
        let result = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script, document.path])
        #expect(result.status == 0, "\(result.errors)")
        let routes = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String] ?? []
        return Set(routes)
    }

    @Test("every route the server registers is in Schemas/openapi.yaml, and every path there is served")
    func routesMatchTheDocument() throws {
        let served = Self.servedRoutes()
        let documented = try Self.documentedRoutes(Self.root.appendingPathComponent("Schemas/openapi.yaml"))
        #expect(served.contains("GET /devices/{deviceId}"), "\(served)")
        #expect(served.subtracting(documented).isEmpty, "served, not documented: \(served.subtracting(documented))")
        #expect(documented.subtracting(served).isEmpty, "documented, not served: \(documented.subtracting(served))")
    }
}
