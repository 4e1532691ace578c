#!/usr/bin/env bash
# Syscall buffering (the default; preload/): the same program recorded with and without
# it replays to the same output; with it, the file syscalls are records inside events (far
# fewer events), and replay uses them. With --chaos, threads are preempted at random points
# around buffered syscalls and after a thread has exited (its buffer stays mapped): those
# recordings replay too.
. "$(dirname "$0")/lib.sh"
prog=$TEST_PROGRAMS/file_io
events() { "$REWIND" dump --json "$1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
buffered() {
  "$REWIND" dump --json "$1" | python3 -c '
import json, sys
n = sum(len(e.get("buffered", [])) for e in json.load(sys.stdin))
print(n)'
}
# same_as_native NAME NATIVE REC TRACE: the recording printed what the native run did, and
# each of two replays of TRACE prints what the recording did.
same_as_native() {
  local name=$1 native=$2 rec=$3 trace=$4
  cmp -s "$native" "$rec" && pass "$name: recorded as it runs" \
    || fail "$name: $(diff "$native" "$rec" | head -4)"
  for i in 1 2; do
    timeout 60 "$REWIND" replay -a "$trace" >"$WORK/rep-same" 2>&1
    cmp -s "$rec" "$WORK/rep-same" && pass "$name: replay $i" \
      || fail "$name: replay $i: $(diff "$rec" "$WORK/rep-same" | head -4)"
  done
}
# buffered_include TRACE CALL...: exits 0 when TRACE's buffered records (abort marks left
# out) include each CALL.
buffered_include() {
  local trace=$1
  shift
  "$REWIND" dump --json "$trace" | python3 -c '
import json, sys
events = json.load(sys.stdin)
buffered = [b["syscall"] for e in events for b in e.get("buffered", []) if b["result"] != -4096]
for call in sys.argv[1:]:
    assert call in buffered, f"no {call} buffered: {sorted(set(buffered))}"
' "$@"
}
for mode in plain buffered chaos1 chaos2 chaos3 chaos4 chaos5; do
  flags=(--no-syscall-buffer)
  case $mode in
    buffered) flags=(--syscall-buffer) ;;
    chaos*) flags=(--syscall-buffer --chaos) ;;
  esac
  mkdir -p "$WORK/$mode"
  "$REWIND" record "${flags[@]}" -o "$WORK/t-$mode" "$prog" "$WORK/$mode" >"$WORK/rec-$mode" 2>&1 \
    || fail "$mode: record failed: $(cat "$WORK/rec-$mode")"
  for i in 1 2; do
    "$REWIND" replay -a "$WORK/t-$mode" >"$WORK/rep-$mode" 2>&1
    cmp -s "$WORK/rec-$mode" "$WORK/rep-$mode" && pass "$mode: replay $i prints what the recording did" \
      || fail "$mode: replay $i: $(diff "$WORK/rec-$mode" "$WORK/rep-$mode" | head -5)"
  done
done
plain=$(events "$WORK/t-plain") buf=$(events "$WORK/t-buffered") nbuf=$(buffered "$WORK/t-buffered")
[ "$(buffered "$WORK/t-plain")" -eq 0 ] && pass "without buffering no event carries records" || fail "plain trace has records"
# Each thread opens, reads, fstats, closes its file 200 times: over 2,000 buffered calls.
[ "$nbuf" -ge 2000 ] && pass "$nbuf syscalls buffered" || fail "only $nbuf syscalls buffered"
[ "$buf" -lt $((plain / 3)) ] && pass "events: $buf buffered vs $plain traced" \
  || fail "events: $buf buffered vs $plain traced"
"$REWIND" dump "$WORK/t-buffered" | grep -q "buffered syscalls)" && pass "dump shows buffered records" \
  || fail "dump does not show buffered records"

# The calls buffered beyond plain file I/O (tests/programs/fs_calls.c): each one made without a
# ptrace stop (a record in an event), and the replays print what the recording
# did, random bytes, clocks, uptime and resource usage included.
mkdir -p "$WORK/fs"
"$REWIND" record -o "$WORK/t-fs" "$TEST_PROGRAMS/fs_calls" "$WORK/fs" >"$WORK/rec-fs" 2>&1 \
  || fail "fs_calls: record failed: $(cat "$WORK/rec-fs")"
