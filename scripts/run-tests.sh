#!/usr/bin/env bash
# Runs the built tests (`make test` builds them first) and, when any fails, repeats each failing test's name and
# recorded issues at the very end: a CI log is often read from its tail, and the suite's progress lines would
# otherwise bury the one line that says what failed.
set -uo pipefail
cd "$(dirname "$0")/.."
log=.build/test-output.log
mkdir -p .build
swift test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "== the tests that failed, and what they recorded (whole output in $log) =="
    # Each ✘ line, and the ↳ lines (an expectation's comment) that follow an issue.
    sed 's/\x1b\[[0-9;]*m//g' "$log" \
        | awk '/^✘ / && !/^✘ Test run with/ { print; issue = /recorded an issue/; next }
               issue && /^ *↳ / { print; next }
               { issue = 0 }' \
        | head -80
fi
exit "$status"
