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
        try request(RD_KAFKA_ADMIN_OP_CREATETOPICS, "creating topic '\(topic)'", timeout: timeout) { options, queue in
            var topics: [OpaquePointer?] = [newTopic]
            rd_kafka_CreateTopics(pointer, &topics, 1, options, queue)
        } read: { event throws(KafkaError) in
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

    /// The settings of `topic` as the cluster reports them (librdkafka's Admin API, DescribeConfigs): its own and
    /// the broker's defaults, by name.
    ///
    /// - Throws: ``KafkaError`` with the cluster's reason (an unknown topic, no authorization), or `timedOut`.
    func topicConfiguration(_ topic: String, timeout: Duration) throws(KafkaError) -> [String: String] {
        guard let resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic) else {
            throw KafkaError(code: .invalidArgument, message: "topic '\(topic)': no such resource")
        }
        defer { rd_kafka_ConfigResource_destroy(resource) }
        return try request(RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, "describing topic '\(topic)'", timeout: timeout) {
            options,
            queue in
            var resources: [OpaquePointer?] = [resource]
            rd_kafka_DescribeConfigs(pointer, &resources, 1, options, queue)
        } read: { event throws(KafkaError) in
            var settings: [String: String] = [:]
            var resourceCount = 0
            guard let result = rd_kafka_event_DescribeConfigs_result(event),
                let answers = rd_kafka_DescribeConfigs_result_resources(result, &resourceCount)
            else { return settings }
            for index in 0..<resourceCount {
                guard let answer = answers[index] else { continue }
                let err = rd_kafka_ConfigResource_error(answer)
                guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                    let reason = rd_kafka_ConfigResource_error_string(answer).map { String(cString: $0) } ?? ""
                    throw KafkaError(err, "describing topic '\(topic)': \(reason)")
                }
                var entryCount = 0
                guard let entries = rd_kafka_ConfigResource_configs(answer, &entryCount) else { continue }
                for entryIndex in 0..<entryCount {
                    guard let entry = entries[entryIndex], let name = rd_kafka_ConfigEntry_name(entry) else { continue }
                    settings[String(cString: name)] =
                        rd_kafka_ConfigEntry_value(entry).map { String(cString: $0) } ?? ""
                }
            }
            return settings
        }
    }

    /// Sends one Admin API request (`send` gets its options and the queue its answer comes to), waits for the
    /// answer and hands it to `read` once the request as a whole has succeeded.
    ///
    /// - Throws: ``KafkaError`` naming `what` with the cluster's reason, `timedOut`, or what `read` throws.
    private func request<Answer>(
        _ operation: rd_kafka_admin_op_t,
        _ what: String,
        timeout: Duration,
        send: (_ options: OpaquePointer, _ queue: OpaquePointer) -> Void,
        read: (_ event: OpaquePointer) throws(KafkaError) -> Answer
    ) throws(KafkaError) -> Answer {
        let milliseconds = Int32(clamping: timeout.wholeMilliseconds)
        guard let options = rd_kafka_AdminOptions_new(pointer, operation) else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not allocate admin options")
        }
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errorText = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &errorText, errorText.count)
        if operation == RD_KAFKA_ADMIN_OP_CREATETOPICS {
            _ = rd_kafka_AdminOptions_set_operation_timeout(options, milliseconds, &errorText, errorText.count)
        }
        guard let queue = rd_kafka_queue_new(pointer) else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not allocate a queue")
        }
        defer { rd_kafka_queue_destroy(queue) }
        send(options, queue)
        // The request times out by itself; the extra second lets its timeout answer arrive.
        guard let event = rd_kafka_queue_poll(queue, milliseconds + 1000) else {
            throw KafkaError(code: .timedOut, message: "\(what): no answer")
        }
        defer { rd_kafka_event_destroy(event) }
        let err = rd_kafka_event_error(event)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            let reason = rd_kafka_event_error_string(event).map { String(cString: $0) } ?? ""
            throw KafkaError(err, "\(what): \(reason)")
        }
        return try read(event)
    }
}
