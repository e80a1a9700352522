#!/usr/bin/env bash
# The tests that depend on real time (marker `timing`: processes, threads, servers, time limits) while CI keeps the CPU
# busy itself: LOAD busy-loop processes (default 2, one per core of CI's box) run beside the 2 workers, and the trap
# ends them on exit. Bounded by `timeout` (UNDER_LOAD_TIMEOUT, default 20m). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
load=()
tests=
stop_load() {
    for pid in "${load[@]}" $tests; do
        kill "$pid" 2>/dev/null || true
    done
    wait "${load[@]}" 2>/dev/null || true
}
trap stop_load EXIT
# a signal ends the script at once (bash runs traps only between commands: the tests run in the background, waited)
trap 'exit 143' TERM
trap 'exit 130' INT
for _ in $(seq "${LOAD:-2}"); do
    "$PY" -c "while True: pass" &
    load+=("$!")
done
echo "under load: ${#load[@]} busy-loop processes (${load[*]})"
timeout "${UNDER_LOAD_TIMEOUT:-20m}" "$PY" -m pytest -q -n 2 -m "timing and not slow" "$@" &
tests=$!
wait "$tests"
