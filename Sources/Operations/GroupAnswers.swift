import Foundation
import Hummingbird
import JSONCodec
import NIOCore
import Worker

/// The device endpoints' answers for the whole group, from any of its instances (`http.advertisedAddress` set): a
/// card this instance does not hold is forwarded to the instance that holds the device's partition (not redirected:
/// it works behind a load balancer, and the token goes with it); the nearby answer and the map are gathered from every
/// instance that holds partitions and merged (``GroupMerge``), naming the instances that did not answer within
/// `http.peerTimeoutMs` rather than failing whole.
///
/// While partitions move (nobody holds one now), the answers say so: a card is 503 with `Retry-After`, a merged answer
/// lists the partitions it lacks.
struct GroupAnswers: Sendable {
    let directory: GroupDirectory
    let peers: PeerClient

    /// Whether a request wants this instance's own answer only (`scope=local`): asked by a peer
    /// (``PeerClient``), or by an operator.
    static func isLocal(_ request: Request) -> Bool {
        request.uri.queryParameters.get("scope") == "local"
    }

    /// The card of a device this instance does not hold (`notHeld`, its message): from the instance that holds the
    /// device's partition.
    func card(of deviceId: String, notHeldHere message: String) async -> Response {
        let candidates = directory.partitions(ofDevice: deviceId)
        var moving: [Int32] = []
        var problems: [String] = []
        var askedElsewhere: [String] = []
        var asked: Set<String> = []
        for partition in candidates {
            guard let holder = directory.holder(of: partition) else {
                moving.append(partition)
                continue
            }
            // This instance answered already; an instance asked for the other candidate partition said its piece.
            guard holder.instance != directory.instance, asked.insert(holder.instance).inserted else { continue }
            let path =
                "/devices/" + (deviceId.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? deviceId)
            switch await peers.get(holder.address, path) {
            case .answered(200, let body, _):
                return DeviceEndpoints.bytes(body, type: "application/json", caching: "no-store")
            case .answered(404, _, _):
                askedElsewhere.append("\(holder.instance) (partition \(partition))")
            case .answered(401, _, _), .answered(403, _, _):
                problems.append(
                    "instance \(holder.instance), which holds partition \(partition), refused this instance's token "
                        + "(every instance of a group needs the same http.token)"
                )
            case .answered(let status, let body, _):
                problems.append(
                    "instance \(holder.instance), which holds partition \(partition), answered \(status): "
                        + String(decoding: body.prefix(300), as: UTF8.self)
                )
            case .failed(let why):
                problems.append(
                    "instance \(holder.instance) at \(holder.address), which holds partition \(partition), did not "
                        + "answer: \(why)"
                )
            }
        }
        if !problems.isEmpty {
            return Self.retryLater(.gatewayTimeout, problems.joined(separator: "; "))
        }
        if !moving.isEmpty {
            return Self.retryLater(
                .serviceUnavailable,
                "device \(deviceId)'s input partition \(moving.map(String.init).joined(separator: " or ")) is moving "
                    + "between instances (no instance holds it now): ask again shortly"
            )
        }
        if !askedElsewhere.isEmpty {
            return DeviceEndpoints.error(
                .notFound,
                "device \(deviceId) is unknown: the instance holding its input partition, "
                    + askedElsewhere.joined(separator: " and ") + ", has applied no message of it"
            )
        }
        return DeviceEndpoints.error(.notFound, message)
    }

    /// The nearby answer of every instance, merged.
    ///
    /// - Parameters:
    ///   - path: the request's path and query, asked of the others.
    ///   - limit: the question's limit, applied once to the merged devices.
    ///   - local: this instance's own answer (JSON), or why there is none.
    /// - Returns: the merged answer.
    func nearby(path: String, limit: Int, local: Result<[UInt8], Problem>) async -> Response {
        let gathered = await gather(path: path, local: local)
        let holdings = Dictionary(uniqueKeysWithValues: gathered.parts.map { ($0.instance, Set($0.partitions)) })
        let merged = GroupMerge.nearby(gathered.parts, limit: limit, moving: gathered.moving) { instance, deviceId in
            directory.partitions(ofDevice: deviceId).contains { holdings[instance]?.contains($0) ?? false }
        }
        return DeviceEndpoints.bytes(merged, type: "application/json", caching: "no-store")
    }

    /// The map of every instance, merged.
    func map(path: String, limit: Int, local: Result<[UInt8], Problem>) async -> Response {
        let gathered = await gather(path: path, local: local)
        let merged = GroupMerge.map(gathered.parts, limit: limit, moving: gathered.moving)
        return DeviceEndpoints.bytes(merged, type: "application/json", caching: "no-store")
    }

    /// Why this instance has no answer of its own (it is restoring partitions, or stopping).
    struct Problem: Error {
        let message: String
    }

    /// `GET /group`: the instances and the partitions each holds, and the partitions moving.
    func description() -> Response {
        let (members, moving) = directory.members()
        var json = JSONWriter()
        json.beginObject()
        json.member("instance", directory.instance)
        json.partitions("movingPartitions", moving)
        json.key("instances")
        json.beginArray()
        for member in members {
            json.beginObject()
            json.instance(member.instance, at: member.address, holding: member.partitions)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return DeviceEndpoints.bytes(json.takeOutput(), type: "application/json", caching: "no-store")
    }

    /// Every holding instance's part: this one's as given, the others' asked at once.
    private func gather(
        path: String,
        local: Result<[UInt8], Problem>
    ) async -> (parts: [GroupMerge.Part], moving: [Int32]) {
        let (members, moving) = directory.members()
        let mine = members.first { $0.instance == directory.instance }
        var parts = [
            GroupMerge.Part(
                instance: directory.instance,
                address: mine?.address ?? "",
                partitions: mine?.partitions ?? [],
                answer: try? local.get(),
                problem: { if case .failure(let problem) = local { problem.message } else { nil } }()
            )
        ]
        let others = members.filter { $0.instance != directory.instance }
        let answers = await withTaskGroup(of: (Int, GroupMerge.Part).self) { group in
            for (index, member) in others.enumerated() {
                group.addTask {
                    let outcome = await peers.get(member.address, path)
                    let (answer, problem): ([UInt8]?, String?) =
                        switch outcome {
                        case .answered(200, let body, _): (body, nil)
                        case .answered(let status, let body, _):
                            (nil, "answered \(status): " + String(decoding: body.prefix(300), as: UTF8.self))
                        case .failed(let why): (nil, why)
                        }
                    return (
                        index,
                        GroupMerge.Part(
                            instance: member.instance,
                            address: member.address,
                            partitions: member.partitions,
                            answer: answer,
                            problem: problem
                        )
                    )
                }
            }
            var answers: [(Int, GroupMerge.Part)] = []
            for await answer in group { answers.append(answer) }
            return answers.sorted { $0.0 < $1.0 }.map(\.1)
        }
        parts += answers
        return (parts, moving)
    }

    /// An error answer with `Retry-After: 1`.
    static func retryLater(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var response = DeviceEndpoints.error(status, message)
        response.headers[.retryAfter] = "1"
        return response
    }
}
