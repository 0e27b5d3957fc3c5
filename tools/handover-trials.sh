#!/usr/bin/env bash
# The multi-instance tests, each run many times with a seed of its own: an instance killed and restarted on its old
# state, one stopped past its session and resumed (three stop moments a run), a rolling restart, one joining, the
# exactly-once instance killed at five moments on noida-db, and an instance back with an old state after the other
# changed pins (ServiceReturnTests: its order forced, killed, paused, paused through the end on the mock, SIGTERM on
# noida-db; and the reporter's shape, the pin changes produced a seeded moment after the instance was killed or paused,
# on six partitions), and an instance killed by itself between a checkpoint's steps or after a restore
# (ServiceCrashPointTests: the same moments every run, its timing left to the machine). Each run picks its moments from its seed (Tests/GeoworkerTests/HandoverTrial.swift; one case of
# each parameterized test per seed, where `make test` runs two) and prints them with
# its result; every run compares the events read back, by id and content, with a single instance's, and fails on any
# invariant a member logged as broken. A failing run's log is kept; GEOWORKER_TRIAL_SEED=<seed> with the same filter
# repeats it.
#
# usage: tools/handover-trials.sh [RUNS (10)] [OUTPUT_DIR (.build/handover-trials)] [TEST...]
# About thirteen minutes a run of the seven on two cores (six and a half without ServiceReturnTests).
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
output=${2:-.build/handover-trials}
shift $(($# > 2 ? 2 : $#))
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
    tests=(
        ServiceFailoverTests/killedAndRestarted
        ServiceFencingTests/twoInstances
        ServiceScaleOutTests/rollingRestart
        ServiceScaleOutTests/joinerGetsState
        ServiceExactlyOnceTests/killedAndRestarted
        ServiceReturnTests
        ServiceCrashPointTests
    )
fi
mkdir -p "$output"
swift build --build-tests >"$output/build.log" 2>&1 || { tail -20 "$output/build.log"; exit 1; }

declare -A passed failed
for run in $(seq 1 "$runs"); do
    for test in "${tests[@]}"; do
        seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
        log="$output/${test//\//-}-$seed.log"
        started=$(date +%s)
        GEOWORKER_TRIAL_SEED=$seed timeout 900 swift test --skip-build --filter "$test" >"$log" 2>&1
        status=$?
        moments=$(grep -o 'trial: [a-z ]* [0-9.]* seconds' "$log" | sed 's/^trial: //' | paste -sd ',' -)
        if [ $status -eq 0 ] && grep -q '✔ Test run' "$log"; then
            passed[$test]=$((${passed[$test]:-0} + 1))
            result=passed
            rm -f "$log"
        else
            failed[$test]=$((${failed[$test]:-0} + 1))
            result="FAILED (log: $log)"
            grep -E 'missing|do not emit|differ|invariant broken|one id, two|more than once' "$log" | head -3 | cut -c1-400
        fi
        echo "run $run $test seed $seed [$moments] $((($(date +%s) - started)))s: $result"
    done
done
echo
for test in "${tests[@]}"; do
    echo "$test: ${passed[$test]:-0} passed, ${failed[$test]:-0} failed"
done
total_failed=0
for test in "${tests[@]}"; do total_failed=$((total_failed + ${failed[$test]:-0})); done
[ $total_failed -eq 0 ]
