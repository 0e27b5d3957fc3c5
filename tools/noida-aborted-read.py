#!/usr/bin/env python3
"""Shows noida-db losing committed records for a read_committed reader that starts past an aborted transaction.

A transactional producer's open transaction is aborted by a new producer with the same id (a restarted instance), which
then commits twenty transactions. A read_committed consumer (librdkafka through confluent-kafka) reads them all from
offset 0, and none from any offset past the abort's marker: the broker still names the aborted transaction in its
fetch answer (Apache Kafka names only those whose marker is at or past the fetch offset), and librdkafka takes the
producer's later records for part of it until its next abort. geoworker's restore reads from the partition's
beginning under exactly-once because of it (docs/ARCHITECTURE.md).

Usage: tools/noida-aborted-read.py [PORT]   (needs `pip install noida-db==0.2.3 confluent-kafka`)
"""
import os
import subprocess
import sys
import tempfile
import time

import noida_db
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

port = int(sys.argv[1]) if len(sys.argv) > 1 else 29560
servers = f"127.0.0.1:{port}"
package = os.path.dirname(noida_db.__file__)
broker = subprocess.Popen(
    [os.path.join(package, "noida-db"), "start", "--only", "kafka", "--kafka-port", str(port),
     "--data-dir", tempfile.mkdtemp()],
    cwd=package, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def producer():
    made = Producer({"bootstrap.servers": servers, "transactional.id": "instance-a"})
    made.init_transactions(10)
    return made


def committed_records_from(offset):
    reader = Consumer({"bootstrap.servers": servers, "group.id": "reader", "isolation.level": "read_committed",
                       "enable.partition.eof": True, "enable.auto.commit": False})
    reader.assign([TopicPartition("changelog", 0, offset)])
    count, deadline = 0, time.time() + 10
    while time.time() < deadline:
        message = reader.poll(0.2)
        if message is None:
            continue
        if message.error():
            break
        count += 1
    reader.close()
    return count


try:
    time.sleep(2)
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic("changelog", 1, 1)])["changelog"].result()
    killed = producer()
    killed.begin_transaction()
    for _ in range(5):
        killed.produce("changelog", value=b"aborted")
    killed.flush()
    restarted = producer()  # aborts the open transaction: records 0-4, its marker at 5
    for _ in range(20):
        restarted.begin_transaction()
        for _ in range(100):
            restarted.produce("changelog", value=b"committed")
        restarted.commit_transaction()
    for offset in (0, 5, 6, 500):
        print(f"read_committed from offset {offset}: {committed_records_from(offset)} committed records read")
    print("Apache Kafka: 2000, 2000, 2000 and 1510 (offsets 500 to 2025, less the markers)")
finally:
    broker.kill()
