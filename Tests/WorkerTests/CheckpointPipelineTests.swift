import GeoCore
import Kafka
import Testing

@testable import Worker

/// The checkpoint pipeline's transitions, without a thread, Kafka or SQLite: the orders that are hard to
/// reach from outside (a stop while a checkpoint waits for its deliveries, a failure while the next one waits
/// to be handed over) are plain calls here.
@Suite("Checkpoint pipeline states", .timeLimit(.minutes(5)))
struct CheckpointPipelineTests {
    let positions0 = TopicPartition("positions", 0)

    func checkpoint(next offset: Int64) -> Checkpoint {
        Checkpoint(offsets: [positions0: offset])
    }

    let refused = WorkerError(.delivery, "could not deliver to events")

    /// Each action by name, so that a test reads as the sequence of steps it expects.
    func name(_ action: CheckpointPipeline.SubmitAction) -> String {
        switch action {
        case .write: "write"
        case .waitForWriter: "waitForWriter"
        case .skip: "skip"
        case .fail(let error): "fail(\(error.code))"
        }
    }

    func name(_ action: CheckpointPipeline.WaitAction) -> String {
        switch action {
        case .done: "done"
        case .waitForWriter: "waitForWriter"
        case .fail(let error): "fail(\(error.code))"
        }
    }

    func name(_ action: CheckpointPipeline.StopAction) -> String {
        switch action {
        case .stopThread: "stopThread"
        case .waitForWriter: "waitForWriter"
        }
    }

    /// The checkpoint a `.write` action hands over, or nil for any other action.
    func written(_ action: CheckpointPipeline.SubmitAction) -> Checkpoint? {
        if case .write(let checkpoint) = action { return checkpoint }
        return nil
    }

    @Test("a checkpoint goes to the writer; the next waits until it is written; the newest written offsets count")
    func oneAtATime() {
        var pipeline = CheckpointPipeline()
        #expect(written(pipeline.submit(checkpoint(next: 10)))?.offsets == [positions0: 10])
        #expect(
            name(pipeline.submit(checkpoint(next: 20))) == "waitForWriter",
            "a second checkpoint must wait for the first"
        )
        #expect(name(pipeline.waitUntilWritten()) == "waitForWriter", "nothing is written yet")
        #expect(pipeline.takeWritten() == .init(), "nothing counts as written before it is")

        pipeline.writeFinished(.success([positions0: 10]))
        #expect(written(pipeline.submit(checkpoint(next: 20)))?.offsets == [positions0: 20])
        pipeline.writeFinished(.success([positions0: 20]))
        #expect(name(pipeline.waitUntilWritten()) == "done", "both are written")
        #expect(
            pipeline.takeWritten() == .init(count: 2, offsets: [positions0: 20]),
            "two written, the newest offset per partition"
        )
        #expect(pipeline.takeWritten() == .init(), "taken once")
    }

    @Test("an empty checkpoint is skipped and leaves the pipeline idle")
    func emptyIsSkipped() {
        var pipeline = CheckpointPipeline()
        #expect(
            name(pipeline.submit(Checkpoint())) == "skip",
            "an empty checkpoint has nothing to write"
        )
        #expect(written(pipeline.submit(checkpoint(next: 1))) != nil, "still idle")
    }

    @Test("a failure while the next checkpoint waits: the waiting one is dropped, and every later call fails")
    func failureWhileOneWaits() {
        var pipeline = CheckpointPipeline()
        _ = pipeline.submit(checkpoint(next: 10))
        #expect(name(pipeline.submit(checkpoint(next: 20))) == "waitForWriter", "the second waits")
        pipeline.writeFinished(.failure(refused))
        #expect(
            name(pipeline.submit(checkpoint(next: 20))) == "fail(delivery)",
            "the waiting checkpoint must not be written after a failure"
        )
        #expect(name(pipeline.waitUntilWritten()) == "fail(delivery)", "waiters learn of the failure")
        #expect(pipeline.takeWritten() == .init(), "nothing of a failed checkpoint counts as written")
        #expect(pipeline.failure?.code == .delivery)
        #expect(name(pipeline.stop()) == "stopThread", "a failed pipeline has nothing in hand: its thread can stop")
    }

    @Test("a stop while a checkpoint waits for its deliveries lets it finish, then stops")
    func stopWhileWriting() {
        var pipeline = CheckpointPipeline()
        _ = pipeline.submit(checkpoint(next: 10))
        #expect(name(pipeline.stop()) == "waitForWriter", "the write in hand must finish first")
        #expect(name(pipeline.stop()) == "waitForWriter", "asking again changes nothing while it writes")
        pipeline.writeFinished(.success([positions0: 10]))
        #expect(name(pipeline.stop()) == "stopThread", "written: the thread can stop")
        #expect(name(pipeline.waitUntilWritten()) == "done", "a stopped pipeline has everything written")
        #expect(pipeline.takeWritten().offsets == [positions0: 10], "the last checkpoint is written")
    }

    @Test("a stop while a checkpoint waits, and then its deliveries fail: the failure is what remains")
    func stopThenFailure() {
        var pipeline = CheckpointPipeline()
        _ = pipeline.submit(checkpoint(next: 10))
        _ = pipeline.stop()
        pipeline.writeFinished(.failure(refused))
        #expect(pipeline.failure?.code == .delivery)
        #expect(name(pipeline.stop()) == "stopThread", "nothing in hand any more")
    }

    @Test("a stop with nothing in hand stops at once")
    func stopWhenIdle() {
        var pipeline = CheckpointPipeline()
        #expect(name(pipeline.stop()) == "stopThread", "idle: stop at once")
    }

    @Test("a refused delivery holds the pipeline until the worker rewinds; then checkpoints are written again")
    func refusalThenRewind() {
        var pipeline = CheckpointPipeline()
        _ = pipeline.submit(checkpoint(next: 10))
        pipeline.writeFinished(.failure(refused))
        #expect(pipeline.failure?.code == .delivery)
        #expect(name(pipeline.submit(checkpoint(next: 20))) == "fail(delivery)", "nothing is written meanwhile")
        #expect(pipeline.takeWritten() == .init(), "the refused checkpoint never counts as written")

        pipeline.rewound()
        #expect(pipeline.failure == nil)
        #expect(written(pipeline.submit(checkpoint(next: 10))) != nil, "the same input, applied again, is written")
        pipeline.writeFinished(.success([positions0: 10]))
        #expect(pipeline.takeWritten() == .init(count: 1, offsets: [positions0: 10]))
    }

    @Test("a failure of the store is final: rewinding does not undo it")
    func storeFailureIsFinal() {
        var pipeline = CheckpointPipeline()
        _ = pipeline.submit(checkpoint(next: 10))
        pipeline.writeFinished(.failure(WorkerError(.state, "disk full")))
        pipeline.rewound()
        #expect(name(pipeline.submit(checkpoint(next: 10))) == "fail(state)")
    }
}
