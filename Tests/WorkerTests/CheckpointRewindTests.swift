import Kafka
import Testing

@testable import Worker

@Suite("Rewinding to the last checkpoint")
struct CheckpointRewindTests {
    @Test("each assigned partition reads again from its stored offset, else from the first offset it gave")
    func offsets() {
        let stored = TopicPartition("positions", 0)
        let unstored = TopicPartition("commands", 0)
        let untouched = TopicPartition("positions", 1)
        let revoked = TopicPartition("positions", 2)
        let offsets = CheckpointRewind.offsets(
            assigned: [stored, unstored, untouched],
            stored: [stored: 120, revoked: 7],
            firstRead: [stored: 100, unstored: 40, revoked: 3]
        )
        #expect(offsets == [stored: 120, unstored: 40], "a partition that gave nothing keeps its position")
    }
}
