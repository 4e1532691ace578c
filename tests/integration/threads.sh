#!/usr/bin/env bash
# Threads: the race sample recorded 20 times with --chaos gives at least two different
# totals, and each trace replays three times with its own total, byte-identical; a pthread
# program (mutex, condition variable, spin-wait on an atomic flag), Python threads with a
# queue and time.sleep, the use-after-free race (recorded until it crashes), and a process
# killed by one thread's fault while another waits in an interrupted read all replay; the
# queue race, recorded until it aborts, is debugged backwards under gdb to its racing write;
# a software write watchpoint sees every write of the queue's head, forwards
. "$(dirname "$0")/lib.sh"
case "$1" in
  race)
    # 20 recordings, as the issue asks (REWIND_RACE_RECORDINGS=N for more: a slower,
    # instrumented recorder makes the race rarer; scripts/test.sh runs it uninstrumented).
    # On a loaded machine one thread can finish before the other starts in 20 runs in a row
    # (one CI run saw 20 totals of 40000): then up to 40 more recordings, stopping at the
    # first that differs. It still fails when chaos never shows the race.
    runs=${REWIND_RACE_RECORDINGS:-20}
    max_runs=$((runs * 3))
    totals=()
    for ((i = 1; i <= max_runs; i++)); do
      if [ "$i" -gt "$runs" ] && [ "$(printf '%s\n' "${totals[@]}" | sort -u | wc -l)" -ge 2 ]; then
        break
      fi
      "$REWIND" record --chaos -o "$WORK/race$i" "$SAMPLES_BIN/race_counter" >"$WORK/race$i.out" 2>&1
      rc=$?
      totals+=("$(head -1 "$WORK/race$i.out")")
      for r in 1 2 3; do
        "$REWIND" replay -a "$WORK/race$i" >"$WORK/race$i.rep" 2>&1
        rrc=$?
        if [ "$rrc" -ne "$rc" ] || ! cmp -s "$WORK/race$i.out" "$WORK/race$i.rep"; then
          fail "race recording $i, replay $r: exit $rrc (recorded $rc): $(tail -1 "$WORK/race$i.rep")"
        fi
      done
    done
    distinct=$(printf '%s\n' "${totals[@]}" | sort -u | wc -l)
    printf '%s\n' "${totals[@]}" | sort | uniq -c
    [ "$distinct" -ge 2 ] && pass "${#totals[@]} chaos recordings gave $distinct different totals, each replayed 3 times identically" \
      || fail "chaos recordings all gave the same total: ${totals[0]}"
    ;;
  pthreads)
    for i in 1 2 3; do
      record_and_replay "pthreads$i" "$TEST_PROGRAMS/pthreads"
    done
    grep -qx "spinner returned 42; consumed 200 items (200 by workers), sum 19900" "$WORK/pthreads1.rec.out" \
      || fail "pthreads output: $(cat "$WORK/pthreads1.rec.out")"
    RECORD_OPTS=--chaos
    for i in 1 2 3; do record_and_replay "pthreads-chaos$i" "$TEST_PROGRAMS/pthreads"; done
    ;;
  python)
    need python3
    cat >"$WORK/workers.py" <<'PY'
import queue, random, threading, time
q = queue.Queue()
done = []
lock = threading.Lock()
def worker(n):
    while (item := q.get()) is not None:
        time.sleep(0.002 * random.random())
        with lock:
            done.append((n, item))
for i in range(24):
    q.put(i)
threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
for t in threads: t.start()
for t in threads: q.put(None)
for t in threads: t.join()
print("items", sorted(i for _, i in done) == list(range(24)))
print("order", " ".join(f"{n}:{i}" for n, i in done))
PY
    for i in 1 2 3; do record_and_replay "py$i" python3 "$WORK/workers.py"; done
    grep -qx "items True" "$WORK/py1.rec.out" || fail "python workers lost items"
    ;;
  use_after_free)  # record until it crashes, as a user would, then replay the crash
    "$REWIND" record --chaos --until-failure=200 -o "$WORK/uaf" "$SAMPLES_BIN/race_use_after_free" \
      >"$WORK/uaf.out" 2>"$WORK/uaf.err"
    rc=$?
    cat "$WORK/uaf.err"
    [ "$rc" -eq 139 ] || fail "expected a SIGSEGV recording (139), got $rc"
    # uaf.out holds the output of every run; the failing run's is its tail.
    for i in 1 2; do
      "$REWIND" replay -a "$WORK/uaf" >"$WORK/uaf.rep$i" 2>&1
      rrc=$?
      size=$(stat -c %s "$WORK/uaf.rep$i")
      if [ "$rrc" -eq 139 ] && cmp -s <(tail -c "$size" "$WORK/uaf.out") "$WORK/uaf.rep$i"; then
        pass "replay $i crashes the same way (139), output: $(cat "$WORK/uaf.rep$i")"
      else
        fail "replay $i: exit $rrc: $(tail -1 "$WORK/uaf.rep$i")"
      fi
    done
    cmp -s "$WORK/uaf.rep1" "$WORK/uaf.rep2" || fail "the two replays differ"
    ;;
  crash_while_waiting)
    # The process dies of another thread's fault while the main thread's read, interrupted,
    # waits to restart (the trace has read = ERESTARTSYS as the main thread's last event).
    # The recorder normally sees that read return before the fault; try a few recordings.
    for i in 1 2 3 4 5; do
      record_and_replay "cww$i" "$TEST_PROGRAMS/crash_while_waiting" || continue
      last_main=$("$REWIND" dump "$TRACE" |
        awk 'NR==1 {m=$2} $2==m {last=$0} /signal +SIGSEGV/ {print last; exit}')
      if [[ "$last_main" == *"read = -512 (ERESTARTSYS)"* ]]; then
        [ "$(cat "$WORK/cww$i.rec.out")" = waiting ] || fail "output: $(cat "$WORK/cww$i.rec.out")"
        pass "recording $i: the main thread's last event is an interrupted read; replay ends with 139"
        break
      fi
      [ "$i" -lt 5 ] || fail "no recording had the interrupted read last: $last_main"
    done
    ;;
  queue_race)
    # The race a user brings (tests/programs/queue_race.c): recorded until it aborts, then
    # under gdb, from the abort: a watchpoint on the corrupted slot's checksum and
    # reverse-continues back to the write that put the bad checksum there, made by a
    # producer whose own value is not the one the consumer saw: the other producer's. At
    # that write the slot often holds the other producer's value (it overwrote the slot
    # between this producer's value and checksum) or this producer's own (the consumer's
    # copy mixed the slot's old value with this new checksum: a take() preempted between
    # its two loads), but producers retrying put() can write it again in between (a CI run
    # saw a third value): whichever, it is what the last write to it before that point
    # stored, found by going back to that write.
    need gdb
    "$REWIND" record --chaos --until-failure=100 -o "$WORK/qr" "$TEST_PROGRAMS/queue_race" \
      >"$WORK/qr.out" 2>"$WORK/qr.err"
    rc=$?
    [ "$rc" -eq 134 ] || { fail "expected an aborted recording (134), got $rc: $(tail -2 "$WORK/qr.err")"; finish; }
    cat >"$WORK/qr.gdb" <<'GDB'
set pagination off
continue
frame function check_item
set $bad = it->checksum
set $bad_value = it->value
printf "ABORT value %ld checksum %ld slot %ld\n", $bad_value, $bad, slot
watch -l q.slots[slot].checksum
set $n = 0
while $n < 40
  reverse-continue
  if v * 31 + 7 == $bad
    loop_break
  end
  set $n = $n + 1
