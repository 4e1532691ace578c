#!/usr/bin/env bash
# gdb drives a replay over rewind's gdb server: breakpoints, watchpoints, stepping and their
# reverse forms, checked in gdb's own output (tests/programs/timeline_loop.c, built with -g);
# and a parent with its fork()ed worker: breakpoints in both processes, hit both ways.
. "$(dirname "$0")/lib.sh"
need gdb
PROG="$TEST_PROGRAMS/timeline_loop"
"$REWIND" record -o "$WORK/t" "$PROG" >"$WORK/rec.out" 2>&1 || fail "record failed"

# gdb_run NAME: gdb over the replay of timeline_loop, commands on stdin (lib.sh gdb_batch).
gdb_run() { gdb_batch "$WORK/t" "$1"; }
expect() { expect_output "$@"; }

gdb_run loop <<'GDB'
break tick
continue
continue
continue
print i
print counter
reverse-continue
print i
print counter
monitor when
GDB
expect loop 'Breakpoint 1, tick \(i=3\).*\$1 = 3 \$2 = 3 .*Breakpoint 1, tick \(i=2\).*\$3 = 2 \$4 = 1 ' \
  "third hit, then reverse-continue back to the second with i=2, counter=1"
expect loop 'Current event: [0-9]+ \(of [0-9]+\)' "monitor when prints the event number"

# gdb's `break getpid` before the program starts lies on getpid's `mov $39, %eax`, which
# librewind_preload.so reads and rewrites as the program starts: the replay keeps the int3
# out of libc until then (an int3 there once hid the site, and the replay diverged).
"$REWIND" record -o "$WORK/pids" "$TEST_PROGRAMS/pid_calls" >"$WORK/pids.rec" 2>&1 ||
  fail "record of pid_calls failed"
gdb_batch "$WORK/pids" pids <<'GDB'
break getpid
continue
continue
continue
continue
GDB
expect pids 'Breakpoint 1[.0-9]*, [_A-Za-z]*getpid .*Breakpoint 1[.0-9]*, [_A-Za-z]*getpid .*Breakpoint 1[.0-9]*, [_A-Za-z]*getpid .*No more reverse-execution history' \
  "break getpid from the start: three hits, then the end of the recording"
if grep -q "diverged" "$WORK/pids.out"; then fail "pids: the replay diverged"; fi

gdb_run watch <<'GDB'
watch counter
continue
continue
continue
continue
continue
continue
reverse-continue
print counter
print i
GDB
expect watch 'Old value = 10 New value = 15 .*No more reverse-execution history.*Hardware watchpoint 1: counter +Old value = 15 +New value = 10 .*tick \(i=5\).*\$1 = 10 \$2 = 5' \
  "run to the end, reverse-continue stops on the last write (15 back to 10)"

gdb_run steps <<'GDB'
break timeline_loop.c:17
continue
continue
next
print i
reverse-next
reverse-next
print n
reverse-step
bt 2
reverse-finish
bt 1
GDB
expect steps 'Breakpoint 1, main \(\) at [^ ]*timeline_loop.c:17 .*13[[:space:]]+for .*\$1 = 2 .*17[[:space:]]+write.*16[[:space:]]+int n = .*\$2 = 14 .*tick \(i=2\) at [^ ]*timeline_loop.c:10 .*#1 .* main \(\) .*#0  0x[0-9a-f]+ in main \(\) at [^ ]*timeline_loop.c:14' \
  "reverse-next over a line and over a call; reverse-step into tick; reverse-finish to main"

gdb_run syscall <<'GDB'
break timeline_loop.c:17
continue
monitor when
next
monitor when
reverse-next
monitor when
print n
stepi
bt 1
GDB
expect syscall 'Current event: ([0-9]+) .*Current event: [0-9]+ .*Current event: ([0-9]+) ' "monitor when before and after"
before=$(grep -o 'Current event: [0-9]*' "$WORK/syscall.out" | sed -n 1p)
after_back=$(grep -o 'Current event: [0-9]*' "$WORK/syscall.out" | sed -n 3p)
forward=$(grep -o 'Current event: [0-9]*' "$WORK/syscall.out" | sed -n 2p)
[ -n "$before" ] && [ "$before" = "$after_back" ] && [ "$forward" != "$before" ] \
  && pass "stepping back over write() undoes its event ($forward -> $after_back)" \
  || fail "events around write(): before '$before', after next '$forward', after reverse-next '$after_back'"

