#!/usr/bin/env python3
"""Each thread's time in the catch-up window: on a CPU, preempted (runnable, waiting for a core), or sleeping
(waiting for work, a lock or I/O), from every sched_switch; then the longest sleeps by where they slept.

    python3 tools/perf/thread_states.py /tmp/geoworker-perf/worker-....data
"""
import collections
import re
import sys

from perf_samples import apply_window, samples

SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
KERNEL = ("__schedule", "schedule", "futex", "do_", "__x64", "x64", "entry_", "syscall", "__se_", "__do",
          "hrtimer", "[unknown]", "__futex", "exit_to", "irqentry", "asm_")

all_samples = list(samples(sys.argv[1]))
start, end = apply_window(all_samples)
names, on, preempted, sleeping, why = {}, collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter()
switched_in, switched_out = {}, {}


def overlap(a, b):
    return max(0.0, min(b, end) - max(a, start))


for comm, tid, time, event, trace, frames in all_samples:
    names[tid] = comm  # the latest: a thread renames itself once it starts (gw-apply-0, ...)
    if not event.startswith("sched"):
        continue
    match = SWITCH.search(trace)
    previous, state, following = int(match.group(2)), match.group(3), int(match.group(5))
    names[previous] = match.group(1)
    names[following] = match.group(4)
    if previous in switched_in:
        on[previous] += overlap(switched_in.pop(previous), time)
    user_frames = [frame for frame in frames if not frame.startswith(KERNEL)]
    switched_out[previous] = (time, state, " < ".join(frame[:60] for frame in user_frames[:3]))
    switched_in[following] = time
    if following in switched_out:
        out_time, out_state, where = switched_out.pop(following)
        if out_state.startswith("R"):
            preempted[following] += overlap(out_time, time)
        else:
            sleeping[following] += overlap(out_time, time)
            why[(following, where)] += overlap(out_time, time)
print(f"window {end - start:.2f} s")
for tid, seconds in on.most_common(12):
    print(f"{tid:7d} {names.get(tid, '?'):16s} on {seconds:.2f}  preempted {preempted[tid]:.2f}  sleeping {sleeping[tid]:.2f}")
print()
for (tid, where), seconds in why.most_common(12):
    if seconds >= 0.02:
        print(f"{seconds:.3f} s {names.get(tid)} {where}")