grep -q "^getrandom 8 " "$WORK/rec-fs" || fail "fs_calls did not run to its end: $(tail -3 "$WORK/rec-fs")"
# A lock query reads the range it asks about: the buffered call must hand the kernel the
# program's struct flock (as natively: the first range is free, the second finds the lock).
grep -q "^ofd getlk \[1024,2048) 0 type 2$" "$WORK/rec-fs" &&
  grep -q "^ofd getlk \[2048,4096) 0 type 1 start 2048 len 1024$" "$WORK/rec-fs" &&
  pass "fs_calls: F_OFD_GETLK answers about the range asked" ||
  fail "fs_calls: lock queries: $(grep "^ofd" "$WORK/rec-fs")"
# F_GET_RW_HINT writes the hint back through its pointer (the replay must write it too).
grep -q "^rw hint 0 0 3$" "$WORK/rec-fs" && grep -q "^fcntl 1100 -1 Invalid argument$" "$WORK/rec-fs" &&
  pass "fs_calls: write-life hint read back; an unknown fcntl command fails as natively" ||
  fail "fs_calls: fcntl: $(grep "^rw hint\|^fcntl" "$WORK/rec-fs")"
for i in 1 2; do
  "$REWIND" replay -a "$WORK/t-fs" >"$WORK/rep-fs" 2>&1
  cmp -s "$WORK/rec-fs" "$WORK/rep-fs" && pass "fs_calls: replay $i prints what the recording did" \
    || fail "fs_calls: replay $i: $(diff "$WORK/rec-fs" "$WORK/rep-fs" | head -5)"
done
"$REWIND" dump --json "$WORK/t-fs" | python3 -c '
import json, sys
events = json.load(sys.stdin)
buffered = {b["syscall"] for e in events for b in e.get("buffered", [])}
want = """getcwd readlink mkdir fsync ftruncate fchmod fchown fcntl ioctl rename link symlink chmod
truncate getxattr listxattr unlink rmdir umask uname prlimit64 statfs getrusage sysinfo getrandom
clock_gettime getpid""".split()
missing = [w for w in want if w not in buffered]
assert not missing, f"not buffered: {missing}"
' && pass "fs_calls: every call buffered (getpid and clock_gettime through their mov sites)" \
  || fail "fs_calls: some calls were traced"

# Calls that wait for another thread of the process (tests/programs/blocking_calls.c: pipe
# reads and writes, poll and ppoll, a condition variable, a FIFO's open, a read that SIGALRM interrupts):
# buffered with the desched counter on; the ones that waited are made traced, so the other
# thread runs. The recording must end (no hang), print what the program prints without rewind,
# and replay to the same output; also with --chaos, and with no desched counter
# (REWIND_DESCHED=0: the FIFO's open, buffered, waits until a preemption aborts it).
"$TEST_PROGRAMS/blocking_calls" "$WORK" >"$WORK/native-bc" 2>&1 || fail "blocking_calls failed natively"
for mode in desched chaos1 chaos2 chaos3 chaos4 chaos5 nodesched; do
  flags=() env=()
  case $mode in
    chaos*) flags=(--chaos) ;;
    nodesched) env=(REWIND_DESCHED=0) ;;
  esac
  env "${env[@]}" timeout 60 "$REWIND" record -v "${flags[@]}" -o "$WORK/t-bc-$mode" \
    "$TEST_PROGRAMS/blocking_calls" "$WORK" >"$WORK/rec-bc-$mode" 2>"$WORK/err-bc-$mode" \
    || fail "blocking_calls ($mode): record failed: $(tail -2 "$WORK/err-bc-$mode")"
  same_as_native "blocking_calls ($mode)" "$WORK/native-bc" "$WORK/rec-bc-$mode" "$WORK/t-bc-$mode"
done
waited=$(sed -n 's/.* \([0-9]*\) that waited made traced.*/\1/p' "$WORK/err-bc-desched")
[ "${waited:-0}" -ge 1 ] && pass "blocking_calls: $waited buffered calls waited and were made traced" \
  || fail "blocking_calls: no buffered call was seen waiting: $(cat "$WORK/err-bc-desched")"
