extension Worker {
    /// When the loop last checkpointed, and when it met its first message.
    struct Pace {
        var lastCheckpoint: ContinuousClock.Instant
        var firstMessage: ContinuousClock.Instant?
    }
}
