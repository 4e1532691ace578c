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
finish