gdb_run threads <<'GDB'
break write
continue
info threads
bt 2
x/2gx &counter
info sharedlibrary
GDB
expect threads '\* 1 +Thread [0-9]+\.[0-9]+ .*write.*#0 .*write .*#1 .*main \(\) at .*0x[0-9a-f]+ <counter>:[[:space:]]+0x0000000000000001.*libc.so.6' \
  "info threads, a backtrace through libc, x, and the shared library list"
gdb_run divert <<'GDB'
break tick
continue
continue
set var counter = 99
print counter
continue
print counter
print i
delete
call tick(100)
print counter
bt 1
break tick
continue
print counter
print i
GDB
expect divert '\$1 = 99 .*Breakpoint 1, tick \(i=3\).*\$2 = 3 \$3 = 3 .*\$4 = 103 #0  tick \(i=3\).*Breakpoint 2, tick \(i=4\).*\$5 = 6 \$6 = 4' \
  "set var and call change a throw-away copy; continuing replays the recorded values"

# Ctrl-C in gdb (sent from a timer inside gdb) stops a long continue where it is; the
# timeline goes on from there, backwards too. The trace's 120,000 getppid calls are traced
# (with syscall buffering they are records in 61 events, replayed in milliseconds).
"$REWIND" record --no-syscall-buffer -o "$WORK/long.trace" "$SAMPLES_BIN/../bench/many_events" >/dev/null 2>&1 \
  || fail "record many_events"
cat >"$WORK/ctrlc.gdb" <<'GDB'
python
import threading, os, signal, time
# A Ctrl-C that reaches gdb before the continue is under way is dropped (on a loaded machine
# gdb may still be busy then), so press it again every second until gdb reports a stop. Not
# sooner: a second Ctrl-C while gdb waits for the stop of its first one makes it ask "The
# target is not responding to interrupt requests. Stop debugging it?", which batch mode
# answers yes (a loaded CI machine took longer than 0.3 s to stop there once).
stopped = threading.Event()
gdb.events.stop.connect(lambda e: stopped.set())
def press():
    while not stopped.wait(1.0):
        os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=press, daemon=True).start()
end
continue
monitor when
reverse-stepi
monitor when
GDB
timeout 120 "$REWIND" replay "$WORK/long.trace" -- -batch -nx -x "$WORK/ctrlc.gdb" >"$WORK/ctrlc.out" 2>&1 \
  || fail "ctrlc: gdb failed: $(tail -3 "$WORK/ctrlc.out")"
# gdb's "of N" counts the trace's events, its End included: one past the last one dumped.
total=$(($("$REWIND" dump "$WORK/long.trace" | tail -1 | awk '{print $1}') + 1))
expect ctrlc "Program received signal SIGINT, Interrupt.*Current event: [0-9]+ \\(of $total\\).*Current event: [0-9]+ \\(of $total\\)" \
  "Ctrl-C interrupts a continue part-way; reverse-stepi goes on from there"

# A crash: gdb sees the signal at the faulting instruction, can step back from it, and going
# forward again ends at the same place (the process cannot go past its death).
"$REWIND" record -o "$WORK/nullw.trace" "$TEST_PROGRAMS/null_write" >"$WORK/nullw.rec" 2>&1
rc=$?
[ "$rc" -eq 139 ] || fail "null_write should die of SIGSEGV when recorded (exit $rc): $(tail -2 "$WORK/nullw.rec")"
cat >"$WORK/crash.gdb" <<'GDB'
continue
print *n
reverse-step
print n->value
continue
continue
GDB
timeout 120 "$REWIND" replay "$WORK/nullw.trace" -- -batch -nx -x "$WORK/crash.gdb" >"$WORK/crash.out" 2>&1 \
  || fail "crash: gdb failed: $(tail -3 "$WORK/crash.out")"
