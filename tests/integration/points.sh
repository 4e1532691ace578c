#!/usr/bin/env bash
# Points between events (engine/replay/reach_point.cpp): two threads spin without syscalls
# (tests/programs/spin_loops.c), recorded in chaos mode so that preemptions land inside their
# loops. Every trace replays with the program's output, and most points are found by the
# register-compare trampoline (spin_jumpy's loop jumps into the patched bytes: those entries
# go on at the moved copies). The traces with points replay the same with an int3 and with
# a hardware breakpoint at the point (REWIND_POINT_SEARCH), each of which finds every point
# it is asked for (the breakpoint only where that takes at most 150,000 stops); the
# trampoline takes fewer stops.
. "$(dirname "$0")/lib.sh"
PROGRAM="$TEST_PROGRAMS/spin_loops"
ARGS=(400000 60000)
expected=$("$PROGRAM" "${ARGS[@]}")

# stat FILE N: the Nth number of the `replay -a -v` summary line (1 events, 2 points,
# 3 stops, 4 trampoline, 5 int3, 6 hardware breakpoint, 7 full memory digests).
stat() {
  sed -n 's/.*replayed \([0-9]*\) events; \([0-9]*\) points between events found with \([0-9]*\) stops (\([0-9]*\) with a register-compare trampoline, \([0-9]*\) with an int3, \([0-9]*\) with a hardware breakpoint; \([0-9]*\) full memory digests).*/\1 \2 \3 \4 \5 \6 \7/p' "$1" |
    cut -d' ' -f"$2"
}

replay_with() {  # replay_with METHOD TRACE OUT: replays, checks the output, leaves -v in OUT.err
  REWIND_POINT_SEARCH=$1 "$REWIND" replay -a -v "$2" >"$3.out" 2>"$3.err" </dev/null
  local rc=$?
  [ "$rc" -eq 0 ] || { fail "$3: replay ($1) exited $rc: $(grep -v 'points between' "$3.err" | tail -2)"; return 1; }
  [ "$(cat "$3.out")" = "$expected" ] || { fail "$3: replay ($1) printed $(cat "$3.out"), expected $expected"; return 1; }
  grep -q 'points between events' "$3.err" || { fail "$3: no summary from replay -v"; return 1; }
}

total_points=0 total_jump=0 total_other=0 traces_with_points=0
# Chaos recordings until two traces had points and six points were found by the trampoline
# (usually 3 to 16 recordings). About a third of all points are where their task already
# stands (preempted before it ran again), and a run whose recordings hold few points needs
# more of them: up to 40 (16 once fell short: 8 points in all, 2 by the trampoline).
for i in $(seq 1 40); do
  "$REWIND" record --chaos -o "$WORK/t$i" "$PROGRAM" "${ARGS[@]}" >"$WORK/t$i.rec" 2>&1 </dev/null \
    || { fail "recording $i failed: $(tail -2 "$WORK/t$i.rec")"; continue; }
  replay_with "" "$WORK/t$i" "$WORK/t$i.tramp" || continue
  points=$(stat "$WORK/t$i.tramp.err" 2) jump=$(stat "$WORK/t$i.tramp.err" 4)
  int3=$(stat "$WORK/t$i.tramp.err" 5) hw=$(stat "$WORK/t$i.tramp.err" 6)
  # The recorder preempts only where the trampoline fits (the call_loops case below); a
  # point it could not plan in replay falls back to an int3 or a hardware breakpoint.
  total_points=$((total_points + points)) total_jump=$((total_jump + jump))
  total_other=$((total_other + int3 + hw))
  [ "$jump" -gt 0 ] || continue
  traces_with_points=$((traces_with_points + 1))
  if [ "$traces_with_points" -le 2 ]; then
    # The same trace with a stop at every pass: the same points, each found by that method
    # (or the next one where it cannot be used).
    searched=$((jump + int3 + hw)) tramp_stops=$(stat "$WORK/t$i.tramp.err" 3)
    for m in int3 breakpoint; do
      replay_with "$m" "$WORK/t$i" "$WORK/t$i.$m" || continue
      [ "$(stat "$WORK/t$i.$m.err" 2)" -eq "$points" ] || fail "trace $i: $m found $(stat "$WORK/t$i.$m.err" 2) points, the trampoline $points"
      [ "$(stat "$WORK/t$i.$m.err" 4)" -eq 0 ] || fail "trace $i: $m replay used the trampoline: $(cat "$WORK/t$i.$m.err")"
      used=$(($(stat "$WORK/t$i.$m.err" 5) + $(stat "$WORK/t$i.$m.err" 6)))
      [ "$m" = breakpoint ] && used=$(stat "$WORK/t$i.$m.err" 6)
      [ "$used" -eq "$searched" ] \
        || fail "trace $i: $m was used for $used points, expected $searched: $(cat "$WORK/t$i.$m.err")"
      stops=$(stat "$WORK/t$i.$m.err" 3)
      # At least as many: the trampoline also stops where code enters its patch (spin_jumpy).
      [ "$stops" -ge "$tramp_stops" ] || fail "trace $i: $m took $stops stops, the trampoline $tramp_stops"
      pass "trace $i: $points points found with $m too ($stops stops; the trampoline took $tramp_stops)"
      # A hardware breakpoint stop costs about 35 us here: keep the test short.
      [ "$stops" -le 150000 ] || { echo "($stops passes: no hardware-breakpoint replay of trace $i)"; break; }
    done
  fi
  [ "$traces_with_points" -ge 2 ] && [ "$total_jump" -ge 6 ] && break
