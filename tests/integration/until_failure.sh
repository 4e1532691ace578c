#!/usr/bin/env bash
# rewind record --until-failure: records until the race sample fails, keeps only that trace,
# says how many runs it took, and the kept trace replays the failure.
. "$(dirname "$0")/lib.sh"
"$REWIND" record --chaos --until-failure=60 "$SAMPLES_BIN/race_counter" >"$WORK/out" 2>"$WORK/err"
rc=$?
cat "$WORK/err"
if [ "$rc" -eq 1 ]; then
  grep -q "^rewind: run [0-9]* of at most 60 failed (exit status 1); trace: .*/race_counter-[0-9]*$" "$WORK/err" \
    && pass "stopped at the failing run" || fail "message: $(cat "$WORK/err")"
  [ "$(ls "$REWIND_TRACE_DIR" | grep -c '^race_counter-')" -eq 1 ] && pass "only the failing trace is kept" \
    || fail "traces kept: $(ls "$REWIND_TRACE_DIR")"
  "$REWIND" replay -a >"$WORK/rep" 2>&1
  [ $? -eq 1 ] && grep -q "^FAIL: lost" "$WORK/rep" && pass "the kept trace replays the failure: $(head -1 "$WORK/rep")" \
    || fail "replay of the kept trace: $(cat "$WORK/rep")"
else
  fail "no failure in 60 chaos runs (exit $rc)"
fi
# A program that never fails: all runs, and the message says so.
"$REWIND" record --until-failure=3 true 2>"$WORK/err2"
[ $? -eq 0 ] && grep -q "no failure in 3 runs" "$WORK/err2" && pass "$(cat "$WORK/err2")" || fail "$(cat "$WORK/err2")"
finish
