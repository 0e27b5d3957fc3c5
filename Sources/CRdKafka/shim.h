// The C surface geoworker uses from librdkafka (Debian's librdkafka-dev, 2.0.2).
// Only the Kafka module imports this; nothing here reaches a public Swift API.
#ifndef GEOWORKER_CRDKAFKA_SHIM_H
#define GEOWORKER_CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// Makes mock broker `broker_id` answer the next request of kind `api_key` it receives `rtt_ms` late, without an
/// error: rd_kafka_mock_broker_push_request_error_rtts() is variadic, which Swift cannot call.
static inline rd_kafka_resp_err_t geoworker_mock_delay_next_request(rd_kafka_mock_cluster_t *mcluster, int32_t broker_id,
                                                                    int16_t api_key, int rtt_ms) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, RD_KAFKA_RESP_ERR_NO_ERROR,
                                                        rtt_ms);
}

/// Enqueues one message with rd_kafka_produceva().
///
/// rd_kafka_producev() is variadic and rd_kafka_vu_t holds an anonymous union, neither of which Swift
/// can call or build comfortably, so the argument vector is assembled here. Key, value and header
/// bytes are copied by librdkafka (RD_KAFKA_MSG_F_COPY): the caller's buffers may be reused at once.
/// On success librdkafka owns `headers`; on failure the caller still does and must destroy them.
static inline rd_kafka_error_t *geoworker_produce(rd_kafka_t *rk, rd_kafka_topic_t *rkt, int32_t partition,
                                                  const void *key, size_t key_size, const void *value,
                                                  size_t value_size, rd_kafka_headers_t *headers,
                                                  int64_t timestamp_ms, void *opaque) {
    rd_kafka_vu_t vus[8];
    size_t n = 0;
    vus[n].vtype = RD_KAFKA_VTYPE_RKT;
    vus[n++].u.rkt = rkt;
    vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
    vus[n++].u.i32 = partition;
    vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
    if (key != NULL) {
        vus[n].vtype = RD_KAFKA_VTYPE_KEY;
        vus[n].u.mem.ptr = (void *)key;
        vus[n++].u.mem.size = key_size;
    }
    vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[n].u.mem.ptr = (void *)value;
    vus[n++].u.mem.size = value_size;
    if (headers != NULL) {
        vus[n].vtype = RD_KAFKA_VTYPE_HEADERS;
        vus[n++].u.headers = headers;
    }
    if (timestamp_ms > 0) {
        vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
        vus[n++].u.i64 = timestamp_ms;
    }
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[n++].u.ptr = opaque;
    return rd_kafka_produceva(rk, vus, n);
}

#endif
