public import Addresses
public import AsyncHTTPClient
import Foundation
public import GeoCore
import NIOCore
import NIOHTTP1

/// A reverse geocoder over HTTP: one GET per ask, its answer read by its dialect.
///
/// The thin adapter of the address lookups: what to ask and how to read it is ``AddressProviderDialect``'s, when and
/// how often ``AddressLookupQueue``'s.
public struct AddressProvider: Sendable {
    public let base: String
    public let dialect: AddressProviderDialect
    /// Sent with every request: Nominatim's policy asks each application to name itself.
    public let userAgent: String
    public let timeout: Duration
    private let client: HTTPClient

    public init(
        base: String,
        dialect: AddressProviderDialect,
        userAgent: String,
        timeout: Duration,
        client: HTTPClient
    ) {
        self.base = base
        self.dialect = dialect
        self.userAgent = userAgent
        self.timeout = timeout
        self.client = client
    }

    /// Why an ask got no answer.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What went wrong, as a metrics label: `http-status`, `timeout`, `malformed`, `connection`.
        public let kind: String
        public let description: String
    }

    /// The answers larger than this are refused: a reverse answer is a few kilobytes.
    static let largestAnswer = 1 << 20

    /// Asks for the address at `point`.
    public func lookUp(_ point: Coordinate) async -> Result<AddressProviderDialect.Reading, Failure> {
        guard let url = dialect.reverseURL(base: base, point: point) else {
            return .failure(Failure(kind: "configuration", description: "\(base) is not a URL"))
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "Accept", value: "application/json")
        let limit = TimeAmount.nanoseconds(Int64(timeout / .nanoseconds(1)))
        do {
            let response = try await client.execute(request, timeout: limit)
            let body = try await response.body.collect(upTo: Self.largestAnswer)
            guard response.status == .ok else {
                return .failure(Failure(kind: "http-status", description: "the provider answered \(response.status)"))
            }
            do {
                return .success(try dialect.read(Array(buffer: body)))
            } catch {
                return .failure(Failure(kind: "malformed", description: error.description))
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .failure(Failure(kind: "timeout", description: "no answer within \(timeout)"))
        } catch {
            return .failure(Failure(kind: "connection", description: "\(error)"))
        }
    }
}