expect crash 'Program received signal SIGSEGV, Segmentation fault. +poison \(n=0x[0-9a-f]+\) at [^ ]*null_write.c:[0-9]+ .*\$1 = \{value = 3, next = 0x0\} .*\$2 = 3 .*Program received signal SIGSEGV.*No more reverse-execution history. +poison' \
  "the crash is a signal stop; reverse-step goes back in poison(); forward again ends at the crash"

# Two live processes (tests/programs/fork_worker.c: a parent and its fork()ed worker over
# pipes): a breakpoint in the worker's function and one in the parent's are both hit, each
# in its own process, forwards; then backwards the same hits in the reverse order. Which
# process runs first between two events depends on the recording, so the check is on each
# process's own order and on the reverse being the mirror of the forward run. Each process
# is an inferior of gdb's (the multiprocess extensions and fork events): `info inferiors`
# lists both, and each inferior reads its own process's memory.
# The worker ends after the parent's last answer, but a replay may reach its end first (see
# fork_memory below): then gdb hears of it as it does natively ("[Inferior 2 ... exited
# normally]", the exited inferior selected), and next_hit goes on in the parent.
"$REWIND" record -o "$WORK/fork" "$TEST_PROGRAMS/fork_worker" >"$WORK/fork.rec" 2>&1 ||
  fail "recording fork_worker failed: $(tail -1 "$WORK/fork.rec")"
next_hit_script  # lib.sh
cat >"$WORK/fork.gdb" <<GDB
source $WORK/next_hit.gdb
break worker_step
break parent_got
next_hit
info threads
info inferiors
next_hit
next_hit
next_hit
next_hit
next_hit
echo ==back==\n
reverse-continue
reverse-continue
reverse-continue
reverse-continue
reverse-continue
GDB
timeout 120 "$REWIND" replay "$WORK/fork" -- -batch -nx -x "$WORK/fork.gdb" >"$WORK/fork.out" 2>&1 ||
  fail "gdb on fork_worker exited $?: $(tail -3 "$WORK/fork.out")"
# Each hit as "w<job>" or "p<answer>", with the thread (recorded tid) that hit it.
hits() {
  sed -nE 's/^Thread [0-9.]+ hit Breakpoint [0-9.]+, worker_step \(job=([0-9]+)\).*/w\1/p;
           s/^Thread [0-9.]+ hit Breakpoint [0-9.]+, parent_got \(answer=([0-9]+)\).*/p\1/p'
}
forward=$(sed '/==back==/q' "$WORK/fork.out" | hits | tr '\n' ' ')
backward=$(sed '1,/==back==/d' "$WORK/fork.out" | hits | tr '\n' ' ')
mirror=$(echo "$forward" | tr ' ' '\n' | sed '/^$/d' | head -n 5 | tac | tr '\n' ' ')
[ "$(echo "$forward" | tr ' ' '\n' | grep '^w' | tr '\n' ' ')" = "w1 w2 w3 " ] &&
  [ "$(echo "$forward" | tr ' ' '\n' | grep '^p' | tr '\n' ' ')" = "p1 p4 p9 " ] &&
  pass "fork: forwards, the worker's hits w1 w2 w3 and the parent's p1 p4 p9 ($forward)" ||
  { sed 's/^/    /' "$WORK/fork.out" | tail -40; fail "fork: forward hits were: $forward"; }
[ "$backward" = "$mirror" ] && pass "fork: backwards, the same hits in reverse ($backward)" ||
  { sed 's/^/    /' "$WORK/fork.out" | tail -40; fail "fork: backward hits $backward, expected $mirror"; }
# info threads names both processes' threads by program and ids.
grep -Eq 'Thread ([0-9]+)\.\1 \(fork_worker \[\1/\1\]\).*' "$WORK/fork.out" &&
  [ "$(grep -Ec 'Thread [0-9]+\.[0-9]+ \(fork_worker \[[0-9]+/[0-9]+\]\)' "$WORK/fork.out")" -ge 2 ] &&
  pass "fork: info threads shows each thread as 'fork_worker [PID/TID]'" ||
  { sed 's/^/    /' "$WORK/fork.out" | tail -40; fail "fork: info threads did not name both processes"; }
