#!/usr/bin/env python3
"""Where each thread's CPU went over time: cpu-clock samples per bucket (100 ms unless told), by thread,
from the catch-up's first apply sample on. Stalls show as buckets where `idle` (the swapper) takes the cores.

    python3 tools/perf/timeline.py /tmp/geoworker-perf/worker-....data [bucket-seconds]
"""
import collections
import sys

from perf_samples import apply_window, samples

ROLES = {"gw-apply-0": "A0", "gw-apply-1": "A1", "geoworker": "loop", "gw-checkpoints": "ckpt", "gw-ckpt-deliver": "ckpt",
         "rdk:broker1": "fetch", "kafka-producer-": "reports", "rdk:mock": "mock", "swapper": "idle"}

path = sys.argv[1]
bucket = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
all_samples = list(samples(path))
start, end = apply_window(all_samples)
rows = collections.defaultdict(collections.Counter)
for comm, _, time, event, _, _ in all_samples:
    if event.startswith("cpu-clock") and start - 3 * bucket <= time <= end + 6 * bucket:
        rows[int((time - start) // bucket)][ROLES.get(comm, "other")] += 1
names = ["A0", "A1", "loop", "ckpt", "fetch", "reports", "mock", "idle", "other"]
print("seconds " + " ".join(f"{name:>7}" for name in names))
for key in sorted(rows):
    print(f"{key * bucket:7.2f} " + " ".join(f"{rows[key][name]:7d}" for name in names))
