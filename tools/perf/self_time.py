#!/usr/bin/env python3
"""The functions a thread spends its own time in (self), and what calls one of them (callers).

    python3 tools/perf/self_time.py FILE THREAD-NAME-PREFIX             # e.g. gw-apply, geoworker, gw-checkpoints
    python3 tools/perf/self_time.py FILE THREAD-NAME-PREFIX FUNCTION    # callers of FUNCTION (a substring)
"""
import collections
import sys

from perf_samples import apply_window, samples

path, prefix = sys.argv[1], sys.argv[2]
target = sys.argv[3] if len(sys.argv) > 3 else None
all_samples = list(samples(path))
start, end = apply_window(all_samples)
counts, total = collections.Counter(), 0
for comm, _, time, event, _, frames in all_samples:
    if not event.startswith("cpu-clock") or not comm.startswith(prefix) or not start <= time <= end or not frames:
        continue
    total += 1
    if target is None:
        counts[frames[0]] += 1
        continue
    for index, frame in enumerate(frames):
        if target in frame:
            callers = [caller for caller in frames[index + 1:] if not caller.startswith("[unknown]")][:3]
            counts[" < ".join(caller[:70] for caller in callers)] += 1
            break
print(f"{total} samples of {prefix}* in the catch-up window")
for key, count in counts.most_common(40):
    print(f"{count / total * 100:5.1f}% {key[:160]}")