# gdb sees two inferiors, each a process running fork_worker.
[ "$(grep -Ec '^[* ] +[12] +process [0-9]+ .*fork_worker' "$WORK/fork.out")" = 2 ] &&
  pass "fork: info inferiors lists the parent and the worker as two processes" ||
  { sed 's/^/    /' "$WORK/fork.out" | head -30; fail "fork: info inferiors did not list 2 processes"; }
# Each inferior reads its own memory: at the parent's second answer its `total` holds the
# first (1), the worker's copy of `total` (never added to) 0; back in inferior 1, 1 again
# and the parent's frame. Then a reverse-continue from the worker's side still stops in the
# parent, at its first answer.
# The worker must still live at that stop. A replay runs a process's code only towards its
# own next event: where the parent's answers were buffered syscalls of an event recorded
# after the worker's end, the parent reaches parent_got after the worker ended, and gdb
# hears of that end first (docs/how-it-works.md, "Limits"). Such a recording does not
# test this; up to four more are made (gdb runs
# without gdb_batch here, whose failed exit would count against the test; the expect below
# judges the last attempt).
mem_trace="$WORK/fork"
for attempt in 1 2 3 4 5; do
  cat >"$WORK/fork_memory.gdb" <<'GDB'
break parent_got if answer == 4
continue
print total
inferior 2
print total
inferior 1
print total
frame
delete
break parent_got
reverse-continue
print answer
GDB
  timeout 180 "$REWIND" replay "$mem_trace" -- -batch -nx -x "$WORK/fork_memory.gdb" \
    >"$WORK/fork_memory.out" 2>&1
  grep -q "exited normally" "$WORK/fork_memory.out" || break
  echo "fork_memory: recording $attempt ended the worker before the parent's stop; recording again"
  mem_trace="$WORK/fork_mem$attempt"
  "$REWIND" record -o "$mem_trace" "$TEST_PROGRAMS/fork_worker" >/dev/null 2>&1 ||
    fail "recording fork_worker again failed"
done
expect fork_memory 'parent_got \(answer=4\).*\$1 = 1 .*Switching to inferior 2 .*\$2 = 0 .*Switching to inferior 1 .*\$3 = 1 .*#0 +parent_got \(answer=4\).*parent_got \(answer=1\).*\$4 = 1' \
  "fork: each inferior reads its own process's memory (total 1 in the parent, 0 in the worker)"

# Stopped inside librewind_preload (a libc call it buffers): the backtrace goes on through the
# site's stub (whose call frame information names the syscall it stands for) to main.
gdb_batch "$WORK/fork" preload_bt <<GDB
break main
continue
break dispatch
continue
bt
GDB
expect_output preload_bt "#0 +dispatch .*#[0-9]+ +0x[0-9a-f]+ in rwd_entry .*#[0-9]+ +0x[0-9a-f]+ in rwd_stub_area .*#[0-9]+ +0x[0-9a-f]+ in [_a-zA-Z]+ .*#[0-9]+ +0x[0-9a-f]+ in main \\(\\) at [^ ]*fork_worker.c" \
  "a backtrace from inside librewind_preload goes through the stub to main"

# A fork passed by single steps (no forward run stopped at it): gdb is not shown the child
# until its first stop, which is then announced as a fork and reported at once after.
# The parent steps into fork() and on until it is back in main: not a fixed number of steps.
# Where a step count leaves the parent depends on the order the recording holds: each step
# first replays the other tasks' events recorded before the parent's next one, and where the
# parent's buffered writes of jobs 2 and 3 went into an event recorded after the worker's
# answers, 2,500 steps let the worker run to its end unseen (CI, 2026-11-30).
FORK_LINE=$(grep -n 'pid_t pid = fork();' "$SOURCE_DIR/tests/programs/fork_worker.c" | cut -d: -f1)
gdb_batch "$WORK/fork" fork_stepped <<GDB
break fork_worker.c:$FORK_LINE
continue
stepi
while \$_caller_is("main", 0)
  stepi
