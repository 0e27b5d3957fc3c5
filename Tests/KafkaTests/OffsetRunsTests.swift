import PartitionOffsets
import Testing

@Suite("Where a writer's messages landed, exactly", .timeLimit(.minutes(5)))
struct OffsetRunsTests {
    @Test("offsets in order make runs; a gap (another writer's message) starts a new one")
    func inOrder() {
        var landed = OffsetRuns()
        for offset: Int64 in [520, 521, 522, 869, 870] { landed.insert(offset) }
        #expect(landed.runs == [520..<523, 869..<871])
        #expect(landed.count == 5)
        #expect(landed.contains(521) && landed.contains(869))
        #expect(!landed.contains(523) && !landed.contains(700) && !landed.contains(519) && !landed.contains(871))
    }

    @Test("offsets out of order, and twice, end in the same runs")
    func outOfOrder() {
        var landed = OffsetRuns()
        for offset: Int64 in [10, 14, 12, 11, 14, 30, 13, 5, 29] { landed.insert(offset) }
        #expect(landed.runs == [5..<6, 10..<15, 29..<31])
        #expect(landed.count == 8)
        #expect(landed == OffsetRuns([5..<6, 10..<15, 29..<31]))
    }
}