done
[ "$total_jump" -ge 3 ] || fail "only $total_jump points found by the trampoline in $i chaos recordings (want 3)"
[ "$total_jump" -gt "$total_other" ] \
  || fail "$total_other points needed an int3 or a hardware breakpoint, only $total_jump found by the trampoline"
pass "$i chaos recordings: $total_points points, $total_jump found by the register-compare trampoline, $total_other by a stop at every pass"

# A loop that calls a function at every pass (tests/programs/call_loops.c): a preemption
# often lands at the call instruction, where no trampoline fits, and replay found such a
# point by a hardware breakpoint stop at every pass since the task's last event: 289,018
# stops (22 s) for a chaos recording, over 60 s for a default one with 10 ms slices, and
# hours with the 2 s slices of a large process. The recorder now preempts a tick later
# there (RecordSession::preempt): every point is found by the trampoline.
CALLS="$TEST_PROGRAMS/call_loops"
expected=$("$CALLS" 100000000)
put_off=0 fallback=0 calls_points=0
for i in $(seq 1 8); do
  mode=--chaos
  [ $((i % 2)) -eq 0 ] && mode=  # default slices too
  "$REWIND" record -v $mode -o "$WORK/calls$i" "$CALLS" 100000000 >"$WORK/calls$i.rec" 2>"$WORK/calls$i.rec.err" </dev/null \
    || { fail "call_loops recording $i failed: $(tail -2 "$WORK/calls$i.rec.err")"; continue; }
  n=$(sed -n 's/.*preemptions, \([0-9]*\) put off a tick.*/\1/p' "$WORK/calls$i.rec.err")
  [ -n "$n" ] || { fail "call_loops: record -v says nothing of put-off preemptions: $(cat "$WORK/calls$i.rec.err")"; continue; }
  put_off=$((put_off + n))
  # A fallback stops at about 100 million passes a second of recording: bounded, not hung.
  REWIND_POINT_SEARCH= timeout 120 "$REWIND" replay -a -v "$WORK/calls$i" >"$WORK/calls$i.out" 2>"$WORK/calls$i.err" </dev/null
  rc=$?
  [ "$rc" -eq 0 ] || { fail "call_loops trace $i ($mode): replay exited $rc (124: over 120 s)"; continue; }
  [ "$(cat "$WORK/calls$i.out")" = "$expected" ] || fail "call_loops trace $i: replay printed $(cat "$WORK/calls$i.out")"
  calls_points=$((calls_points + $(stat "$WORK/calls$i.err" 2)))
  fallback=$((fallback + $(stat "$WORK/calls$i.err" 5) + $(stat "$WORK/calls$i.err" 6)))
  rm -rf "$WORK/calls$i"
  [ "$i" -ge 2 ] && [ "$put_off" -ge 1 ] && break
done
[ "$fallback" -eq 0 ] || fail "call_loops: $fallback of $calls_points points needed a stop at every pass"
[ "$put_off" -ge 1 ] || fail "call_loops: no preemption was put off in $i recordings (none landed at the call?)"
pass "call_loops: $i recordings, $calls_points points all found by the trampoline, $put_off preemptions put off a tick"