buffered_include "$WORK/t-bc-desched" read write poll ppoll futex && pass "blocking_calls: pipe reads and writes, poll, ppoll and futex buffered" \
  || fail "blocking_calls: calls that may block were not buffered"

# Opens that wait while no other task takes the process's turns (tests/programs/alone_opens.c;
# rewind_preload_abi.h, RWD_FEATURE_TURNS): a FIFO's open, alone in its memory (the process's,
# a forked child's), is buffered without the desched counter and waits inside its buffered
# call, as natively; beside a thread it is armed again and made traced. A pipe's read stays
# armed alone too: made traced when it waits. Each peer acts once the waiting task sleeps, so
# every one of these calls waits in any run.
mkdir -p "$WORK/ao"
"$TEST_PROGRAMS/alone_opens" "$WORK/ao" >"$WORK/native-ao" 2>&1 || fail "alone_opens failed natively"
for mode in buffered chaos1 chaos2; do
  flags=()
  case $mode in chaos*) flags=(--chaos) ;; esac
  timeout 60 "$REWIND" record "${flags[@]}" -o "$WORK/t-ao-$mode" "$TEST_PROGRAMS/alone_opens" \
    "$WORK/ao" >"$WORK/rec-ao-$mode" 2>"$WORK/err-ao-$mode" \
    || fail "alone_opens ($mode): record failed: $(tail -2 "$WORK/err-ao-$mode")"
  same_as_native "alone_opens ($mode)" "$WORK/native-ao" "$WORK/rec-ao-$mode" "$WORK/t-ao-$mode"
  "$REWIND" dump --json "$WORK/t-ao-$mode" | python3 -c '
import json, sys
events = json.load(sys.stdin)
main = events[0]["task"]
aborted = [(e["task"], b["syscall"]) for e in events for b in e.get("buffered", [])
           if b["result"] == -4096]
# Only the open beside a thread (part 4) was armed: the FIFO opens alone (parts 1, 2) waited
# in their buffered calls.
opens = [a for a in aborted if a[1] in ("open", "openat")]
assert opens == [(main, "openat")], f"opens made traced: {opens}"
# The read of part 3 was armed alone.
assert (main, "read") in aborted, f"no read of the main task made traced: {aborted}"
' 2>"$WORK/ao-check" && pass "alone_opens ($mode): opens alone buffered, beside a thread and pipe reads made traced" \
    || fail "alone_opens ($mode): $(tail -1 "$WORK/ao-check")"
done

# Scatter/gather calls (tests/programs/vector_io.c): readv, preadv and pwritev on a file,
# sendmsg and recvmsg on datagram sockets (a datagram cut short, a sender's address), readv
# and recvmsg that wait for another thread. Buffered, they must give what they give without
# rewind, in the recording and in each replay, also with --chaos and with buffering off (the
# recvmsg that receives a descriptor, control data, stays traced: its output says whether the
# descriptor arrived).
mkdir -p "$WORK/vio"
"$TEST_PROGRAMS/vector_io" "$WORK/vio" >"$WORK/native-vio" 2>&1 || fail "vector_io failed natively"
for mode in buffered chaos1 chaos2 chaos3 plain; do
  flags=()
  case $mode in
    chaos*) flags=(--chaos) ;;
    plain) flags=(--no-syscall-buffer) ;;
  esac
  timeout 60 "$REWIND" record "${flags[@]}" -o "$WORK/t-vio-$mode" "$TEST_PROGRAMS/vector_io" \
    "$WORK/vio" >"$WORK/rec-vio-$mode" 2>&1 || fail "vector_io ($mode): record failed"
  same_as_native "vector_io ($mode)" "$WORK/native-vio" "$WORK/rec-vio-$mode" "$WORK/t-vio-$mode"
done
buffered_include "$WORK/t-vio-buffered" readv preadv pwritev sendmsg recvmsg && pass "vector_io: readv, preadv, pwritev, sendmsg and recvmsg buffered" \
  || fail "vector_io: scatter/gather calls were not buffered as expected"
finish
