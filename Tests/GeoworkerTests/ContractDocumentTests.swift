import Foundation
import TestSupport
import Testing

/// The contract's two documents, `Schemas/asyncapi.yaml` and `Schemas/openapi.yaml`, as documents.
///
/// Valid AsyncAPI 3.0 and OpenAPI 3.1, every `$ref` resolving, every schema file referenced. What the service sends is checked against them in the end-to-end tests
/// (``ServiceTestBed/expectProducedMessagesMatchAsyncAPI()``); the routes in `OpenAPIRoutesTests`.
@Suite("The published contract documents", .timeLimit(.minutes(10)))
struct ContractDocumentTests {
    @Test("asyncapi.yaml and openapi.yaml are valid, their $refs resolve, and every schema file is referenced")
    func documents() async throws {
        let result = try await ServiceTestBed.checkContract("documents")
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(result.output.contains("0 problems"), "\(result.output)")
    }

    @Test(
        "the checker refuses a broken copy: a wrong $ref, an unreferenced schema, an invalid document",
        arguments: [
            ("asyncapi.yaml", "./event.geofence.exited.schema.json", "./event.geofence.exit.schema.json", "no file"),
            ("asyncapi.yaml", "#/components/messages/track'", "#/components/messages/trak'", "points nowhere"),
            ("openapi.yaml", "./device-nearby.schema.json", "./device-near.schema.json", "device-nearby.schema.json"),
            ("asyncapi.yaml", "action: receive", "action: consume", "asyncapi.yaml: not valid"),
            ("openapi.yaml", "operationId: health", "operationId: [health]", "openapi.yaml: not valid"),
        ]
    )
    func brokenCopies(file: String, original: String, broken: String, complaint: String) async throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("schemas-\(UUID())")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: ServiceTestBed.repositoryRoot.appendingPathComponent("Schemas"), to: copy)
        let document = copy.appendingPathComponent(file)
        let text = try String(contentsOf: document, encoding: .utf8)
        #expect(text.contains(original))
        try text.replacingOccurrences(of: original, with: broken).write(to: document, atomically: true, encoding: .utf8)
        let result = try await ServiceTestBed.checkContract("documents", schemas: copy)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains(complaint), "\(result.output)")
    }
}
