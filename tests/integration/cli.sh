#!/usr/bin/env bash
# The command line as a user meets it: errors, trace naming, latest-trace, ls, dump, rm,
# exit statuses, and a clear error for what cannot be recorded yet.
. "$(dirname "$0")/lib.sh"
one_line_error() {  # one_line_error NAME EXPECTED_RC PATTERN CMD...
  local name=$1 want=$2 pat=$3
  shift 3
  local out rc
  out=$("$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  if [ "$rc" -eq "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "$pat"; then
    pass "$name: $out"
  else
    fail "$name: rc $rc (want $want), output: $out"
  fi
}
one_line_error "no subcommand" 2 "^rewind: " "$REWIND"
one_line_error "unknown option" 2 "^rewind: .*--bogus" "$REWIND" record --bogus ls
one_line_error "missing program" 2 "^rewind: record: cannot find program 'no-such-program-xyz'$" "$REWIND" record no-such-program-xyz
one_line_error "no program" 2 "^rewind: record: no program given" "$REWIND" record
one_line_error "bad --ticks" 2 "^rewind: " "$REWIND" record --ticks=sometimes ls
out=$("$REWIND" record -o "$WORK/dashdash" -- sh -c 'echo "$@"' sh -o -v --ticks=none)
[ "$out" = "-o -v --ticks=none" ] && pass "arguments after the program are the program's" || fail "program args: $out"
out=$("$REWIND" record -o "$WORK/nodash" sh -c 'echo "$@"' sh -v -- x)
[ "$out" = "-v -- x" ] && pass "arguments after the program, without --" || fail "program args: $out"
"$REWIND" record --help | grep -q "PROGRAM \[ARGS...\]" && pass "record --help" || fail "record --help"
"$REWIND" --help | grep -q "replay" && pass "--help lists commands" || fail "--help"

"$REWIND" record -v -o "$WORK/explicit" sh -c 'exit 7' 2>"$WORK/v.err"
rc=$?
[ "$rc" -eq 7 ] && pass "record exits with the program's status" || fail "exit status $rc"
grep -q "recorded [0-9]* events .*to $WORK/explicit" "$WORK/v.err" && pass "-v reports the trace" || fail "-v: $(cat "$WORK/v.err")"
"$REWIND" replay -a "$WORK/explicit"
[ $? -eq 7 ] && pass "replay exits with the recorded status" || fail "replay status"

# The program binds its symbols at start (LD_BIND_NOW, engine/record/record_setup.cpp), unless
# the user chose otherwise.
out=$(env -u LD_BIND_NOW "$REWIND" record -o "$WORK/bindnow" sh -c 'echo "[$LD_BIND_NOW]"')
[ "$out" = "[1]" ] && pass "recorded with LD_BIND_NOW=1" || fail "LD_BIND_NOW: $out"
out=$(LD_BIND_NOW= "$REWIND" record -o "$WORK/bindlazy" sh -c 'echo "[${LD_BIND_NOW-unset}]"')
[ "$out" = "[]" ] && pass "the user's LD_BIND_NOW is kept" || fail "user's LD_BIND_NOW: $out"

# Naming: NAME-N in $REWIND_TRACE_DIR, latest-trace follows the newest (record -o
# too, below); nothing else printed.
"$REWIND" record date >"$WORK/d0.out" 2>"$WORK/d0.err" || fail "record date"
"$REWIND" record date >/dev/null 2>&1
[ -d "$REWIND_TRACE_DIR/date-0" ] && [ -d "$REWIND_TRACE_DIR/date-1" ] && pass "traces named date-0, date-1" || fail "trace names: $(ls "$REWIND_TRACE_DIR")"
[ "$(readlink "$REWIND_TRACE_DIR/latest-trace")" = "date-1" ] && pass "latest-trace -> date-1" || fail "latest-trace"
[ ! -s "$WORK/d0.err" ] && pass "record prints nothing of its own" || fail "record printed: $(cat "$WORK/d0.err")"
"$REWIND" replay -a >"$WORK/latest.out" 2>&1 || fail "replay of the latest trace"
one_line_error "replay of a missing trace" 1 "^rewind: .*no-such-trace" "$REWIND" replay "$WORK/no-such-trace"
one_line_error "replay -s with a bad port" 2 "^rewind: " "$REWIND" replay -s 70000 "$WORK/explicit"

# ls, dump, rm.
"$REWIND" ls >"$WORK/ls.out"
grep -q "^date-0 .* 0  date$" "$WORK/ls.out" && grep -q "^date-1 .*(latest)$" "$WORK/ls.out" \
  && pass "ls lists both traces" || { fail "ls:"; cat "$WORK/ls.out"; }
"$REWIND" ls --json >"$WORK/ls.json"
python3 - "$WORK/ls.json" "$REWIND_TRACE_DIR" <<'PY' && pass "ls --json: the latest first, with events, exit code and command" || { fail "ls --json:"; cat "$WORK/ls.json"; }
import json, sys
traces = [t for t in json.load(open(sys.argv[1])) if t["name"].startswith("date-")]
assert [t["name"] for t in traces] == ["date-1", "date-0"], traces
assert traces[0]["latest"] and not traces[1]["latest"]
for t in traces:
    assert t["command"] == ["date"] and t["exitCode"] == 0 and t["events"] > 1, t
    assert t["dir"] == sys.argv[2] + "/" + t["name"] and t["recorded"] > 1.7e9, t
PY
"$REWIND" dump date-0 >"$WORK/dump.txt"
head -1 "$WORK/dump.txt" | grep -q "^ *1 .* exec  *date$" && pass "dump starts with the exec" || fail "dump: $(head -1 "$WORK/dump.txt")"
"$REWIND" dump --json date-0 >"$WORK/dump.json"
# The vDSO's functions are hidden, so date's clock read is a syscall, recorded: an event of its own, or (the
# default, syscall buffering) a record carried by the next event.
python3 - "$WORK/dump.json" <<'PY' && pass "date's clock read is a recorded syscall (vDSO functions hidden)" || fail "no clock_gettime syscall in the trace"
import json, sys
events = json.load(open(sys.argv[1]))
calls = [e.get("syscall") for e in events] + [b["syscall"] for e in events for b in e.get("buffered", [])]
assert "clock_gettime" in calls, calls
PY
if command -v python3 >/dev/null; then
  python3 - "$WORK/dump.json" <<'PY' && pass "dump --json is valid JSON with named syscalls" || fail "dump --json"
import json, sys
events = json.load(open(sys.argv[1]))
assert events[0]["kind"] == "exec" and events[0]["argv"] == ["date"], events[0]
assert any(e.get("syscall") == "write" and e.get("output") == "stdout" for e in events)
assert events[-1]["kind"] == "exit" and events[-1]["exit_status"] == 0
assert [e["event"] for e in events] == list(range(1, len(events) + 1))
PY
fi
"$REWIND" rm date-0 && [ ! -e "$REWIND_TRACE_DIR/date-0" ] && pass "rm date-0" || fail "rm"
"$REWIND" rm date-1 && [ ! -e "$REWIND_TRACE_DIR/latest-trace" ] && pass "rm of the latest removes latest-trace" || fail "rm latest"
one_line_error "rm of a non-trace" 1 "not a rewind trace" "$REWIND" rm "$WORK"

# record -o makes missing parents, and latest-trace follows it: a bare replay opens it.
"$REWIND" record -o "$WORK/new/parents/t" date >"$WORK/o.rec" 2>&1 &&
  [ -f "$WORK/new/parents/t/processes" ] && pass "record -o into missing parent directories" ||
  fail "record -o into missing parents: $(tail -2 "$WORK/o.rec")"
[ "$(readlink "$REWIND_TRACE_DIR/latest-trace")" = "$WORK/new/parents/t" ] &&
  pass "latest-trace -> the -o trace (absolute)" ||
  fail "latest-trace after record -o: $(readlink "$REWIND_TRACE_DIR/latest-trace")"
"$REWIND" replay -a >"$WORK/o.rep" 2>&1 && cmp -s "$WORK/o.rec" "$WORK/o.rep" &&
  pass "a bare replay replays the -o trace" || fail "bare replay after -o: $(tail -2 "$WORK/o.rep")"

# What cannot be recorded yet stops the recording with its name, keeping the trace so far.
# Here: tracing a process outside the recording (ptrace(2) PTRACE_ATTACH).
if command -v python3 >/dev/null; then
  sleep 60 &
  outside=$!
  one_line_error "unrecordable feature" 1 \
    "^rewind: ptrace(PTRACE_ATTACH) of process $outside, outside the recording, cannot be recorded$" \
    "$REWIND" record -o "$WORK/unsup" python3 -c \
    'import ctypes, sys; print("started", flush=True); ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0)' "$outside"
  [ "$(ps -o stat= -p "$outside" | cut -c1)" = S ] && pass "the outside process was not traced" ||
    fail "the outside process: $(ps -o stat= -p "$outside")"
  kill "$outside"
  "$REWIND" replay -a "$WORK/unsup" 2>&1 | grep -q "recording was interrupted" && pass "the partial trace replays" || fail "partial trace"
fi

# A program that leaves a daemon running (double fork, setsid): the recording ends with the
# program, as rr's does (the daemon is killed and its end recorded), and replays; --wait
# waits for the daemon.
start=$(date +%s)
timeout 60 "$REWIND" record -o "$WORK/daemon" sh -c '(setsid sleep 30 &); echo started' \
  >"$WORK/daemon.out" 2>"$WORK/daemon.err" </dev/null
rc=$? took=$(($(date +%s) - start))
[ "$rc" = 0 ] && [ "$took" -lt 20 ] && [ "$(cat "$WORK/daemon.out")" = started ] &&
  grep -q "^rewind: the program ended; 1 process it left running was killed" "$WORK/daemon.err" &&
  pass "record ends with the program, the daemon killed (${took} s)" ||
  fail "daemon: rc $rc after ${took} s: $(cat "$WORK/daemon.out" "$WORK/daemon.err")"
"$REWIND" replay -a "$WORK/daemon" >"$WORK/daemon.rep" 2>&1 && [ "$(cat "$WORK/daemon.rep")" = started ] &&
  "$REWIND" dump "$WORK/daemon" | grep -q "exit .*SIGKILL" &&
  pass "the trace with the killed daemon replays" || fail "daemon replay: $(tail -3 "$WORK/daemon.rep")"
timeout 60 "$REWIND" record --wait -o "$WORK/waited" sh -c '(setsid sh -c "sleep 0.3; echo late" &); echo early' \
  >"$WORK/waited.out" 2>&1 </dev/null
[ "$(cat "$WORK/waited.out")" = "$(printf 'early\nlate')" ] &&
  "$REWIND" replay -a "$WORK/waited" >"$WORK/waited.rep" 2>&1 && cmp -s "$WORK/waited.out" "$WORK/waited.rep" &&
  pass "record --wait waits for the daemon, and replays" ||
  fail "record --wait: $(cat "$WORK/waited.out") / replay: $(cat "$WORK/waited.rep")"

# A mapped file that would fill the trace's file system stops the recording in one line,
# before writing it (a small tmpfs holds the trace; mounting one needs root).
if [ "$(id -u)" = 0 ] && command -v python3 >/dev/null && mkdir -p "$WORK/small" &&
  mount -t tmpfs -o size=64m rewind-test "$WORK/small" 2>/dev/null; then
  head -c 100000000 /dev/urandom >"$WORK/big.bin"
  one_line_error "a file too big for the trace's disk" 1 \
    "^rewind: saving $WORK/big.bin (95 MiB of data) would fill the trace's file system" \
    "$REWIND" record -o "$WORK/small/t" python3 -c \
    "import mmap; f = open('$WORK/big.bin', 'rb'); mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)"
  ls "$WORK/small/t/files" | grep -q "^big.bin-" && fail "the refused file was written: $(ls -l "$WORK/small/t/files")"
  umount "$WORK/small"
else
  echo "skip: the disk-space check needs root to mount a small tmpfs"
fi

# rewind's start maps neither capstone nor libcrypto (their relocations cost every command
# milliseconds, issue 29): they are opened when first needed. The rdtsc/cpuid search's answers
# are kept in the cache directory, so a second recording of the same program needs no
# disassembler; an unwritable cache directory only costs the search again.
libs=$(LD_DEBUG=files "$REWIND" --version 2>&1 >/dev/null | grep -o 'file=[^ ]*' | sort -u)
echo "$libs" | grep -q "libcapstone\|libcrypto" && fail "rewind --version loads: $libs" ||
  pass "rewind --version maps neither capstone nor libcrypto"
# record_cpuid_reads NAME: records cpuid_reads into $WORK/NAME (its output in NAME.out) and
# prints the libraries the recording loaded (LD_DEBUG=files).
record_cpuid_reads() {
  LD_DEBUG=files "$REWIND" record -o "$WORK/$1" "$TEST_PROGRAMS/cpuid_reads" \
    2>"$WORK/$1.ld" >"$WORK/$1.out"
  grep -o 'file=[^ ]*' "$WORK/$1.ld" | sort -u
}
export REWIND_CACHE_DIR="$WORK/cache"
libs=$(record_cpuid_reads cache1)
echo "$libs" | grep -q libcapstone && pass "a first recording searches with capstone" ||
  fail "first recording: capstone not loaded ($libs)"
n=$(ls "$WORK/cache/emulated-sites" 2>/dev/null | wc -l)
[ "$n" -ge 3 ] && pass "the search's answers are cached ($n files)" || fail "cache: $n entries"
# The machine probes (a forked child each) are kept for the boot.
grep -qx "rdtsc_traps [01]" "$WORK/cache/machine-$(cat /proc/sys/kernel/random/boot_id)" &&
  pass "the rdtsc probe's answer is kept for this boot" || fail "machine probes: $(ls "$WORK/cache")"
libs=$(record_cpuid_reads cache2)
echo "$libs" | grep -q libcapstone && fail "second recording loads capstone: $libs" ||
  pass "a second recording of the same program needs no disassembler"
# The trace's copies of files (the preload library, copied from a writable build tree) are
# known by build-id: replay needs no disassembler either.
LD_DEBUG=files "$REWIND" replay -a "$WORK/cache2" 2>&1 >/dev/null | grep -q "file=.*libcapstone" &&
  fail "replay loads capstone" || pass "a replay of that recording needs no disassembler"
touch "$WORK/not-a-dir"
export REWIND_CACHE_DIR="$WORK/not-a-dir/cache"
"$REWIND" record -o "$WORK/cache3" "$TEST_PROGRAMS/cpuid_reads" >"$WORK/cache3.out" ||
  fail "record without a usable cache directory"
for t in cache1 cache2 cache3; do
  # Each replays what it recorded, its cpuid events included.
  "$REWIND" replay -a "$WORK/$t" >"$WORK/$t.replay" 2>/dev/null && cmp -s "$WORK/$t.out" "$WORK/$t.replay" &&
    [ "$("$REWIND" dump "$WORK/$t" | grep -c cpuid)" -gt 0 ] &&
    pass "$t replays, with its cpuid events" || fail "$t: replay or cpuid events"
done
unset REWIND_CACHE_DIR

# --status-file (how a debug adapter follows a recording it started in a terminal).
"$REWIND" record --status-file "$WORK/st.ok" -o "$WORK/st" sh -c 'exit 3'
[ "$(cat "$WORK/st.ok")" = "{\"exit_code\":3,\"state\":\"finished\",\"trace\":\"$WORK/st\"}" ] &&
  pass "status file: finished, exit code and trace" || fail "status file: $(cat "$WORK/st.ok")"
"$REWIND" record --status-file "$WORK/st.bad" no-such-program-xyz 2>/dev/null
[ "$(cat "$WORK/st.bad")" = '{"error":"cannot find program '"'"'no-such-program-xyz'"'"'","state":"failed"}' ] &&
  pass "status file: failed, with the reason" || fail "status file: $(cat "$WORK/st.bad")"

# rewind dap --log (and REWIND_DAP_LOG): each message read and written, one a line.
dap_msg() { printf 'Content-Length: %d\r\n\r\n%s' "${#1}" "$1"; }
{ dap_msg '{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"rewind"}}'
  dap_msg '{"seq":2,"type":"request","command":"disconnect"}'; } |
  timeout 30 "$REWIND" dap --log "$WORK/dap.log" >/dev/null
grep -q '^[0-9]* --> .*"command":"initialize"' "$WORK/dap.log" &&
  grep -q '^[0-9]* <-- .*"command":"initialize".*"type":"response"' "$WORK/dap.log" &&
  grep -q '^[0-9]* <-- .*"command":"disconnect"' "$WORK/dap.log" &&
  pass "dap --log holds the requests and their responses" || fail "dap --log: $(cat "$WORK/dap.log")"
dap_msg '{"seq":1,"type":"request","command":"initialize","arguments":{"adapterID":"rewind"}}' |
  REWIND_DAP_LOG="$WORK/dap-env.log" timeout 30 "$REWIND" dap >/dev/null
grep -q -- '--> .*initialize' "$WORK/dap-env.log" && pass "REWIND_DAP_LOG names the log too" ||
  fail "REWIND_DAP_LOG: no log"
timeout 10 "$REWIND" dap --listen 0 --log "$WORK/tcp.log" 2>"$WORK/tcp.err"
[ $? = 2 ] && grep -q "tokens" "$WORK/tcp.err" && [ ! -e "$WORK/tcp.log" ] &&
  pass "no message log for a TCP server (its clients' tokens)" || fail "dap --listen --log: $(cat "$WORK/tcp.err")"
# `rewind machine`: one line a feature, yes or no, and the answer REWIND_SOFT_DEBUG_REGISTERS
# forces (tests/support/catch_main.cpp and the VS Code test read it).
"$REWIND" machine >"$WORK/machine.out" 2>&1 && [ "$(wc -l <"$WORK/machine.out")" = 3 ] &&
  grep -q '^hardware performance counters: \(yes\|no\)' "$WORK/machine.out" &&
  grep -q '^rdtsc traps (PR_SET_TSC): \(yes\|no\)' "$WORK/machine.out" &&
  REWIND_SOFT_DEBUG_REGISTERS=1 "$REWIND" machine | grep -q '^debug registers for programs: no (' &&
  REWIND_SOFT_DEBUG_REGISTERS=0 "$REWIND" machine | grep -q '^debug registers for programs: yes (' &&
  pass "rewind machine says what this machine offers" || fail "rewind machine: $(cat "$WORK/machine.out")"
finish
