#!/usr/bin/env python3
"""The worker's CPU by stage in a record-worker.sh profile: each thread of the worker's process, and the apply
threads' time split by what they were doing (decoding, the registry and tracker, encoding events, handing them to
librdkafka, ...), in seconds and in microseconds per message.

    python3 tools/perf/stages.py FILE MESSAGES [FROM TO]

MESSAGES is how many input messages the window covers (a catch-up: its positions and commands). FROM and TO, in
seconds from the apply threads' first sample, narrow the window (a steady stream: from a second or two after it
starts); by default it is the apply threads' first to last sample. The benchmark's own threads (the mock broker, its
producer) are left out: only the process the apply threads belong to counts. Each cpu-clock sample is a millisecond
of a CPU.
"""
import collections
import subprocess
import sys

from perf_samples import cpu_samples

# An apply thread's sample belongs to the first stage (in this order) whose function is on its stack.
APPLY_STAGES = [
    ("decode the message", ("InputMessage.decode", "InputDecoder")),
    ("registry and tracker", ("DeviceRegistry.apply",)),
    ("encode events", ("CloudEventEncoder", "RecordBuffer.append")),
    ("hand events to librdkafka", ("Producer.send", "geoworker_produce", "rd_kafka_produceva")),
    ("live feed", ("EventFeed",)),
    ("checkpoint's copies", ("takeChanges",)),
    ("each record's own handling (reading it, events copied and freed)", ("DeviceShard.process",)),
    ("waiting for a round", ("DedicatedThread",)),
]
CHECKPOINT_STAGES = [
    ("encode device states", ("DeviceStateEncoding", "encodedDevices")),
    ("SQLite", ("StateStore", "sqlite3")),
]


def read(path):
    """Every cpu-clock sample with its pid, its frames demangled."""
    blocks = list(cpu_samples(path))
    names = sorted({frame for *_, frames in blocks for frame in frames})
    demangled = subprocess.run(
        ["swift", "demangle", "--simplified", "--compact"], input="\n".join(names), capture_output=True, text=True
    ).stdout.split("\n")
    readable = dict(zip(names, demangled))
    return [(comm, pid, tid, time, [readable.get(f, f) for f in frames]) for comm, pid, tid, time, frames in blocks]


def stage(frames, stages):
    for name, markers in stages:
        if any(marker in frame for frame in frames for marker in markers):
            return name
    # Libraries built without frame pointers (librdkafka, SQLite) leave stacks that end in them unreadable.
    innermost = frames[0] if frames else ""
    for library in ("librdkafka", "libsqlite3", "kernel"):
        if library in innermost:
            return f"other: in {library}, caller unknown"
    return "other"


def main():
    path, messages = sys.argv[1], float(sys.argv[2])
    samples = read(path)
    apply = [s for s in samples if s[0].startswith("gw-apply")]
    worker = apply[0][1]
    start, end = min(s[3] for s in apply), max(s[3] for s in apply)
    if len(sys.argv) > 4:
        start, end = start + float(sys.argv[3]), start + float(sys.argv[4])
    mine = [s for s in samples if s[1] == worker and start <= s[3] <= end]
    # librdkafka names every broker thread alike; a handle's threads are made together, in the order the worker
    # makes its clients: the events' producer, the changelog's, then the group's consumer.
    brokers = sorted({s[2] for s in mine if s[0] == "rdk:broker1"})
    handles = ["events producer", "changelog producer", "consumer"]
    rows = collections.Counter()
    for comm, _, tid, _, frames in mine:
        if comm.startswith("gw-apply"):
            rows["apply threads: " + stage(frames, APPLY_STAGES)] += 1
        elif comm.startswith("gw-checkpoints"):
            rows["checkpoint thread: " + stage(frames, CHECKPOINT_STAGES)] += 1
        elif comm == "rdk:broker1":
            index = brokers.index(tid)
            rows["librdkafka: " + (handles[index] if len(brokers) == 3 else f"broker thread {index}")] += 1
        elif comm.startswith("rdk:"):
            rows["librdkafka: other threads"] += 1
        elif comm == "geoworker":
            rows["the loop (poll, merge, route)"] += 1
        elif comm.startswith("kafka-producer"):
            rows["delivery reports (producers' poll threads)"] += 1
        elif comm.startswith("gw-deliveries"):
            rows["checkpoint deliveries and changelog records"] += 1
        else:
            rows["other threads (" + comm + ")"] += 1
    total = sum(rows.values())
    print(f"window {end - start:.2f} s, {messages:.0f} messages, worker CPU {total / 1000:.2f} s "
          f"({total * 1000 / messages:.2f} us per message)")
    for name, count in sorted(rows.items()):
        print(f"{name:75} {count / 1000:6.2f} s {count * 1000 / messages:6.2f} us {count / total * 100:5.1f} %")


main()
