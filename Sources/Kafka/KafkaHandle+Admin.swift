import CRdKafka

extension KafkaHandle {
    /// Asks the cluster to create `topic` (librdkafka's Admin API, CreateTopics) and waits for the answer.
    ///
    /// A topic that exists already is not an error.
    ///
    /// - Throws: ``KafkaError`` with the broker's reason (no authorization, a replication factor the cluster
    ///   cannot meet) or librdkafka's (a broker without CreateTopics: `unsupportedFeature`), or `timedOut`.
    func createTopic(
        _ topic: String,
        partitions: Int,
        replicationFactor: Int,
        configuration: [String: String],
        timeout: Duration
    ) throws(KafkaError) {
        var errorText = [CChar](repeating: 0, count: 512)
        guard
            let newTopic = rd_kafka_NewTopic_new(
                topic,
                Int32(clamping: partitions),
                Int32(clamping: replicationFactor),
                &errorText,
                errorText.count
            )
        else {
            throw KafkaError(code: .invalidArgument, message: "topic '\(topic)': \(String(errorBuffer: errorText))")
        }
        defer { rd_kafka_NewTopic_destroy(newTopic) }
        for (key, value) in configuration.sorted(by: { $0.key < $1.key }) {
            let err = rd_kafka_NewTopic_set_config(newTopic, key, value)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "topic setting \(key)") }
        }
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        guard let options = rd_kafka_AdminOptions_new(pointer, RD_KAFKA_ADMIN_OP_CREATETOPICS) else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not allocate admin options")
        }
        defer { rd_kafka_AdminOptions_destroy(options) }
        _ = rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &errorText, errorText.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, milliseconds, &errorText, errorText.count)
        guard let queue = rd_kafka_queue_new(pointer) else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not allocate a queue")
        }
        defer { rd_kafka_queue_destroy(queue) }
        var topics: [OpaquePointer?] = [newTopic]
        rd_kafka_CreateTopics(pointer, &topics, 1, options, queue)
        // The request times out by itself; the extra second lets its timeout answer arrive.
        guard let event = rd_kafka_queue_poll(queue, milliseconds + 1000) else {
            throw KafkaError(code: .timedOut, message: "creating topic '\(topic)': no answer")
        }
        defer { rd_kafka_event_destroy(event) }
        let err = rd_kafka_event_error(event)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            let reason = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? ""
            throw KafkaError(err, "creating topic '\(topic)': \(reason)")
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else { return }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return }
        for index in 0..<count {
            guard let answer = results[index] else { continue }
            let err = rd_kafka_topic_result_error(answer)
            guard err != RD_KAFKA_RESP_ERR_NO_ERROR, err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS else { continue }
            let reason = rd_kafka_topic_result_error_string(answer).map { String(cString: $0) } ?? ""
            throw KafkaError(err, "creating topic '\(topic)': \(reason)")
        }
    }
}
