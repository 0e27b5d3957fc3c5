#!/bin/bash
# Runs geoworker under perf: cpu-clock samples every millisecond with frame-pointer stacks, and every
# sched_switch (so a thread's time off the CPU is seen, waiting or preempted), system-wide. Give it to
# service-bench as the worker:
#   .build/release/service-bench --only throughput --positions 1200000 --worker "$PWD/tools/perf/record-worker.sh"
# Each run writes $PERF_DIR/worker-<nanoseconds>.data (PERF_DIR defaults to /tmp/geoworker-perf); WORKER picks
# another geoworker. Then: timeline.py, thread_states.py, self_time.py (this directory).
set -euo pipefail
directory="${PERF_DIR:-/tmp/geoworker-perf}"
mkdir -p "$directory"
here="$(cd "$(dirname "$0")/../.." && pwd)"
exec perf record -q -a -e cpu-clock/period=1001001/ -e sched:sched_switch --call-graph=fp \
    -o "$directory/worker-$(date +%s%N).data" -- "${WORKER:-$here/.build/release/geoworker}" "$@"
