#!/usr/bin/env bash
# Crash safety: a tracee killed with SIGKILL gives a complete trace that replays to the same
# kill (also a multi-threaded program killed at random moments while its threads are
# preempted); a recorder killed with SIGKILL leaves a trace that replays up to its last complete
# event and says so.
. "$(dirname "$0")/lib.sh"
need sh
need sleep
# 1. The program is killed from outside while recorded.
"$REWIND" record -o "$WORK/killed" sh -c 'echo started; echo $$ > '"$WORK"'/pid; exec sleep 60' >"$WORK/k.out" 2>&1 &
rec=$!
for _ in $(seq 100); do [ -s "$WORK/pid" ] && break; sleep 0.1; done
sleep 0.5
kill -KILL "$(cat "$WORK/pid")"
wait $rec
rc=$?
[ "$rc" -eq 137 ] && pass "record exits 137 when the program is killed" || fail "record exited $rc"
"$REWIND" replay -a "$WORK/killed" >"$WORK/k.rep" 2>&1
rrc=$?
[ "$rrc" -eq 137 ] && cmp -s "$WORK/k.out" "$WORK/k.rep" && pass "replay reproduces output and SIGKILL (137)" \
  || fail "replay of the killed program: rc $rrc, output $(cat "$WORK/k.rep")"

# 1b. A multi-threaded program killed while the recorder preempts its threads: the kill can
# land while a preemption point is being taken, as its threads die. Eight random moments.
for i in 1 2 3 4 5 6 7 8; do
  "$REWIND" record -o "$WORK/mt$i" "$TEST_PROGRAMS/threads_forever" >"$WORK/mt$i.out" 2>&1 &
  rec=$!
  for _ in $(seq 100); do [ -s "$WORK/mt$i.out" ] && break; sleep 0.05; done
  sleep "0.$((RANDOM % 30 + 5))"
  kill -KILL "$(awk '{print $2}' "$WORK/mt$i.out")"
  wait $rec
  rc=$?
  "$REWIND" replay -a "$WORK/mt$i" >"$WORK/mt$i.rep" 2>&1
  rrc=$?
  if [ "$rc" -ne 137 ] || [ "$rrc" -ne 137 ] || ! cmp -s "$WORK/mt$i.out" "$WORK/mt$i.rep"; then
    fail "threads killed at moment $i: record $rc, replay $rrc: $(tail -1 "$WORK/mt$i.rep")"
  fi
done
pass "a multi-threaded program killed at 8 random moments: each trace replays to the kill"

# 2. rewind record itself is killed.
rm -f "$WORK/pid"
"$REWIND" record -o "$WORK/cut" sh -c 'echo one; echo two; echo $$ > '"$WORK"'/pid; exec sleep 60' >"$WORK/c.out" 2>&1 &
rec=$!
for _ in $(seq 100); do [ -s "$WORK/pid" ] && break; sleep 0.1; done
sleep 0.5  # let the recorder flush its chunks (it flushes at least every 100 ms)
kill -KILL $rec
wait $rec 2>/dev/null
[ -f "$WORK/cut/processes" ] && fail "an interrupted trace must not look complete"
"$REWIND" replay -a "$WORK/cut" >"$WORK/c.rep" 2>"$WORK/c.err"
rrc=$?
grep -q "^rewind: trace ends at event [0-9]* (recording was interrupted)$" "$WORK/c.err" \
  && pass "replay says: $(cat "$WORK/c.err")" || fail "no interruption message: $(cat "$WORK/c.err")"
[ "$rrc" -eq 1 ] || fail "replay of an interrupted trace exited $rrc, expected 1"
[ "$(cat "$WORK/c.rep")" = "$(printf 'one\ntwo')" ] && pass "interrupted trace replays the output up to its last event" \
  || fail "interrupted replay printed: $(cat "$WORK/c.rep")"
"$REWIND" ps "$WORK/cut" | grep -q "sleep 60" && pass "ps reads an interrupted trace" || fail "ps on interrupted trace"

# 3. SIGTERM to rewind record: the first is passed to the program, which ignores it here (a
# recording whose tasks are held would not get it either); a second ends the recording, with
# a complete trace that replays to the kill.
"$REWIND" record -o "$WORK/termed" sh -c 'trap "" TERM; echo started; echo $$ > '"$WORK"'/tpid; exec sleep 60' \
  >"$WORK/t.out" 2>"$WORK/t.err" &
rec=$!
for _ in $(seq 100); do [ -s "$WORK/tpid" ] && break; sleep 0.1; done
sleep 0.5
kill -TERM $rec
sleep 1
if kill -0 $rec 2>/dev/null; then
  pass "the first SIGTERM goes to the program, which ignores it: the recording goes on"
else
  fail "the recording ended at the first SIGTERM: $(cat "$WORK/t.err")"
fi
kill -TERM $rec
wait $rec
rc=$?
[ "$rc" -eq 137 ] && grep -q "a second SIGTERM or SIGHUP: the program is killed" "$WORK/t.err" \
  && pass "a second SIGTERM ends the recording (137) and says so" \
  || fail "after a second SIGTERM: record exited $rc, stderr: $(cat "$WORK/t.err")"
"$REWIND" replay -a "$WORK/termed" >"$WORK/t.rep" 2>&1
rrc=$?
[ "$rrc" -eq 137 ] && cmp -s "$WORK/t.out" "$WORK/t.rep" \
  && pass "the trace ended by SIGTERM replays its output and the kill (137)" \
  || fail "replay of the trace ended by SIGTERM: rc $rrc, output $(cat "$WORK/t.rep")"
finish