end
while !\$_caller_is("main", 0)
  stepi
end
bt
info inferiors
break worker_step
continue
info inferiors
GDB
tr '\n' ' ' <"$WORK/fork_stepped.out" |
  grep -Eq "fork_worker.c:$FORK_LINE .*#[0-9]+ .* in main \(\) at [^ ]*fork_worker.c:[0-9]+ .*\* 1 +process [0-9]+ .*fork_worker-0 +Breakpoint 2 at .*New inferior 2 .*Thread 2\.1 hit Breakpoint 2\.2, worker_step \(job=[0-9]\) .* 2 +process [0-9]+ " &&
  ! sed -n '/^Breakpoint 2 at/q;p' "$WORK/fork_stepped.out" | grep -Eq '^[* ] +2 +process' &&
  pass "fork: a child made while stepping is shown at its first stop, as a new inferior" ||
  { sed 's/^/    /' "$WORK/fork_stepped.out" | tail -30; fail "fork: the stepped-over fork's child was not announced"; }

# A fork()ed child that execs another program (tests/programs/exec_pair.c runs
# exec_pair_child): gdb hears of the exec, loads the new program's symbols into that
# inferior, and a pending breakpoint in it binds there. child_step there and parent_step here
# are the same code at the same address (0x300007), so each breakpoint must stop only in its
# own program: the child's 3 hits, then the parent's i=3 forwards, and backwards the child's
# 3 hits in reverse, then the parent's i=2. The parent waits for the child before i=3: gdb
# hears of the child's end there (as natively: the exited inferior is selected, next_hit goes
# on in the parent), and going back before it revives the child as a fork of the parent,
# then an exec of its program, so that its breakpoint binds again.
"$REWIND" record -o "$WORK/exec" "$TEST_PROGRAMS/exec_pair" "$TEST_PROGRAMS/exec_pair_child" \
  >"$WORK/exec.rec" 2>&1 || fail "recording exec_pair failed: $(tail -1 "$WORK/exec.rec")"
gdb_batch "$WORK/exec" exec <<GDB
source $WORK/next_hit.gdb
set breakpoint pending on
break child_step
break parent_step if i >= 2
next_hit
next_hit
next_hit
next_hit
info inferiors
next_hit
info inferiors
echo ==back==\n
reverse-continue
reverse-continue
reverse-continue
reverse-continue
GDB
exec_hits=$(sed -nE 's/^(Thread [0-9.]+ hit )?Breakpoint [0-9]+, (child|parent)_step \(i=([0-9])\).*/\2\3/p' \
  "$WORK/exec.out" | tr '\n' ' ')
[ "$exec_hits" = "parent2 child0 child1 child2 parent3 child2 child1 child0 parent2 " ] &&
  grep -q 'is executing new program: .*exec_pair_child' "$WORK/exec.out" &&
  grep -Eq '^[* ] +2 +process [0-9]+ .*exec_pair_child' "$WORK/exec.out" &&
  pass "exec: the child's program is loaded at its exec; its breakpoint hits only there, both ways ($exec_hits)" ||
  { sed 's/^/    /' "$WORK/exec.out" | tail -40; fail "exec: hits were: $exec_hits"; }
# The child's end, between its last hit and the parent's i=3; the inferiors listed after it
# are the parent alone.
tr '\n' ' ' <"$WORK/exec.out" |
  grep -Eq 'child_step \(i=2\) .*\[Inferior 2 \(process [0-9]+\) exited normally\] .*parent_step \(i=3\) ' &&
  sed -n '/parent_step (i=3)/,/==back==/p' "$WORK/exec.out" | grep -Eq '^\* 1 +process [0-9]+ ' &&
  ! sed -n '/parent_step (i=3)/,/==back==/p' "$WORK/exec.out" | grep -Eq '^[* ] +2 +process' &&
  pass "exec: gdb hears of the child's exit before the parent's i=3, and lists the parent alone after it" ||
  { sed 's/^/    /' "$WORK/exec.out" | tail -40; fail "exec: no exit of the child before parent_step(3)"; }