end
printf "RACING WRITE v %ld checksum %ld slot value %ld after %d\n", v, v * 31 + 7, s->value, $n
bt 2
info threads
delete
watch -l s->value
reverse-continue
printf "LAST VALUE WRITE v %ld\n", v
GDB
    start=$(date +%s%N)
    # 900 s, a guard against a hang: on a PVM guest (debug registers emulated,
    # docs/how-it-works.md) two fresh-clone CI runs passed 420 s and one hit the guard. There
    # a thread's point was hashed with the read-only split of the watched page (the replay
    # ran past it: a hang), and a point search ran by single steps under its software
    # execute slot. With both fixed (2026-12-01) one such recording took 1.3 s instead of a
    # hang, 21 s with only the first fix. The time taken is printed when it passes.
    timeout 900 "$REWIND" replay "$WORK/qr" -- -batch -nx -x "$WORK/qr.gdb" >"$WORK/qr.gdb.out" 2>&1
    grc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    [ "$grc" -eq 0 ] || fail "gdb exited $grc: $(tail -3 "$WORK/qr.gdb.out")"
    out=$(cat "$WORK/qr.gdb.out")
    abort=$(grep -m1 '^ABORT' <<<"$out")
    racing=$(grep -m1 '^RACING WRITE' <<<"$out")
    last_value=$(sed -n 's/^LAST VALUE WRITE v //p' <<<"$out" | head -1)
    read -r _ _ bad_value _ bad _ _ <<<"$abort"
    read -r _ _ _ v _ checksum _ _ slot_value _ n <<<"$racing"
    # Producer P's values are P * 1,000,000 + i: the consumer's value is the other producer's.
    if [ -n "$racing" ] && [ "$checksum" = "$bad" ] && [ "$v" != "$bad_value" ] &&
       [ $((v / 1000000)) != $((bad_value / 1000000)) ] &&
       [ "$slot_value" = "$last_value" ] && grep -q 'Hardware watchpoint 1: -location q.slots\[slot\].checksum' <<<"$out" &&
       grep -Eq '^#1 .* producer \(' <<<"$out"; then
      pass "reverse-continue found the racing write after $n earlier writes (${ms} ms in all): producer $((v / 1000000)) writing the checksum of $v into a slot holding $slot_value; the consumer saw producer $((bad_value / 1000000))'s $bad_value"
    else
      fail "no racing write found: $abort / $racing / last value write: $last_value"
      tail -30 "$WORK/qr.gdb.out"
    fi
    ;;
  soft_watch)
    # A write watchpoint kept in software (REWIND_SOFT_DEBUG_REGISTERS=1: how every watch runs
    # on a PVM guest, whose CPU does not give programs its debug registers) on the head of
    # the queue race's ring buffer, continued forwards to the end: each of the consumers'
    # writes is a hit, in order (1, 2, 3...), up to the count the program printed. Before
    # 2026-12-01 the replay hung after a few dozen hits: a thread that had not run since the
    # watched page was made read-only had its point hashed with that page's split mapping,
    # and ran past its point.
    need gdb
    "$REWIND" record --chaos -o "$WORK/sw" "$TEST_PROGRAMS/queue_race" >"$WORK/sw.out" 2>"$WORK/sw.err"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 134 ] || { fail "recording exited $rc: $(tail -2 "$WORK/sw.err")"; finish; }
    cat >"$WORK/sw.gdb" <<'GDB'
set pagination off
watch -l q.head
set $last = -1
while q.head != $last
  set $last = q.head
  continue
  printf "HEAD %ld\n", q.head
end
GDB
    # 600 s, a guard against a hang: 16-17 s here alone or beside another test, 350 s when
    # it ran at nice 19 beside a build (2026-12-01).
    start=$(date +%s%N)
    REWIND_SOFT_DEBUG_REGISTERS=1 timeout 600 "$REWIND" replay "$WORK/sw" -- -batch -nx -x "$WORK/sw.gdb" \
      >"$WORK/sw.gdb.out" 2>&1
    grc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    [ "$grc" -eq 0 ] || fail "gdb exited $grc: $(tail -3 "$WORK/sw.gdb.out")"
    heads=$(sed -n 's/^HEAD //p' "$WORK/sw.gdb.out" | uniq)
    expected=$(seq 1 "$(tail -1 <<<"$heads")")
    consumed=$(sed -n 's/^consumed \([0-9]*\) items$/\1/p' "$WORK/sw.out")
    if [ -z "$heads" ] || [ "$heads" != "$expected" ]; then
      fail "the watch's hits are not 1, 2, 3...: $(head -c 300 <<<"$heads" | tr '\n' ' ')"
    elif [ "$rc" -eq 0 ] && [ "$(tail -1 <<<"$heads")" != "$consumed" ]; then
      fail "the watch saw $(tail -1 <<<"$heads") writes of the head; the program consumed $consumed items"
    else
      pass "$(wc -l <<<"$heads") writes of the queue's head seen in order by a software watchpoint (${ms} ms; recording exited $rc)"
    fi
    ;;
  *) echo "unknown case $1"; exit 2 ;;
esac
finish
