import Foundation
import Hummingbird
import Prometheus
import TestSupport
import Testing

@testable import Operations
@testable import Worker

/// `Schemas/openapi.yaml` against the routes the operations server registers: every route documented, every
/// documented path served.
@Suite("OpenAPI document and routes", .timeLimit(.minutes(10)))
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
    static func documentedRoutes(_ document: URL) async throws -> Set<String> {
        let script = """
            import json, sys, yaml
            paths = yaml.safe_load(open(sys.argv[1]))["paths"]
            methods = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
            print(json.dumps([m.upper() + " " + p for p, ops in paths.items() for m in ops if m in methods]))
            """
        let result = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script, document.path])
        #expect(result.status == 0, "\(result.errors)")
        let routes = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String] ?? []
        return Set(routes)
    }

    @Test("every route the server registers is in Schemas/openapi.yaml, and every path there is served")
    func routesMatchTheDocument() async throws {
        let served = Self.servedRoutes()
        let documented = try await Self.documentedRoutes(Self.root.appendingPathComponent("Schemas/openapi.yaml"))
        #expect(served.contains("GET /devices/{deviceId}"), "\(served)")
        #expect(served.subtracting(documented).isEmpty, "served, not documented: \(served.subtracting(documented))")
        #expect(documented.subtracting(served).isEmpty, "documented, not served: \(documented.subtracting(served))")
    }

    @Test("a copy of the document missing a route, or with a path the server does not serve, differs from the server")
    func brokenCopies() async throws {
        let original = try String(
            contentsOf: Self.root.appendingPathComponent("Schemas/openapi.yaml"),
            encoding: .utf8
        )
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID()).yaml")
        defer { try? FileManager.default.removeItem(at: copy) }
        // /devices/nearby's path item renamed: the route served is then undocumented, the renamed path unserved.
        #expect(original.contains("\n  /devices/nearby:\n"))
        try original.replacingOccurrences(of: "\n  /devices/nearby:\n", with: "\n  /devices/near:\n")
            .write(to: copy, atomically: true, encoding: .utf8)
        let documented = try await Self.documentedRoutes(copy)
        let served = Self.servedRoutes()
        #expect(served.subtracting(documented) == ["GET /devices/nearby"])
        #expect(documented.subtracting(served) == ["GET /devices/near"])
    }
}