# Going back from the parent's i=3 revives the child: gdb hears of it as a fork of the
# parent and then the exec of its program (a new inferior running exec_pair_child), and its
# breakpoint hits there; forwards again, its end is told again.
gdb_batch "$WORK/exec" exec_revived <<GDB
source $WORK/next_hit.gdb
set breakpoint pending on
break child_step
break parent_step if i >= 3
next_hit
next_hit
next_hit
next_hit
reverse-continue
print i
next_hit
print i
GDB
tr '\n' ' ' <"$WORK/exec_revived.out" |
  grep -Eq 'Inferior 2 \(process [0-9]+\) exited normally.*parent_step \(i=3\).*New inferior 3 .*executing new program: [^ ]*exec_pair_child.*child_step \(i=2\).*\$1 = 2 .*Inferior 3 \(process [0-9]+\) exited normally.*parent_step \(i=3\).*\$2 = 3' &&
  pass "exec: back from the parent's i=3 the child lives again (inferior 3, exec_pair_child), and forwards it ends again" ||
  { sed 's/^/    /' "$WORK/exec_revived.out" | tail -40; fail "exec: the revived child was not shown as expected"; }

# A reverse step far from any syscall (issue 25): back from the write to `half`, made once in
# the middle of compute_loop's 100,000,000-pass loop, reached by a watchpoint in reverse.
"$REWIND" record -o "$WORK/far" "$TEST_PROGRAMS/compute_loop" 100000000 >"$WORK/far.rec" 2>&1 ||
  fail "compute_loop: record failed: $(tail -2 "$WORK/far.rec")"
cat >"$WORK/far.gdb" <<'GDB'
break exit
continue
watch -l half
reverse-continue
print i
print/x $pc
reverse-stepi
print/x $pc
stepi
print/x $pc
print i
GDB
timeout 120 "$REWIND" replay "$WORK/far" -- -batch -nx -x "$WORK/far.gdb" >"$WORK/far.out" 2>&1 ||
  fail "gdb on compute_loop exited $?: $(tail -3 "$WORK/far.out")"
# $1 = i at the write, $2 = the writing instruction; one back is another instruction, one
# forward is the writing one again, with the same i.
if tr '\n' ' ' <"$WORK/far.out" |
  grep -Eq '\$1 = 50000000 +\$2 = (0x[0-9a-f]+) .*\$3 = 0x[0-9a-f]+ .*\$4 = \1 +\$5 = 50000000'; then
  [ "$(sed -n 's/^\$2 = //p' "$WORK/far.out")" != "$(sed -n 's/^\$3 = //p' "$WORK/far.out")" ] &&
    pass "far: reverse-stepi and stepi around a write 50,000,000 passes into a loop with no syscall" ||
    fail "far: reverse-stepi did not move"
else
  fail "far: gdb said:"; sed 's/^/    /' "$WORK/far.out" | tail -25
fi

# An out-of-source build, as Meson compiles (`cd build && gcc ../src/history.c`: the debug
# information names "../src/history.c" against the build directory): gdb binds a breakpoint
# given by the file's absolute path and stops there in the replay, forwards and backwards.
mkdir -p "$WORK/oos/src" "$WORK/oos/build"
cp "$SOURCE_DIR/tests/programs/path_history.c" "$WORK/oos/src/history.c"
(cd "$WORK/oos/build" && gcc -g -O0 ../src/history.c -o prog) || fail "oos: gcc failed"
"$REWIND" record -o "$WORK/oos.trace" "$WORK/oos/build/prog" >/dev/null 2>&1 || fail "oos: record failed"
ADD_LINE=$(grep -n "total += v;" "$WORK/oos/src/history.c" | cut -d: -f1)
gdb_batch "$WORK/oos.trace" oos <<GDB
break $WORK/oos/src/history.c:$ADD_LINE
continue
continue
reverse-continue
print v
GDB
expect oos "Breakpoint 1, add \(v=0\) at [^ ]*history.c:$ADD_LINE .*Breakpoint 1, add \(v=1\) .*Breakpoint 1, add \(v=0\) .*\\\$1 = 0" \
  "a breakpoint by absolute path in an out-of-source build, hit forwards and backwards"