# A loop whose state lives in memory only (tests/programs/memory_spin.c, -O0): at most of
# its instructions the registers repeat at every pass, and replay stopped at every pass of a
# point there, with a digest of all memory each time: a replay of 40 ms of recording took
# over 5 minutes. The recorder now steps the task on to an instruction of the loop whose
# registers vary by pass before it names a preemption's point: about one stop a point.
SPIN="$TEST_PROGRAMS/memory_spin"
expected=$("$SPIN" 10)
spin_points=0 spin_stops=0 spin_digests=0
for mode in "" --chaos; do
  "$REWIND" record $mode -o "$WORK/mspin$mode" "$SPIN" 10 >"$WORK/mspin$mode.rec" 2>&1 </dev/null \
    || { fail "memory_spin recording ($mode) failed: $(tail -2 "$WORK/mspin$mode.rec")"; continue; }
  timeout 120 "$REWIND" replay -a -v "$WORK/mspin$mode" >"$WORK/mspin$mode.out" 2>"$WORK/mspin$mode.err" </dev/null
  rc=$?
  [ "$rc" -eq 0 ] || { fail "memory_spin ($mode): replay exited $rc (124: over 120 s)"; continue; }
  [ "$(cat "$WORK/mspin$mode.out")" = "$expected" ] || fail "memory_spin ($mode): replay printed $(cat "$WORK/mspin$mode.out")"
  spin_points=$((spin_points + $(stat "$WORK/mspin$mode.err" 2)))
  spin_stops=$((spin_stops + $(stat "$WORK/mspin$mode.err" 3)))
  spin_digests=$((spin_digests + $(stat "$WORK/mspin$mode.err" 7)))
  rm -rf "$WORK/mspin$mode"
done
[ "$spin_points" -ge 5 ] || fail "memory_spin: only $spin_points points between events in 2 recordings"
[ "$spin_stops" -le $((2 * spin_points + 4)) ] && [ "$spin_digests" -le $((spin_points + 4)) ] \
  || fail "memory_spin: $spin_points points took $spin_stops stops and $spin_digests full memory digests"
pass "memory_spin: $spin_points points found with $spin_stops stops, $spin_digests full memory digests"

# An interpreter's threads: Python's eval loop passes a point with the same registers and
# stack thousands of times (its objects come back from free lists), and only the objects
# its registers point at tell the passes apart (digest_register_windows). Replay checks that
# digest before hashing all memory: each point costs about one full digest, where it cost
# one a pass before (over 10,000 for one point of a program like this one). 20 recordings
# here: one full digest a point in each.
PY=/usr/bin/python3
if [ -x "$PY" ]; then
  cat >"$WORK/threads.py" <<'PYEOF'
import threading
results = {}
def work(n):
    x = 0
    for i in range(100000):
        x = (x * 31 + i * n) % 1000003
    results[n] = x
ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(results.items()))
PYEOF
  # One print, from the main thread: the order of two threads' writes both in flight at once
  # is the kernel's, which replay cannot know.
  py_expected=$("$PY" "$WORK/threads.py")
  py_points=0 py_digests=0
  for i in 1 2; do
    "$REWIND" record --chaos -o "$WORK/py$i" "$PY" "$WORK/threads.py" >"$WORK/py$i.rec" 2>&1 </dev/null \
      || { fail "python recording $i failed: $(tail -2 "$WORK/py$i.rec")"; continue; }
    [ "$(cat "$WORK/py$i.rec")" = "$py_expected" ] || fail "python recording $i printed $(cat "$WORK/py$i.rec")"
    expected=$py_expected
    replay_with "" "$WORK/py$i" "$WORK/py$i.tramp" || continue
    p=$(stat "$WORK/py$i.tramp.err" 2) d=$(stat "$WORK/py$i.tramp.err" 7)
    py_points=$((py_points + p)) py_digests=$((py_digests + d))
  done
  [ "$py_digests" -le $((py_points + 2)) ] \
    || fail "python threads: $py_digests full memory digests for $py_points points"
  pass "python threads: 2 chaos recordings, $py_points points found with $py_digests full memory digests"
else
  echo "($PY not installed: no interpreter case)"
fi
finish
