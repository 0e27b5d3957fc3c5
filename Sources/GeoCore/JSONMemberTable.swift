/// The member names a decoder knows, as an enum whose case names are the JSON names, matched by length
/// first and then by bytes: one length lookup and usually one comparison per member, where a chain of
/// string comparisons would try every name in turn.
struct JSONMemberTable<Member: CaseIterable & Sendable>: Sendable {
    /// Names and members by name length in UTF-8 bytes.
    private let byLength: [[(name: [UInt8], member: Member)]]

    init() {
        var byLength: [[(name: [UInt8], member: Member)]] = []
        for member in Member.allCases {
            let name = Array(String(describing: member).utf8)
            while byLength.count <= name.count { byLength.append([]) }
            byLength[name.count].append((name, member))
        }
        self.byLength = byLength
    }

    /// The member `key` names, or nil for a name the decoder ignores.
    func member(_ key: JSONScanner.Key, in scanner: JSONScanner) -> Member? {
        guard key.hasEscapes else { return member(named: scanner.content(of: key)) }
        return scanner.withDecodedContent(of: key) { member(named: $0) }
    }

    private func member(named bytes: UnsafeRawBufferPointer) -> Member? {
        guard bytes.count < byLength.count else { return nil }
        for candidate in byLength[bytes.count] where candidate.name.elementsEqual(bytes) {
            return candidate.member
        }
        return nil
    }
}