# monitor history: every change of a value over the recording, without moving (a stack local
# of the second of two calls, then a global), and monitor goto to one of them; monitor calls
# of a recursive function, and goto one.
"$REWIND" record -o "$WORK/vh.trace" "$TEST_PROGRAMS/value_history" >/dev/null 2>&1 ||
  fail "history: record failed"
gdb_batch "$WORK/vh.trace" history <<'GDB'
break accumulate
continue
continue
monitor history sum
print n
monitor history counter
monitor goto 5
maint flush register-cache
frame 0
print counter
reverse-stepi
print counter
monitor goto 12
monitor calls depth_sum
monitor goto 2
maint flush register-cache
frame 0
print n
monitor history shape
GDB
expect history 'History of sum \(long int, 8 bytes at 0x[0-9a-f]+, a local of accumulate\): 4 changes +0  event [0-9]+  thread [0-9]+  55 -> 0  in accumulate at [^ ]*value_history.c:[0-9]+ +1 .* 0 -> 1 .* 2 .* 1 -> 5 .* 3 .* 5 -> 14  in accumulate' \
  "the history of a stack local holds the second call's changes only"
expect history '\$1 = 3 .*History of counter \(int, 4 bytes at 0x[0-9a-f]+\): 12 changes .* 5  event [0-9]+  thread [0-9]+  7 -> 8  in bump at [^ ]*value_history.c' \
  "the history did not move the replay; the global's 12 changes, in bump"
expect history 'Change 5 of counter: 7 -> 8 .*#0  bump .*\$2 = 8 .*\$3 = 7 .*rewind: usage: monitor goto N, N from 0 to 12' \
  "monitor goto goes to the change: the new value there, the old one an instruction back"
expect history 'Calls of depth_sum: 5 +0  event [0-9]+  thread [0-9]+  depth_sum \(n=4\) -> 10  from main at [^ ]*value_history.c:[0-9]+ +1 .*\(n=3\) -> 6  from depth_sum .* 4 .*\(n=0\) -> 0 .*Call 2 of depth_sum .*#0  depth_sum \(n=2\) .*\$4 = 2' \
  "monitor calls lists a recursive function's calls with arguments and results; goto one"
expect history 'History of shape \(struct shape, 24 bytes at 0x[0-9a-f]+\): 9 changes +0  event [0-9]+  thread [0-9]+  \.pos\.x: 0 -> 1  in reshape .* 6  event [0-9]+  thread [0-9]+  \.pos\.x, \.pos\.y: 6, 0 -> 40, 50  in reshape .* 8  event [0-9]+  thread [0-9]+  \.area: 0 -> 1200  in reshape' \
  "the history of a struct names the members each write changed"

# monitor calls of a Python function by its qualified name: three calls made between the same
# two events, with their arguments, results and the calling line, and goto the second.
"$REWIND" record -o "$WORK/pyh.trace" /usr/bin/python3 \
  "$SOURCE_DIR/tests/programs/python_lines/history.py" >/dev/null 2>&1 ||
  fail "python calls: record failed"
gdb_batch "$WORK/pyh.trace" pycalls <<'GDB'
monitor calls history.running
monitor goto 1
GDB
if "$REWIND" machine | grep -q '^debug registers for programs: yes'; then
  expect pycalls 'Calls of history.running: 3 +0  event [0-9]+  thread [0-9]+  running \(n=3\) -> 14  from [^ ]+ at [^ ]*history.py:15 +1 .* running \(n=4\) -> 30 .* 2 .* running \(n=2\) -> 5 .*Call 1 of history.running at event' \
    "monitor calls lists a Python function's calls with their arguments, results and caller; goto one"
else
  # A PVM guest (`rewind machine`): Python's calls are found by watching reads, which cannot
  # be seen here; the query says so rather than listing no calls.
  expect pycalls 'history.running: this machine.s CPU does not give programs its debug registers .*cannot see reads' \
    "monitor calls of a Python function is refused with the reason where reads cannot be watched"
fi
finish
