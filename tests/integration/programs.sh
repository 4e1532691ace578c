#!/usr/bin/env bash
# The programs issue #2 names, and small ones of this project's: each records and replays
# byte-identically, twice.
. "$(dirname "$0")/lib.sh"
# like_native NAME NATIVE PROGRAM [ARGS...]: records PROGRAM buffered (NAME) and with every
# syscall traced (NAME_traced), each replayed twice; while recorded it must print NATIVE, what
# it printed natively.
like_native() {
  local base=$1 native=$2 name opts
  shift 2
  for opts in "" --no-syscall-buffer; do
    name=$base${opts:+_traced}
    RECORD_OPTS=$opts record_and_replay "$name" "$@"
    [ "$(cat "$WORK/$name.rec.out")" = "$native" ] ||
      fail "$name: recorded, the program saw other results than natively: $(diff <(echo "$native") "$WORK/$name.rec.out")"
  done
}
# has_lines TEXT LINE...: true when each LINE is a whole line of TEXT (fixed strings).
has_lines() {
  local text=$1 line
  shift
  for line; do echo "$text" | grep -qxF -- "$line" || return 1; done
}
# buffered_calls NAME REGEX SYSCALL MIN: the buffered recording NAME holds at most 2 traced
# events of the syscalls REGEX matches (the loader's, before the library starts) and more than
# MIN buffered records of SYSCALL; its traced twin (NAME_traced) more than MIN events of it.
buffered_calls() {
  local traced buffered all
  traced=$("$REWIND" dump "$WORK/$1.trace" | grep -Ec " syscall +($2) ")
  buffered=$("$REWIND" dump --json "$WORK/$1.trace" | grep -o "\"syscall\":\"$3\"" | wc -l)
  all=$("$REWIND" dump "$WORK/$1_traced.trace" | grep -Ec " syscall +$3 ")
  if [ "$traced" -le 2 ] && [ "$buffered" -gt "$4" ] && [ "$all" -gt "$4" ]; then
    pass "$1: $buffered $3 calls buffered, $traced traced ($all traced without buffering)"
  else
    fail "$1: $3 calls $buffered buffered, $traced traced; $all without buffering"
  fi
}
case "$1" in
  ls) need ls; record_and_replay ls ls -la /usr/bin ;;
  date) need date; record_and_replay date date ;;
  pipeline) need sh; record_and_replay pipeline sh -c 'ls /usr/lib | sort -r | head -5' ;;
  python3) need python3
    record_and_replay python3 python3 -c 'import random,time,os; print(random.random(), time.time(), os.getpid())' ;;
  Rscript) need Rscript
    record_and_replay Rscript Rscript -e 'cat(runif(3), format(Sys.time()), "\n")' ;;
  sqlite3) need sqlite3; record_and_replay sqlite3 sqlite3 :memory: "select random();" ;;
  gcc) need gcc
    printf 'int twice(int x) { return 2 * x; }\n' >"$WORK/small.c"
    record_and_replay gcc gcc -c "$WORK/small.c" -o "$WORK/small.o"
    [ -s "$WORK/small.o" ] || fail "gcc produced no object file while recorded" ;;
  node) need node  # V8 allocates a memory protection key; worker threads end with the process
    record_and_replay node node -e 'console.log(1 + 1, Math.random(), Date.now())' ;;
  gdb) need gdb  # threads that wait while the main thread's exit_group ends them
    record_and_replay gdb gdb --version ;;
  xz) need xz
    # Two blocks, compressed by two threads at once, each with an encoder of about 94 MB: a
    # preemption's point digests all of it, so slices grow to keep that cost small
    # (SchedulePolicy::slice). With 10 ms slices this took about 150 preemptions (10 s).
    head -c 4000000 /dev/urandom >"$WORK/xz.in"
    xz -T2 --block-size=2MiB -c "$WORK/xz.in" >"$WORK/xz.native"
    record_and_replay xz xz -T2 --block-size=2MiB -c "$WORK/xz.in"
    cmp -s "$WORK/xz.native" "$WORK/xz.rec.out" || fail "xz: the recording's output differs from a native run's"
    n=$("$REWIND" dump "$TRACE" | grep -c preempted)
    if [ "$n" -le 12 ]; then pass "xz: $n preemptions"
    else fail "xz: $n preemptions (each digests ~200 MB); slices did not grow"; fi ;;
  vfork_shared)  # vfork and posix_spawn beside MAP_SHARED memory: the parent gives up its turn
    native=$("$TEST_PROGRAMS/vfork_shared")
    echo "$native" | grep -q "^the forked child read 41 and wrote 42$" || fail "natively, vfork_shared printed: $native"
    like_native vfork_shared "$native" "$TEST_PROGRAMS/vfork_shared" ;;
  python_workers) need python3  # a process pool, then a subprocess from asyncio (a vfork)
    script=$SOURCE_DIR/tests/programs/python_workers.py
    native=$(python3 "$script")
    echo "$native" | grep -q "^asyncio: ('from a child', 0)$" || fail "natively, python_workers printed: $native"
    like_native python_workers "$native" python3 "$script" ;;
  setuid)  # a setuid program: its saved copy must not be setuid (exec would turn ASLR on)
    need passwd
    [ -u "$(command -v passwd)" ] || { echo "passwd is not setuid here"; exit 77; }
    record_and_replay setuid passwd --help
    for f in "$WORK"/setuid.trace/files/passwd-*; do
      [ -u "$f" ] && fail "the trace's copy of passwd is setuid: $(ls -l "$f")"
    done ;;
  unknown_syscalls)  # numbers the kernel does not implement: ENOSYS, as natively
    native=$("$TEST_PROGRAMS/unknown_syscalls")
    echo "$native" | grep -q "^every call failed with ENOSYS" || fail "natively: $native"
    record_and_replay unknown_syscalls "$TEST_PROGRAMS/unknown_syscalls"
    [ "$(cat "$WORK/unknown_syscalls.rec.out")" = "$native" ] \
      || fail "recorded, the program saw other results than natively: $(cat "$WORK/unknown_syscalls.rec.out")"
    RECORD_OPTS=--no-syscall-buffer record_and_replay unknown_syscalls_traced "$TEST_PROGRAMS/unknown_syscalls"
    [ "$(cat "$WORK/unknown_syscalls_traced.rec.out")" = "$native" ] \
      || fail "recorded without the buffer, the program saw other results than natively" ;;
  ipc_calls)  # message queues, SysV IPC, clock_adjtime, inotify, pidfd_getfd, vmsplice...
    for opts in "" --no-syscall-buffer; do
      name=ipc_calls${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/ipc_calls"
      out="$WORK/$name.rec.out"
      grep -q "^ipc_calls done" "$out" || fail "$name: the program did not run to its end: $(tail -3 "$out")"
      grep -q "^sem: 3 semaphores, values 2 3 9" "$out" || fail "$name: semaphores: $(grep sem: "$out")"
      grep -q "^msg: 1 queued, got 12 bytes of type 5: hello queue" "$out" || fail "$name: $(grep msg: "$out")"
      grep -q "^mq: 2 queued, got second (priority 7)" "$out" || fail "$name: $(grep mq: "$out")"
      grep -q "^mmsg: sent 2, received 2: one (3) two! (4)" "$out" || fail "$name: $(grep mmsg: "$out")"
      grep -q "^process_vm_writev 22, the child read it" "$out" || fail "$name: $(grep process_vm_writev "$out")"
      grep -q "^mincore 0: 1100" "$out" || fail "$name: $(grep mincore "$out")"
      grep -q "^kcmp same vm 0" "$out" || fail "$name: $(grep kcmp "$out")"
      grep -q "^get_mempolicy 0: mode 0" "$out" || fail "$name: $(grep get_mempolicy "$out")"
      # Unavailable while recorded, as under rr (liburing falls back to plain syscalls).
      grep -q "^io_uring_setup Function not implemented" "$out" || fail "$name: io_uring_setup ran"
      grep -q "^userfaultfd Function not implemented" "$out" || fail "$name: userfaultfd ran"
    done ;;
  kernel_calls)  # keyrings, file handles, fs ids, calls the kernel names but lacks; AIO and
    # packet rings refused
    native=$("$TEST_PROGRAMS/kernel_calls")
    echo "$native" | grep -q "^keyctl read 7: payload" || echo "note: no keyrings here: $(echo "$native" | head -1)"
    like_native kernel_calls "$native" "$TEST_PROGRAMS/kernel_calls"
    record_and_replay kernel_calls_unavailable "$TEST_PROGRAMS/kernel_calls" unavailable
    out="$WORK/kernel_calls_unavailable.rec.out"
    grep -q "^io_setup Function not implemented" "$out" || fail "io_setup ran: $(grep io_setup "$out")"
    grep -q "^memfd_secret Function not implemented" "$out" || fail "memfd_secret ran: $(grep memfd "$out")"
    for ring in PACKET_RX_RING PACKET_TX_RING; do
      grep -q "^$ring Protocol not available" "$out" || fail "$ring was set up: $(grep "$ring" "$out")"
    done
    grep -q "^SO_REUSEADDR worked" "$out" || grep -q "no packet socket" "$out" ||
      fail "another socket option failed: $(grep SO_REUSEADDR "$out")"
    grep -q "^kernel_calls done" "$out" || fail "kernel_calls did not finish: $(tail -3 "$out")" ;;
  bpf_calls)  # eBPF maps (array, per-CPU), program loads with the verifier's log, ids
    native=$("$TEST_PROGRAMS/bpf_calls")
    echo "$native" | grep -q "^map_create rewind_array: ok" ||
      skip "bpf(2) does not work here: $(echo "$native" | head -1)"
    like_native bpf_calls "$native" "$TEST_PROGRAMS/bpf_calls"
    # A command rewind does not record is refused by name before it runs.
    out=$("$REWIND" record -o "$WORK/bpf_test_run" "$TEST_PROGRAMS/bpf_calls" test_run 2>&1 >/dev/null)
    [ "$out" = "rewind: bpf command 10 is not supported yet" ] && pass "BPF_PROG_TEST_RUN refused: $out" ||
      fail "test_run: $out" ;;
  prctl_state)  # PR_GET_TSC shows the program's mode, not rewind's; its own seccomp filter
    native=$("$TEST_PROGRAMS/prctl_state")
    echo "$native" | grep -q "^prctl_state done" || fail "natively: $native"
    # SECCOMP_RET_TRACE of its own filter, with no tracer asking for seccomp stops: ENOSYS
    [ "$(echo "$native" | grep -c "^getsid -1 errno 38")" = 3 ] &&
      echo "$native" | grep -q "^mkdirat -1 errno 38" || fail "natively, the trace filter: $native"
    like_native prctl_state "$native" "$TEST_PROGRAMS/prctl_state" ;;
  clone_namespaces)  # children cloned into namespaces of their own (CLONE_NEWUSER, clone3 too)
    native=$("$TEST_PROGRAMS/clone_namespaces")
    case "$native" in "no user namespaces"*) echo "$native"; exit 77 ;; esac
    echo "$native" | grep -q "^clone3 child exited 77; the file says: written by the clone3 child" ||
      fail "natively: $native"
    like_native clone_namespaces "$native" "$TEST_PROGRAMS/clone_namespaces" ;;
  kill_exiting)  # children killed as they end by their own exit_group: recorded as killed
    record_and_replay kill_exiting "$TEST_PROGRAMS/kill_exiting"
    [ "$(cat "$WORK/kill_exiting.rec.out")" = "60 children reaped" ] ||
      fail "kill_exiting: $(cat "$WORK/kill_exiting.rec.out" "$WORK/kill_exiting.rec.err")"
    # How many children the SIGKILL reached inside their exit_group (the case this is for):
    # the scheduler decides, so a run where none did only says so.
    hits=$("$REWIND" dump "$TRACE" | awk '$3 == "syscall" && $4 == "exit_group" { ended[$2] = 1 }
      $3 == "exit" && /killed by SIGKILL/ && ended[$2] { n++ } END { print n + 0 }')
    echo "children killed inside their exit_group: $hits" ;;
  fd_numbers)  # the desched counters take no number a program expects free, and end with
    # their threads
    # and are not listed in /proc/self/fd (the descriptors this shell passes on are)
    native=$("$TEST_PROGRAMS/fd_numbers" 2>/dev/null)
    [ "$(echo "$native" | head -2)" = "descriptors 3 to 99 free
lowest free descriptor: 5 before 300 threads, 5 after" ] &&
      echo "$native" | grep -q "^/proc/self/fd lists [0-9]* descriptors: 0 1 2 3 4 5" &&
      echo "$native" | grep -q "^its task's lists [0-9]* descriptors: 0 1 2 3 4 5" || fail "natively: $native"
    like_native fd_numbers "$native" "$TEST_PROGRAMS/fd_numbers"
    # Not vacuous: the buffered recording's threads opened their counters.
    counters=$("$REWIND" dump "$WORK/fd_numbers.trace" | grep -c " syscall  *perf_event_open = ")
    [ "$counters" -gt 300 ] || fail "fd_numbers: $counters desched counters opened, not 301"
    pass "fd_numbers: $counters desched counters opened and closed" ;;
  shared_turns)  # processes writing memory they share take turns: replay reads what they read
    for opts in "" --no-syscall-buffer; do
      name=shared_turns${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/shared_turns" || continue
      [ "$(grep -c "^handoff: .* yields$\|^counters: child [01] read\|^counters: final count \|^spin: " \
        "$WORK/$name.rec.out")" = 5 ] || fail "$name: $(cat "$WORK/$name.rec.out")"
      # Memory each process maps for itself after the fork (shmat, mmap of one file shared,
      # mprotect to writable): their turns are joined at that call (shared_mappings.cpp).
      RECORD_OPTS=$opts record_and_replay "${name}_apart" "$TEST_PROGRAMS/shared_turns" apart \
        "$WORK/$name.file" || continue
      [ "$(grep -c "^counters: child [01] read .*[0-9]\( in the segment\)*$\|^counters: final count \|^spin: " \
        "$WORK/${name}_apart.rec.out")" = 7 ] || fail "${name}_apart: $(cat "$WORK/${name}_apart.rec.out")"
    done ;;
  seccomp_sandbox)  # a sandbox's filter judges the program's calls, not the library's own
    native=$("$TEST_PROGRAMS/seccomp_sandbox")
    echo "$native" | grep -q "^3 traps: 72 16 107; si_call_addr is the handler's rip: 1" ||
      fail "natively: $native"
    like_native seccomp_sandbox "$native" "$TEST_PROGRAMS/seccomp_sandbox" ;;
  ptrace_signal_step)  # a tracer's single steps with a signal: into its handler, past an
    # ignored one, into a fault's handler; and gdb's stepi at a signal's stop
    native=$("$TEST_PROGRAMS/ptrace_signal_step")
    echo "$native" | grep -q "^step with SIGUSR1: stop Trace/breakpoint trap, si_code 5, at the handler 1, moved 1$" &&
      echo "$native" | grep -q "^step with ignored SIGUSR2: stop Trace/breakpoint trap, si_code 2, at the handler 0, moved 1$" &&
      echo "$native" | grep -q "^step with SIGSEGV: stop Trace/breakpoint trap, si_code 5, at the handler 1, moved 1$" &&
      echo "$native" | grep -q "^child exited 0$" &&
      echo "$native" | grep -q "^second child: killed by User defined signal 1$" || fail "natively: $native"
    like_native ptrace_signal_step "$native" "$TEST_PROGRAMS/ptrace_signal_step"
    if command -v gdb >/dev/null; then
      printf 'run\nstepi\nbt 1\ncontinue\n' >"$WORK/stepi.gdb"
      native=$(gdb -nx -batch -x "$WORK/stepi.gdb" --args "$TEST_PROGRAMS/ptrace_signal_step" raise 2>/dev/null |
        grep -v "^\[")
      echo "$native" | grep -q "^#0  on_usr1 " || fail "natively, gdb's stepi did not enter the handler: $native"
      for opts in "" --no-syscall-buffer; do
        RECORD_OPTS=$opts record_and_replay "gdb_stepi${opts:+_traced}" gdb -nx -batch -x "$WORK/stepi.gdb" --args "$TEST_PROGRAMS/ptrace_signal_step" raise
        [ "$(grep -v "^\[" "$WORK/gdb_stepi${opts:+_traced}.rec.out")" = "$native" ] ||
          fail "gdb stepi${opts:+ traced}: $(cat "$WORK/gdb_stepi${opts:+_traced}.rec.out")"
      done
    fi ;;
  ptrace_syscall_step)  # a tracer's single steps from its tracee's syscall stops
    native=$("$TEST_PROGRAMS/ptrace_syscall_step")
    has_lines "$native" "step from getppid's entry: signal 5, si_code 1, moved 0, result as expected 1" \
      "child exited 0" || fail "natively: $native"
    echo "$native" | grep -qE "^step from getpgid's exit: signal 5, si_code 2, moved [1-9][0-9]*, result as expected 1$" ||
      fail "natively: $native"
    like_native ptrace_syscall_step "$native" "$TEST_PROGRAMS/ptrace_syscall_step"
    if command -v gdb >/dev/null; then  # gdb's stepi at a `catch syscall` stop, and on
      printf 'catch syscall write\nrun\nstepi\nx/i $pc\nstepi\ncontinue\n' >"$WORK/catch.gdb"
      # (Addresses left out: the preload library moves libc.)
      shown() { grep -v "^\[" | sed -E 's/0x[0-9a-f]+/X/g'; }
      native=$(gdb -nx -batch -x "$WORK/catch.gdb" --args echo hi 2>/dev/null | shown)
      echo "$native" | grep -q "^=> X <__GI___libc_write+16>:" || fail "natively, gdb's stepi: $native"
      # Without the syscall buffer only (gdb recorded buffered: ptrace_signal_step and
      # gdb_inferior): a buffered gdb recording hung, rarely, when its SIGCHLD came just
      # before the library's untraced poll (fixed 2026-12-06; the fix is shown only by
      # repeated runs, so this case adds no exposure to a remaining one).
      RECORD_OPTS=--no-syscall-buffer record_and_replay gdb_catch_traced gdb -nx -batch -x "$WORK/catch.gdb" --args echo hi
      [ "$(shown <"$WORK/gdb_catch_traced.rec.out")" = "$native" ] || fail "gdb_catch_traced: $(cat "$WORK/gdb_catch_traced.rec.out")"
    fi ;;
  ptrace_pidns)  # a tracer inside a PID namespace names its tracees by that namespace's numbers
    native=$("$TEST_PROGRAMS/ptrace_pidns")
    case "$native" in "no PID namespaces"*) echo "$native"; exit 77 ;; esac
    has_lines "$native" "SIGSTOP: waitpid -> 2 stopped by 19, event 0" "fork event's new pid: 3" \
      'tracee: pid 2, secret 2222, message "written by pid 1"' "waitid: pid 2 code 4 status 0x605" \
      "interrupted: waitpid -> 4 stopped by 5, event 128" || fail "natively: $native"
    like_native ptrace_pidns "$native" "$TEST_PROGRAMS/ptrace_pidns"
    # The tracer's calls name their tasks by rewind's tids in the trace (replay finds them so).
    named=$("$REWIND" dump "$WORK/ptrace_pidns.trace" | grep -cE " (ptrace|process_vm_writev) = .*\[(task|[0-9]+ bytes into task) [0-9]+")
    [ "$named" -ge 10 ] || fail "ptrace_pidns: $named calls name a task by rewind's tid"
    # strace in a sandbox's PID namespace (unshare --pid --fork), the tracee's pids 2, 3...
    if command -v strace >/dev/null && unshare -r true 2>/dev/null; then
      script='trap "echo got" USR1; kill -USR1 $$; sh -c "exit 3"; echo "done $?"'
      # The signals (their si_pid), kill's pid and the ends, by the namespace's numbers.
      # (The child's CPU times left out: strace shows them as si_utime=, si_stime= or /* 0.01 s */.)
      shown() { grep -E "^(\[pid +[0-9]+\] )?(\+\+\+|--- SIG|kill\()" | tr -s ' ' |
        sed -E 's/, si_[us]time=[0-9]+//g; s| /\* [0-9.]+ s \*/||'; }
      native=$(unshare -r -p -f strace -f sh -c "$script" 2>&1 >/dev/null | shown)
      echo "$native" | grep -qE "^\[pid [0-9]\] \+\+\+ exited with 3 \+\+\+$" &&
        echo "$native" | grep -qE "^--- SIGCHLD \{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=[0-9]," ||
        fail "natively, strace in a PID namespace: $native"
      for opts in "" --no-syscall-buffer; do
        name=strace_pidns${opts:+_traced}
        RECORD_OPTS=$opts record_and_replay $name unshare -r -p -f strace -f sh -c "$script"
        [ "$(cat "$WORK/$name.rec.out")" = "$(printf 'got\ndone 3')" ] || fail "$name: the shell printed $(cat "$WORK/$name.rec.out")"
        recorded=$(shown <"$WORK/$name.rec.err")
        [ "$recorded" = "$native" ] || fail "$name: recorded, strace showed other calls than natively: $(diff <(echo "$native") <(echo "$recorded"))"
      done
    fi ;;
  seccomp_notify)  # a supervisor answers its target's calls (SECCOMP_RET_USER_NOTIF), across
    # processes and threads, with a call that waits and one a signal interrupts
    native=$("$TEST_PROGRAMS/seccomp_notify")
    echo "$native" | grep -q "^processes: child's getuid answered 2 times, 2 named the child; it exited 0$" &&
      echo "$native" | grep -q "^threads: getppid 4000 4001; uname 0 Linux; getpgid -1 Operation not permitted; read 2 'hi'$" &&
      echo "$native" | grep -q "^interrupted getppid: handler ran 1, old id stale (ENOENT) 1, restarted call 4242$" ||
      fail "natively: $native"
    like_native seccomp_notify "$native" "$TEST_PROGRAMS/seccomp_notify"
    # A static program has no preload library: refused in one line, recorded without it.
    err=$("$REWIND" record -o "$WORK/notify_static.trace" "$TEST_PROGRAMS/seccomp_notify_static" 2>&1 >/dev/null)
    [ $? -ne 0 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] &&
      echo "$err" | grep -q "SECCOMP_RET_USER_NOTIF.*record with --no-syscall-buffer" ||
      fail "static, buffered: not refused in one line: $err"
    RECORD_OPTS=--no-syscall-buffer record_and_replay notify_static_traced "$TEST_PROGRAMS/seccomp_notify_static"
    [ "$(cat "$WORK/notify_static_traced.rec.out")" = "$native" ] || fail "static, traced: $(cat "$WORK/notify_static_traced.rec.out")"
    # The child executes a program under the filter: dynamic, its calls are notified as
    # before; static (no library page to make them from), refused in one line when buffered.
    native=$("$TEST_PROGRAMS/seccomp_notify" exec "$TEST_PROGRAMS/seccomp_notify")
    echo "$native" | grep -q "^executed: getuid 7000$" || fail "natively, exec: $native"
    like_native notify_exec "$native" "$TEST_PROGRAMS/seccomp_notify" exec "$TEST_PROGRAMS/seccomp_notify"
    err=$("$REWIND" record -o "$WORK/notify_exec_static.trace" "$TEST_PROGRAMS/seccomp_notify" exec "$TEST_PROGRAMS/seccomp_notify_static" 2>&1 >/dev/null)
    [ $? -ne 0 ] && [ "$(echo "$err" | wc -l)" -eq 1 ] &&
      echo "$err" | grep -q "^rewind: a call of getuid that a seccomp filter sends to a supervisor (SECCOMP_RET_USER_NOTIF), before rewind's preload library started" ||
      fail "exec of a static program, buffered: not refused in one line: $err"
    RECORD_OPTS=--no-syscall-buffer record_and_replay notify_exec_static_traced "$TEST_PROGRAMS/seccomp_notify" exec "$TEST_PROGRAMS/seccomp_notify_static"
    grep -q "^executed: getuid 7000$" "$WORK/notify_exec_static_traced.rec.out" ||
      fail "exec of a static program, traced: $(cat "$WORK/notify_exec_static_traced.rec.out")" ;;
  tsc_reads)  # rdtsc and rdtscp in the program and in a library it loads with dlopen: trapped
    # with PR_SET_TSC, or replaced where the CPU does not trap them (a PVM guest);
    # REWIND_PATCH_TSC=1 makes rewind replace them on any machine (engine/os/insn_patch.h).
    lib="$TEST_PROGRAMS/libtsc_reads_lib.so"
    for patch in "" 1; do
      for opts in "" --no-syscall-buffer; do
        name=tsc_reads${patch:+_patched}${opts:+_traced}
        REWIND_PATCH_TSC=$patch RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/tsc_reads" "$lib"
        out="$WORK/$name.rec.out"
        grep -q "^tsc_reads done" "$out" || fail "$name: the program did not run to its end: $(tail -3 "$out" "$WORK/$name.rec.err")"
        grep -q "^ordered 1 decoy 0x310f" "$out" || fail "$name: $(grep ordered "$out")"
        grep -q "^library rdtsc [0-9]* after 1" "$out" || fail "$name: $(grep library "$out")"
        # Its 4 reads of the counter are events of the trace (and the loader's before them).
        n=$("$REWIND" dump "$WORK/$name.trace" | grep -c " rdtsc ")
        [ "$n" -ge 4 ] || fail "$name: $n rdtsc events in the trace, at least 4 expected"
      done
    done ;;
  cpuid_reads)  # cpuid on two CPUs, and a branch on whether their APIC ids differ: replaced and
    # replayed as recorded (engine/os/insn_patch.h), where a native cpuid in the replay, on the
    # one CPU it is pinned to, would take the other branch
    # Recorded, it reads each CPU's own APIC id, as natively (cpuid runs on the task's CPU).
    native=$("$TEST_PROGRAMS/cpuid_reads" | head -1 | sed 's/, p*pid.*//')
    for opts in "" --no-syscall-buffer; do
      name=cpuid_reads${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/cpuid_reads"
      out="$WORK/$name.rec.out"
      grep -q "^cpuid_reads done" "$out" || fail "$name: the program did not run to its end: $(tail -3 "$out" "$WORK/$name.rec.err")"
      [ "$(head -1 "$out" | sed 's/, p*pid.*//')" = "$native" ] || fail "$name: natively '$native', recorded '$(head -1 "$out")'"
      grep -q "^vendor \(GenuineIntel\|AuthenticAMD\|[A-Za-z ]*\), max leaf [1-9]" "$out" || fail "$name: $(grep vendor "$out")"
      # Its 3 cpuids are events of the trace, after the loader's (init_cpu_features).
      n=$("$REWIND" dump "$WORK/$name.trace" | grep -c " cpuid ")
      [ "$n" -ge 10 ] || fail "$name: $n cpuid events in the trace, at least 10 expected"
    done
    # Under gdb, each read gives what it gave when recorded, forwards and after going back.
    gdb_batch "$WORK/cpuid_reads.trace" cpuid_gdb <<'EOF'
break apic_id
continue
finish
continue
finish
reverse-continue
reverse-continue
finish
EOF
    vals=$(grep -o 'Value returned is \$[0-9]* = [0-9]*' "$WORK/cpuid_gdb.out" | sed 's/.* = //' | tr '\n' ' ')
    set -- $vals
    [ $# -eq 3 ] && [ "$1" = "$3" ] || fail "cpuid under gdb: values '$vals' (the first read, again after going back, must match): $(tail -5 "$WORK/cpuid_gdb.out")"
    grep -q "^cpus 2, apic ids differ" "$WORK/cpuid_reads.rec.out" && [ "$1" = "$2" ] &&
      fail "cpuid under gdb: both reads gave $1, the recording saw two APIC ids" ;;
  sysv_shm)  # System V shared memory: a segment from before the recording, one shared with a child
    for opts in "" --no-syscall-buffer; do
      name=sysv_shm${opts:+_traced}
      : >"$WORK/$name.key"  # ftok's file: a segment key of this test's own
      "$TEST_PROGRAMS/sysv_shm" create "$WORK/$name.key" || fail "$name: cannot create the segment natively"
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/sysv_shm" use "$WORK/$name.key"
      out="$WORK/$name.rec.out"
      grep -q "^sysv_shm done" "$out" || fail "$name: the program did not run to its end: $(tail -3 "$out" "$WORK/$name.rec.err")"
      grep -q "^pre: 'left before the recording' 'and on its second page'" "$out" ||
        fail "$name: the segment from before: $(grep pre: "$out")"
      grep -q "^answer: the child saw 'from the parent' and 'x', mark 'c'" "$out" ||
        fail "$name: shared with the child: $(grep answer: "$out")"
      grep -q "^read-only: the same answer" "$out" || fail "$name: $(grep read-only: "$out")"
      grep -q "^new: 10000 bytes, 2 attached" "$out" || fail "$name: IPC_STAT: $(grep new: "$out")"
      grep -q "^remap: in place, the same answer" "$out" || fail "$name: $(grep remap: "$out")"
    done
    # Each replay's segments go with it: none is left behind (ipcs(1) lists the host's).
    if command -v ipcs >/dev/null; then
      left=$(ipcs -m | wc -l)
      "$REWIND" replay -a "$TRACE" >/dev/null 2>&1
      [ "$(ipcs -m | wc -l)" = "$left" ] ||
        fail "a replay left a System V segment behind: $(ipcs -m)"
    fi ;;
  shared_file)  # a file mapped shared by three processes, each mapping it itself; it grows
    for opts in "" --no-syscall-buffer; do
      name=shared_file${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/shared_file" "$WORK/$name.shared"
      out="$WORK/$name.rec.out"
      grep -q "^first child: exit 0, wrote 'pong from the first child'" "$out" &&
        grep -q "^second child: exit 0, wrote 'seen by the second child'" "$out" &&
        grep -q "^shared_file done" "$out" || fail "$name: natively shared writes not seen: $(cat "$out")"
    done ;;
  mapped_writes)  # a file written by write(2) and its kin while mapped shared, read back
    # through the mapping (engine/record/shared_file_writes.cpp); then LMDB, which writes its
    # pages with pwrite and reads them through a read-only shared map, loading and dumping a
    # database of 3,000 entries (its dump compared with the records it was loaded from).
    for opts in "" --no-syscall-buffer; do
      name=mapped_writes${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/mapped_writes" "$WORK/$name.file"
      grep -q "^mapped_writes: sum [0-9]*, 0 mismatches" "$WORK/$name.rec.out" ||
        fail "$name: $(cat "$WORK/$name.rec.out")"
    done
    # Both mappings, of the read-write and of the read-only descriptor, are of a shared file.
    [ "$("$REWIND" dump "$WORK/mapped_writes.trace" | grep -c "mmap = .*\[mapped_writes.file-[0-9]*, shared file 1\]")" = 2 ] ||
      fail "mapped_writes: the read-only descriptor's mapping is not of a shared file"
    # Backwards under gdb: the mapping shows the file as it was before the later write.
    src=$SOURCE_DIR/tests/programs/mapped_writes.c
    if command -v gdb >/dev/null; then
      gdb_batch "$WORK/mapped_writes.trace" mapped_writes_gdb <<GDB
break mapped_writes.c:$(grep -n 'expect(map, 2000' "$src" | cut -d: -f1)
break mapped_writes.c:$(grep -n 'expect(map, 3000' "$src" | cut -d: -f1)
continue
continue
print (char[8])map[3000]
reverse-continue
print (char[8])map[3000]
print (char[6])map[2000]
GDB
      expect_output mapped_writes_gdb '\$1 = "pwritev2".*Breakpoint 1,.*\$2 = "(\\000)+".*\$3 = "vector"' \
        "reverse-continue: the mapping without the later pwritev2, with the writev before it"
    fi
    need mdb_load
    cd "$WORK" || exit 1
    { echo VERSION=3; echo format=print; echo type=btree; echo HEADER=END
      for i in $(seq 10001 13000); do echo " key$i"; echo " value$i-$(printf '%0100d' "$i")"; done
      echo DATA=END; } >lmdb.txt
    mkdir lmdb
    record_and_replay lmdb sh -c 'mdb_load -f lmdb.txt lmdb && mdb_dump -p lmdb | sed -n "/^HEADER=END/,\$p"'
    cmp -s "$WORK/lmdb.rec.out" <(sed -n '/^HEADER=END/,$p' lmdb.txt) ||
      fail "lmdb: the dump differs from what was loaded"
    grep -q "shared file" <("$REWIND" dump "$WORK/lmdb.trace") ||
      fail "lmdb: no write into the mapped file was kept" ;;
  signal_steps)  # signals from another process while the recorder steps spinning threads to
    # their preemption points (tests/programs/signal_steps.c): each must arrive. One lost
    # hangs the recording (every --chaos recording did before), which a timeout ends.
    printf '#!/bin/sh\nexec timeout -s KILL 120 "%s" "$@"\n' "$REWIND" >"$WORK/rewind_in_time"
    chmod +x "$WORK/rewind_in_time"
    REWIND=$WORK/rewind_in_time RECORD_OPTS=--chaos record_and_replay signal_steps "$TEST_PROGRAMS/signal_steps"
    [ "$(cat "$WORK/signal_steps.rec.out")" = "signal_steps: 300 signals handled, sender exit 0" ] ||
      fail "signal_steps: $(cat "$WORK/signal_steps.rec.out" "$WORK/signal_steps.rec.err")"
    n=$("$REWIND" dump "$WORK/signal_steps.trace" | grep -c " sched ")
    [ "$n" -ge 100 ] || fail "signal_steps: only $n preemptions of the spinning threads" ;;
  sqlite3_wal)  # SQLite in WAL mode: connections of several processes share the -shm index.
    # Connection A stays open (reading its SQL from a FIFO) while another process inserts, then
    # reads the new row through its own mapping of the index. The connections' processes join
    # turns when the second maps the index (engine/record/shared_mappings.cpp; before that,
    # one replay in 30 diverged). Recorded buffered and traced. An earlier stop saw "disk I/O
    # error" from SQLite in about one buffered recording in ten; 52 buffered recordings on
    # 2026-12-05 (40 at this version, 12 at the one before) had none: cause not found.
    need sqlite3
    cd "$WORK" || exit 1  # the database's files go there
    for opts in "" --no-syscall-buffer; do
      name=sqlite3_wal${opts:+_traced}
      rm -f wal.db wal.db-shm wal.db-wal sql a.out
      RECORD_OPTS=$opts record_and_replay "$name" sh -c '
        sqlite3 wal.db "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3);" &&
        mkfifo sql && { sqlite3 wal.db <sql >a.out & } && exec 3>sql &&
        echo "SELECT count(*) FROM t;" >&3 && while [ ! -s a.out ]; do sleep 0.01; done &&
        sqlite3 wal.db "INSERT INTO t VALUES (4);" &&
        echo "SELECT sum(x) FROM t;" >&3 && exec 3>&- && wait && while read -r l; do echo "$l"; done <a.out &&
        sqlite3 wal.db "PRAGMA journal_mode; SELECT sum(x) FROM t;"'
      [ "$(cat "$WORK/$name.rec.out")" = "$(printf 'wal\n3\n10\nwal\n10')" ] ||
        fail "sqlite3 in WAL mode, recorded: $(cat "$WORK/$name.rec.out" "$WORK/$name.rec.err")"
    done ;;
  shell_jobs)  # background jobs and wait: SIGCHLD arrives inside rt_sigsuspend (dash), or not
    record_and_replay dash_jobs sh -c '(sleep 0.05 & echo started; wait) && echo after'
    [ "$(cat "$WORK/dash_jobs.rec.out")" = "$(printf 'started\nafter')" ] || fail "sh: $(cat "$WORK/dash_jobs.rec.out")"
    if command -v bash >/dev/null; then
      record_and_replay bash_jobs bash -c 'sleep 0.05 & sleep 0.01 & wait; echo "both done $?"'
      [ "$(cat "$WORK/bash_jobs.rec.out")" = "both done 0" ] || fail "bash: $(cat "$WORK/bash_jobs.rec.out")"
    fi
    # An interactive shell's job control on a pseudo-terminal that script(1) opens (its
    # TIOCGPTPEER, the terminal's ioctls, tcsetpgrp).
    if command -v script >/dev/null && command -v bash >/dev/null; then
      record_and_replay pty_jobs script -qec 'tty; stty -a | head -1; bash --norc -ic "sleep 0.05 & wait %1; echo job done \$?"' /dev/null
      grep -q "^/dev/pts/[0-9]*.$" "$WORK/pty_jobs.rec.out" && grep -q "^speed [0-9]* baud; " "$WORK/pty_jobs.rec.out" &&
        grep -q "^\[1\]+  Done  *sleep 0.05.$" "$WORK/pty_jobs.rec.out" && grep -q "^job done 0.$" "$WORK/pty_jobs.rec.out" ||
        fail "script: $(cat "$WORK/pty_jobs.rec.out" "$WORK/pty_jobs.rec.err")"
    fi ;;
  sparse_file)  # a 64 GiB sparse file mapped: the trace keeps its holes (a few bytes of data)
    need python3
    export WORK
    python3 -c 'import os; f = open(os.environ["WORK"] + "/big.sparse", "wb"); f.truncate(64 << 30); f.seek(40 << 30); f.write(b"needle"); f.close()' ||
      { echo "cannot make a sparse file here"; exit 77; }
    [ "$(du -k "$WORK/big.sparse" | cut -f1)" -lt 10240 ] || { echo "this file system has no holes"; exit 77; }
    record_and_replay sparse python3 -c '
import mmap, os
with open(os.environ["WORK"] + "/big.sparse", "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    print(len(m) >> 30, "GiB mapped:", m[40 << 30:(40 << 30) + 6].decode(), m[1 << 30])'
    [ "$(cat "$WORK/sparse.rec.out")" = "64 GiB mapped: needle 0" ] || fail "sparse: $(cat "$WORK/sparse.rec.out" "$WORK/sparse.rec.err")"
    used=$(du -sk "$TRACE" | cut -f1)
    [ "$used" -lt 65536 ] && pass "the trace of a 64 GiB sparse mapping uses $used KiB" ||
      fail "the trace of a 64 GiB sparse mapping uses $used KiB" ;;
  process_ends)  # stopped and continued children, a child killed meanwhile, exit(2) of all threads
    native=$("$TEST_PROGRAMS/process_ends")
    for opts in "" --no-syscall-buffer; do
      name=process_ends${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/process_ends"
      [ "$(cat "$WORK/$name.rec.out")" = "$native" ] ||
        fail "$name: recorded, the program saw other ends than natively: $(diff <(echo "$native") "$WORK/$name.rec.out")"
    done ;;
  exec_threads)  # execve from a thread while others live, and from main while one spins
    for mode in worker main; do
      native=$("$TEST_PROGRAMS/exec_threads" $mode)
      for opts in "" --no-syscall-buffer; do
        name=exec_$mode${opts:+_traced}
        RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/exec_threads" $mode
        [ "$(cat "$WORK/$name.rec.out")" = "$native" ] ||
          fail "$name: recorded, the program saw other things than natively: $(cat "$WORK/$name.rec.out" "$WORK/$name.rec.err")"
      done
    done
    echo "$native" | grep -q "^after exec: threads 1, same pid yes, tid is pid yes" ||
      fail "natively, exec_threads printed: $native"
    if command -v gdb >/dev/null; then  # before the worker's exec (3 threads), after it, and back
      RECORD_OPTS= record_and_replay exec_gdb "$TEST_PROGRAMS/exec_threads" worker >/dev/null
      timeout 120 "$REWIND" replay "$TRACE" -- -batch -ex 'break threads_now' -ex continue \
        -ex 'info threads' -ex continue -ex 'info threads' -ex 'reverse-continue' \
        -ex 'info threads' >"$WORK/exec_gdb.out" 2>&1
      # Three stops at threads_now, the thread lists after each: 3 threads, 1, then 3 again.
      lists=$(awk '/^  Id/ {if (listing) print n; n = 0; listing = 1; next}
                   listing && /^[* ] +[0-9]+ +Thread / {n++; next}
                   listing {print n; listing = 0} END {if (listing) print n}' "$WORK/exec_gdb.out" | tr '\n' ' ')
      [ "$(grep -c "hit Breakpoint 1, threads_now" "$WORK/exec_gdb.out")" = 3 ] &&
        [ "$lists" = "3 1 3 " ] && ! grep -q "Could not read registers" "$WORK/exec_gdb.out" &&
        pass "gdb: a breakpoint before and after a thread's exec, and back across it" ||
        fail "gdb on exec_threads (thread counts: $lists): $(tail -25 "$WORK/exec_gdb.out")"
    fi ;;
  clone_vm)  # a process sharing its parent's memory (clone with CLONE_VM, not CLONE_THREAD)
    for mode in turns exec shared; do
      # The racy total depends on how the two processes interleaved; the rest does not.
      # Natively the exec'ed child's line may come before or after the parent's first.
      native=$("$TEST_PROGRAMS/clone_vm" $mode | grep -v "^racy total" | sort)
      for opts in "" --no-syscall-buffer; do
        name=clone_vm_$mode${opts:+_traced}
        RECORD_OPTS=$opts record_and_replay "$name" "$TEST_PROGRAMS/clone_vm" $mode
        [ "$(grep -v "^racy total" "$WORK/$name.rec.out" | sort)" = "$native" ] ||
          fail "$name: recorded, the program saw other things than natively: $(cat "$WORK/$name.rec.out" "$WORK/$name.rec.err")"
      done
    done
    # The child runs on its parent's thread-local state (the same syscall buffer, the parent's
    # desched counter): after the clone, every syscall of that memory is its own event (the
    # clone event's own records, an rt_sigprocmask among them, were made before it).
    "$REWIND" dump "$WORK/clone_vm_turns.trace" | sed -n '/ clone = /,$p' | tail -n +2 >"$WORK/clone_vm.dump"
    [ -s "$WORK/clone_vm.dump" ] && ! grep -q "buffered syscall" "$WORK/clone_vm.dump" ||
      fail "clone_vm: buffered syscalls after the clone: $(grep -m3 "buffered syscall" "$WORK/clone_vm.dump")"
    grep -q "^racy total [0-9]* (child done spinning: 1)" "$WORK/clone_vm_turns.rec.out" ||
      fail "clone_vm turns printed no racy total: $(cat "$WORK/clone_vm_turns.rec.out")"
    echo "$native" | grep -q "^parent: handler ran for signal 10, read 14 bytes (from the child)" ||
      fail "natively, clone_vm shared printed: $native"
    if command -v gdb >/dev/null; then  # breakpoints in both processes, forwards and back
      RECORD_OPTS= record_and_replay clone_vm_gdb "$TEST_PROGRAMS/clone_vm" turns >/dev/null
      child_line=$(grep -n "turns_total += 10;" "$SOURCE_DIR/tests/programs/clone_vm.c" | cut -d: -f1)
      parent_line=$(grep -n "turns_total += 1;" "$SOURCE_DIR/tests/programs/clone_vm.c" | cut -d: -f1)
      timeout 300 "$REWIND" replay "$TRACE" -- -batch -ex "break clone_vm.c:$((child_line + 1))" \
        -ex "break clone_vm.c:$((parent_line + 1))" -ex continue -ex 'p turns_total' \
        -ex continue -ex 'p turns_total' -ex continue -ex 'p turns_total' -ex continue \
        -ex 'p turns_total' -ex reverse-continue -ex 'p turns_total' -ex reverse-continue \
        -ex 'p turns_total' >"$WORK/clone_vm_gdb.out" 2>&1
      # The child adds 10 and the parent 1, in turns: 10 11 21 22, then back: 21 11.
      values=$(sed -n 's/^\$[0-9]* = //p' "$WORK/clone_vm_gdb.out" | tr '\n' ' ')
      hits=$(grep -o "hit Breakpoint [12][.0-9]*, [a-z_]*" "$WORK/clone_vm_gdb.out" | awk '{print $NF}' | tr '\n' ' ')
      [ "$values" = "10 11 21 22 21 11 " ] &&
        [ "$hits" = "child_turns main child_turns main child_turns main " ] &&
        pass "gdb: breakpoints in a process and in the CLONE_VM child sharing its memory, both ways" ||
        fail "gdb on clone_vm (values: $values; stops: $hits): $(tail -25 "$WORK/clone_vm_gdb.out")"
    fi ;;
  leader_exit)  # the main thread ends first (pthread_exit): recorded, replayed, and under gdb
    record_and_replay leader_exit "$TEST_PROGRAMS/leader_exit"
    [ "$(cat "$WORK/leader_exit.rec.out")" = "$(printf 'the main thread exits alone\nthe worker ends the process')" ] ||
      fail "leader_exit: $(cat "$WORK/leader_exit.rec.out" "$WORK/leader_exit.rec.err")"
    if command -v gdb >/dev/null; then  # to the end, where only the worker is left, and back
      timeout 120 "$REWIND" replay "$TRACE" -- -batch -ex 'break worker' -ex continue -ex continue \
        -ex reverse-continue -ex 'info threads' >"$WORK/leader_gdb.out" 2>&1
      [ "$(grep -c "hit Breakpoint 1, worker" "$WORK/leader_gdb.out")" = 2 ] &&
        grep -q "No more reverse-execution history" "$WORK/leader_gdb.out" &&
        ! grep -q "Could not read registers" "$WORK/leader_gdb.out" &&
        pass "gdb: to the end after the main thread's exit, and back to the worker" ||
        fail "gdb on leader_exit: $(tail -15 "$WORK/leader_gdb.out")"
      # info threads reads the other thread's registers (Hg): reverse-stepi still steps the
      # selected thread (Hc), back into the worker's prologue.
      timeout 120 "$REWIND" replay "$TRACE" -- -batch -ex 'break worker' -ex continue \
        -ex 'info threads' -ex reverse-stepi -ex 'thread' >"$WORK/leader_step.out" 2>&1
      grep -q "static void\* worker(void\* arg) {" "$WORK/leader_step.out" &&
        ! grep -q "received signal SIGTRAP" "$WORK/leader_step.out" &&
        grep -q "Current thread is 2 " "$WORK/leader_step.out" &&
        pass "gdb: reverse-stepi after info threads steps the selected thread" ||
        fail "reverse-stepi after info threads: $(sed -n '/hit Breakpoint/,$p' "$WORK/leader_step.out")"
    fi ;;
  vdso)  # a program that walks the vDSO's symbols finds a valid image, and nothing to call
    "$TEST_PROGRAMS/vdso_walk" | grep -q "^vDSO: ELF image, some functions, __vdso_clock_gettime found" ||
      { echo "no usable vDSO here: $("$TEST_PROGRAMS/vdso_walk")"; exit 77; }
    record_and_replay vdso "$TEST_PROGRAMS/vdso_walk"
    [ "$(cat "$WORK/vdso.rec.out")" = "vDSO: ELF image, some functions, __vdso_clock_gettime not found; clock_gettime 0" ] ||
      fail "vdso: $(cat "$WORK/vdso.rec.out" "$WORK/vdso.rec.err")" ;;
  ptrace_calls)  # the program's own ptrace: answered as the kernel answers it natively, a
    # parent that traces its child (its stops, reads, resumes with and without a signal, a
    # kill, a crash passed on)
    native=$("$TEST_PROGRAMS/ptrace_calls")
    echo "$native" | grep -q "^ptrace_calls done" || fail "natively: $native"
    echo "$native" | grep -q "^traceme: 0" || fail "natively, PTRACE_TRACEME failed: $native"
    like_native ptrace_calls "$native" "$TEST_PROGRAMS/ptrace_calls"
    if command -v gdb >/dev/null; then
      # Backwards through the tracer's waits: each reports the stop it reported when recorded.
      gdb_batch "$WORK/ptrace_calls.trace" ptrace_gdb <<GDB
source $WORK/next_hit.gdb
handle SIGUSR1 nostop noprint
handle SIGUSR2 nostop noprint
handle SIGHUP nostop noprint
handle SIGSEGV nostop noprint
break kill_and_crash_sessions
next_hit
break show_stop
reverse-continue
print/x status
reverse-continue
print/x status
reverse-continue
print/x status
continue
print/x status
GDB
      expect_output ptrace_gdb '"its end".*= 0x700 .*"after its execve".*= 0x57f .*"third stop".*= 0xa7f .*"after its execve".*= 0x57f ' \
        "reverse-continue and continue across a tracer's waits for its tracee's stops"
    fi
    # A small strace (PTRACE_SYSCALL, PTRACE_GET_SYSCALL_INFO) that changes a call at its entry
    # and a result at its exit; buffered, the preload library goes off in the tracee.
    native=$("$TEST_PROGRAMS/ptrace_calls" syscalls)
    echo "$native" | grep -q "^child exited 1 with 3" || fail "natively, the syscall session: $native"
    like_native ptrace_syscalls "$native" "$TEST_PROGRAMS/ptrace_calls" syscalls
    # Single steps over what the recorder emulates: an rdtsc (trapped by PR_SET_TSC) and a
    # cpuid (replaced by a faulting stand-in) run as one step, reported as natively.
    # Some hypervisors lose the trap of a step over the cpuid they emulate: natively the step
    # then ends after the next instruction too (pc moved 4 bytes). Recorded, the step is the
    # architectural one (the SDM's single-step trap after the instruction), as on bare metal.
    step_line='step: si_code 2, pc moved 2 bytes, si_addr is the pc: yes'
    for insn in rdtsc cpuid; do
      native=$("$TEST_PROGRAMS/ptrace_calls" step-$insn)
      if [ $insn = cpuid ] && echo "$native" | grep -q "^step: si_code 2, pc moved 4 bytes"; then
        echo "note: natively this machine's hypervisor lost the trap of a step over cpuid"
        native=$(echo "$native" | sed "s/^step: si_code 2, pc moved 4 bytes.*/$step_line/")
      fi
      echo "$native" | grep -qx "$step_line" &&
        echo "$native" | grep -q "^child exited 1 with 0" || fail "natively, step-$insn: $native"
      like_native ptrace_step_$insn "$native" "$TEST_PROGRAMS/ptrace_calls" step-$insn
    done
    # A single step over the `syscall` of an exit ends with the child's end (status 5).
    native=$("$TEST_PROGRAMS/ptrace_calls" step-exit)
    echo "$native" | grep -q "^after the step: exited with 5" || fail "natively, step-exit: $native"
    like_native ptrace_step_exit "$native" "$TEST_PROGRAMS/ptrace_calls" step-exit
    # And over a handler's rt_sigreturn: back where the signal came, with the step's SIGTRAP.
    native=$("$TEST_PROGRAMS/ptrace_calls" step-sigreturn)
    echo "$native" | grep -q "^step: si_code 1, back where the signal came: yes" &&
      echo "$native" | grep -q "^then: exited with 6" || fail "natively, step-sigreturn: $native"
    like_native ptrace_step_sigreturn "$native" "$TEST_PROGRAMS/ptrace_calls" step-sigreturn
    # A debugger that mends its faulting tracee: resumed without the fault's signal, the
    # instruction runs again, or what the tracer wrote there; with another signal, that
    # signal's handler runs; detached with its registers moved, it goes on there.
    native=$("$TEST_PROGRAMS/ptrace_calls" refault)
    echo "$native" | grep -q "^the instruction ran again: stopped by ILL" &&
      echo "$native" | grep -q "^at the same instruction: yes" &&
      echo "$native" | grep -q "^after the nops: stopped by SEGV" &&
      echo "$native" | grep -q "^after the handler: stopped by SEGV" &&
      echo "$native" | grep -q "^SIGUSR1 handled: 1" &&
      echo "$native" | grep -q "^then: exited with 3" || fail "natively, refault: $native"
    like_native ptrace_refault "$native" "$TEST_PROGRAMS/ptrace_calls" refault
    # What is not emulated yet stops the recording with one line naming it; the trace so far
    # replays. A process outside the recording is never attached to.
    refused() {  # refused NAME PATTERN ARGS...
      local name=$1 pattern=$2
      shift 2
      timeout 120 "$REWIND" record -o "$WORK/$name.trace" "$TEST_PROGRAMS/ptrace_calls" "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err"
      local rc=$?
      if [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/$name.err")" = 1 ] && grep -q "$pattern" "$WORK/$name.err"; then
        pass "$name: $(cat "$WORK/$name.err")"
      else
        fail "$name: rc $rc, $(cat "$WORK/$name.err")"
      fi
      timeout 120 "$REWIND" replay -a "$WORK/$name.trace" >/dev/null 2>"$WORK/$name.rep.err"
      grep -q "recording was interrupted" "$WORK/$name.rep.err" ||
        fail "$name: the partial trace: $(tail -2 "$WORK/$name.rep.err")"
    }
    refused ptrace_step_signal "^rewind: ptrace(PTRACE_SINGLESTEP) with a stop signal is not supported yet$" step-signal
    refused ptrace_step_syscall "^rewind: ptrace(PTRACE_SINGLESTEP) of a \`syscall\` instruction (fork) is not supported yet$" step-syscall
    refused ptrace_outside_stop "^rewind: task [0-9]* would stop for its tracer (PTRACE_TRACEME) at signal SIGUSR1: its tracer is a process outside the recording$" outside-stop
    sleep 60 &
    outside=$!
    refused ptrace_outside "^rewind: ptrace(PTRACE_ATTACH) of process $outside, outside the recording, cannot be recorded$" outside "$outside"
    grep -q "^TracerPid:\s*0$" "/proc/$outside/status" || fail "the outside process is traced: $(grep TracerPid "/proc/$outside/status")"
    kill "$outside" ;;
  ptrace_attach)  # tracers that attach to a recorded process that is not their child (a crash
    # reporter's helper to its parent, siblings) and interrupt it while it waits in a read or
    # spins in user code (PTRACE_INTERRUPT of a running tracee)
    native=$("$TEST_PROGRAMS/ptrace_attach")
    echo "$native" | grep -q "^ptrace_attach done" || fail "natively: $native"
    echo "$native" | grep -q "^reporter got: helper: attach 0, wait stopped by STOP, secret 4242" &&
      [ "$(echo "$native" | grep -c "stopped by TRAP event 128")" = 2 ] &&
      echo "$native" | grep -q "^spinning worker: exited 9" ||
      fail "natively, not the stops expected: $native"
    like_native ptrace_attach "$native" "$TEST_PROGRAMS/ptrace_attach" ;;
  ptrace_seccomp)  # a tracer of its tracee's seccomp stops (PTRACE_O_TRACESECCOMP, as strace
    # --seccomp-bpf): each stop of the tracee's own filter with its data, a call followed to its
    # exit and its result changed, a buffered call (newfstatat) stopping as natively
    native=$("$TEST_PROGRAMS/ptrace_seccomp")
    echo "$native" | grep -q "^seccomp stop of getuid: data 0x52; info op 3, 84 bytes, nr 102, ret_data 0x52$" &&
      echo "$native" | grep -q "^seccomp stop of newfstatat: data 0x54" &&
      echo "$native" | grep -q "^result 4242 instead: 0$" &&
      echo "$native" | grep -q "^child exited with 11$" || fail "natively, not the stops expected: $native"
    like_native ptrace_seccomp "$native" "$TEST_PROGRAMS/ptrace_seccomp"
    # A call skipped at its seccomp stop (orig_rax -1, its result in rax), and the exit's stop
    # (PTRACE_O_TRACEEXIT) after exit_group's seccomp stop: buffered (the default); traced,
    # the recorder takes each call before the kernel's seccomp stop, so a change there is
    # refused with one line.
    native=$("$TEST_PROGRAMS/ptrace_seccomp" skip)
    echo "$native" | grep -q "^skip it, with 77: 0$" && echo "$native" | grep -q "^child exited with 15$" &&
      [ "$(echo "$native" | grep -A1 "^seccomp stop of exit_group" | tail -1)" = "other stop: TRAP event 6" ] ||
      fail "natively, skip: $native"
    record_and_replay ptrace_seccomp_skip "$TEST_PROGRAMS/ptrace_seccomp" skip
    [ "$(cat "$WORK/ptrace_seccomp_skip.rec.out")" = "$native" ] ||
      fail "ptrace_seccomp skip: recorded, other stops than natively: $(diff <(echo "$native") "$WORK/ptrace_seccomp_skip.rec.out")"
    timeout 120 "$REWIND" record --no-syscall-buffer -o "$WORK/ptrace_seccomp_refused.trace" \
      "$TEST_PROGRAMS/ptrace_seccomp" skip >/dev/null 2>"$WORK/ptrace_seccomp_refused.err"
    rc=$?
    [ "$rc" = 1 ] && [ "$(wc -l <"$WORK/ptrace_seccomp_refused.err")" = 1 ] &&
      grep -q "^rewind: ptrace(PTRACE_SETREGS) at a seccomp stop, with --no-syscall-buffer, is not supported yet$" \
        "$WORK/ptrace_seccomp_refused.err" && pass "ptrace_seccomp skip, traced: $(cat "$WORK/ptrace_seccomp_refused.err")" ||
      fail "ptrace_seccomp skip, traced: rc $rc, $(cat "$WORK/ptrace_seccomp_refused.err")" ;;
  ptrace_sysemu)  # a tracer that emulates its tracee's syscalls (PTRACE_SYSEMU and
    # PTRACE_SYSEMU_SINGLESTEP, as User-mode Linux): the calls stop at their entry, are not
    # run, return what the tracer set, and make no exit stop
    native=$("$TEST_PROGRAMS/ptrace_sysemu")
    echo "$native" | grep -q "^syscall stop (TRACESYSGOOD): nr 110, rax -38$" &&
      echo "$native" | grep -q "^syscall stop (TRACESYSGOOD): nr 102, rax -38$" &&
      echo "$native" | grep -q "^child exited with 3$" || fail "natively, not the stops expected: $native"
    like_native ptrace_sysemu "$native" "$TEST_PROGRAMS/ptrace_sysemu" ;;
  exit_wakes)  # threads woken right as their process ends (exit_group or SIGABRT, from the
    # main thread or another): their returns from the wait, which the recorder often sees
    # after the end began, are not recorded, and replay kills them where they stand. Without
    # those rules about half the recordings of each failed to replay (a thread's copy ran to
    # pause() or was gone), so two of each leave a regression little chance.
    for how in exit_group abort thread_exit_group thread_abort; do
      native=$("$TEST_PROGRAMS/exit_wakes" "$how" 2>/dev/null)
      want=$?
      for n in 1 2; do
        like_native "exit_wakes_${how}_$n" "$native" "$TEST_PROGRAMS/exit_wakes" "$how"
        [ "$RC" -eq "$want" ] || fail "exit_wakes_${how}_$n: recorded, it exited $RC, natively $want"
      done
    done ;;
  mask_race)  # SIGALRM every 200 us while a loop blocks and unblocks it by buffered calls: one
    # that came in the library's code right before the blocking call was delivered after it,
    # blocked (the kernel queued it again), and its event named a handler that never ran there;
    # replay diverged ("reached syscall rt_sigreturn before its last buffered syscall"). About
    # 1 signal in 100 came there: without the fix 5 of 8 recordings of 100 ticks failed to
    # replay; 4 recordings of 60 ticks caught it in 2 of 3 runs, so 6 are made.
    native=$("$TEST_PROGRAMS/mask_race")
    [ "$native" = "mask_race: 60 ticks 1, inside the blocked section 0" ] || fail "natively: $native"
    bad=0
    for n in 1 2 3 4 5 6; do
      "$REWIND" record -o "$WORK/mask_race_$n.trace" "$TEST_PROGRAMS/mask_race" \
        >"$WORK/mask_race_$n.rec.out" 2>"$WORK/mask_race_$n.rec.err" </dev/null ||
        fail "mask_race_$n: recording failed: $(tail -2 "$WORK/mask_race_$n.rec.err")"
      [ "$(cat "$WORK/mask_race_$n.rec.out")" = "$native" ] ||
        fail "mask_race_$n: recorded, it printed $(cat "$WORK/mask_race_$n.rec.out")"
      if ! "$REWIND" replay -a "$WORK/mask_race_$n.trace" >"$WORK/mask_race_$n.rep.out" \
        2>"$WORK/mask_race_$n.rep.err" </dev/null ||
        ! cmp -s "$WORK/mask_race_$n.rec.out" "$WORK/mask_race_$n.rep.out"; then
        fail "mask_race_$n: replay differs: $(tail -1 "$WORK/mask_race_$n.rep.err")"
        bad=$((bad + 1))
      fi
      rm -rf "$WORK/mask_race_$n.trace"
    done
    [ "$bad" -eq 0 ] && pass "mask_race: 6 recordings replayed identically" ;;
  lazy_mask)  # buffered sigprocmask calls that replay makes without a syscall (the library
    # leaves the new mask, rewind sets it at the task's next stop: RWD_FEATURE_LAZY_MASK), while
    # a 300 us timer's signals come between them and need the mask right to be delivered; and
    # a SIG_SETMASK that unblocks SIGSEGV right before a fault, made for real (a blocked forced
    # signal resets its handler: made lazily, replay diverged with "the handler of SIGSEGV did
    # not start"). Without the mask set at stops, replay diverged at the first signals.
    native=$("$TEST_PROGRAMS/lazy_mask")
    [ "$native" = "lazy_mask: 40 ticks 1, masks not the loop's 0, old masks wrong 0, faults handled 1" ] ||
      fail "natively: $native"
    for n in 1 2 3; do
      record_and_replay "lazy_mask_$n" "$TEST_PROGRAMS/lazy_mask" &&
        { [ "$(cat "$WORK/lazy_mask_$n.rec.out")" = "$native" ] ||
          fail "lazy_mask_$n: recorded, it printed $(cat "$WORK/lazy_mask_$n.rec.out")"; }
    done
    # Replay makes those calls without a stop each: far fewer stops than buffered calls.
    calls=$("$REWIND" dump --json "$WORK/lazy_mask_1.trace" | grep -o '"syscall":"rt_sigprocmask"' | wc -l)
    stops=$("$REWIND" replay -a -v "$WORK/lazy_mask_1.trace" 2>&1 >/dev/null |
      sed -n 's/^rewind: \([0-9]*\) ptrace stops;.*/\1/p')
    if [ -n "$stops" ] && [ "$calls" -gt 10000 ] && [ "$((stops * 10))" -lt "$calls" ]; then
      pass "lazy_mask: $calls buffered sigprocmask calls replayed with $stops ptrace stops"
    else
      fail "lazy_mask: $calls buffered sigprocmask calls replayed with ${stops:-?} ptrace stops"
    fi
    rm -rf "$WORK"/lazy_mask_*.trace ;;
  large_ro_map)  # 32 MiB of a file mapped shared read-only while a child writes it: the
    # mapping shows the write when replayed too (before, a private copy; replay diverged)
    native=$("$TEST_PROGRAMS/large_ro_map" "$WORK/ro.data")
    echo "$native" | grep -q "^child exit 0; mapped at 20 MiB + 100: HELLO;" || fail "natively: $native"
    like_native large_ro_map "$native" "$TEST_PROGRAMS/large_ro_map" "$WORK/ro.data"
    rm -rf "$WORK"/large_ro_map*.trace ;;  # 32 MiB saved copies each
  proc_mem_running)  # writes into /proc/PID/mem of a process whose threads run (one spins in
    # user code, one waits in a read), as gdb's displaced stepping makes them: each write waits
    # for the spinning thread's preemption, and replay makes it at the same point of the child
    native=$("$TEST_PROGRAMS/proc_mem_running")
    [ "$native" = "$(printf '%s\n' 'child: saw flag 1 after spinning' 'reader: woken, message "from the parent"' \
      'parent: wrote 16 and 4 bytes' 'parent: child exited 1 with 0')" ] || fail "natively: $native"
    like_native proc_mem_running "$native" "$TEST_PROGRAMS/proc_mem_running"
    "$REWIND" record -v -o "$WORK/proc_mem_running_v.trace" "$TEST_PROGRAMS/proc_mem_running" \
      >/dev/null 2>"$WORK/proc_mem_running_v.err" </dev/null
    held=$(grep -oE '[0-9]+ /proc/PID/mem writes that waited' "$WORK/proc_mem_running_v.err" | cut -d' ' -f1)
    [ "${held:-0}" -ge 2 ] || fail "proc_mem_running: the writes did not wait for the spinning thread: $(cat "$WORK/proc_mem_running_v.err")"
    # In a PID namespace with its own /proc (unshare --mount-proc, as containers run gdb): the
    # path's number is the namespace's. Before, these writes went unrecorded and replay hung.
    if command -v unshare >/dev/null && unshare -r -p -f --mount-proc true 2>/dev/null; then
      like_native proc_mem_pidns "$native" unshare -r -p -f --mount-proc "$TEST_PROGRAMS/proc_mem_running"
      for name in proc_mem_pidns proc_mem_pidns_traced; do
        writes=$("$REWIND" dump "$WORK/$name.trace" | grep -cE " pwrite64 = [0-9]+ \[[0-9]+ bytes into task ")
        [ "$writes" = 2 ] || fail "$name: $writes writes into the child's memory recorded, not 2"
      done
    fi ;;
  ptrace_watch)  # a tracer's hardware watchpoints (the debug registers): the kernel's refusals,
    # each hit's stop with DR6, no stop for the kernel's writes nor for the preload library's
    # copies of buffered results into the watched variable
    native=$("$TEST_PROGRAMS/ptrace_watch")
    echo "$native" | grep -q "^ptrace_watch done" || fail "natively: $native"
    # A guest whose debug registers do not stop programs (a PVM guest) has none to record.
    echo "$native" | grep -q "code 4, DR6 slots" ||
      { echo "the debug registers stop no program here: $native"; exit 77; }
    [ "$(echo "$native" | grep -c "code 4, DR6 slots")" = 7 ] ||
      fail "natively, not the 7 watchpoint stops expected: $native"
    like_native ptrace_watch "$native" "$TEST_PROGRAMS/ptrace_watch"
    if command -v gdb >/dev/null; then
      # Backwards and forwards over the tracer's reports: each shows the value its hit saw.
      gdb_batch "$WORK/ptrace_watch.trace" ptrace_watch_gdb <<GDB
break report_hit
continue
continue
continue
print stop
reverse-continue
print stop
reverse-continue
print stop
continue
continue
print stop
GDB
      expect_output ptrace_watch_gdb '\$1 = 2.*\$2 = 1.*\$3 = 0.*\$4 = 2' \
        "reverse-continue and continue across a tracer's watchpoint stops"
    fi
    native=$("$TEST_PROGRAMS/ptrace_watch" buffered-read)
    echo "$native" | grep -q "counter 1049, flag 7" || fail "natively, buffered-read: $native"
    like_native ptrace_watch_buffered "$native" "$TEST_PROGRAMS/ptrace_watch" buffered-read
    n=$("$REWIND" dump "$WORK/ptrace_watch_buffered.trace" | grep -Ec " syscall +preadv ")
    [ "$n" -lt 10 ] || fail "ptrace_watch_buffered: $n of the 50 preadv calls traced, not buffered"
    # An execute slot (a hardware breakpoint): the stop before the instruction, then on from it
    native=$("$TEST_PROGRAMS/ptrace_watch" execute)
    echo "$native" | grep -Eq "^stop 0: TRAP code 4, DR6 slots 1 \(DR6 [0-9a-f]+\), counter 0, flag 0, pc at after_stop" &&
      echo "$native" | grep -q "^child exited 0" || fail "natively, execute: $native"
    like_native ptrace_watch_execute "$native" "$TEST_PROGRAMS/ptrace_watch" execute ;;
  ptrace_seize)  # tracers that attach to their child and see its group-stops: strace's start
    # (SEIZE, INTERRUPT, SIGCONT, LISTEN, the exec and exit events), PTRACE_ATTACH, a SIGSTOP
    # passed on, a write at a fault's stop
    native=$("$TEST_PROGRAMS/ptrace_seize")
    echo "$native" | grep -q "^ptrace_seize done" || fail "natively: $native"
    echo "$native" | grep -q "^after listening: stopped by TRAP event STOP" ||
      fail "natively, PTRACE_LISTEN did not end with SIGCONT: $native"
    like_native ptrace_seize "$native" "$TEST_PROGRAMS/ptrace_seize" ;;
  fd_tables)  # descriptor numbers reused where the preload library cannot see it: each line
    # written through such a number must stay a traced write that replay prints again
    native=$("$TEST_PROGRAMS/fd_tables")
    echo "$native" | grep -q "^fd_tables done" || fail "natively: $native"
    [ "$(echo "$native" | wc -l)" -eq 11 ] || fail "natively, not the 11 lines expected: $native"
    like_native fd_tables "$native" "$TEST_PROGRAMS/fd_tables"
    # The library checks a descriptor's file with an fstat of its own (the program's go through
    # newfstatat), once while the descriptor stays the same: the 100 writes of the last case
    # need one (about 20 in all here; each write would make one without the cache).
    n=$("$REWIND" dump --json "$WORK/fd_tables.trace" | grep -o '"syscall": *"fstat"' | wc -l)
    if [ "$n" -le 50 ]; then pass "fd_tables: $n fstat checks in all, 100 writes to one file among them"
    else fail "fd_tables: $n fstat checks (the descriptor cache kept none)"; fi
    # A vfork child's exec through the preload hook leaves the parent's library working: its
    # calls after that are buffered again.
    "$REWIND" dump "$WORK/fd_tables.trace" >"$WORK/fd_tables.dump"
    root=$(awk 'NR == 1 { print $2 }' "$WORK/fd_tables.dump")
    n=$(sed -n '/ exec  *true/,$p' "$WORK/fd_tables.dump" | awk -v t="$root" '$2 == t' |
      grep -c "buffered syscall")
    [ "$n" -gt 0 ] || fail "fd_tables: no buffered syscall in the parent after its vfork child's exec"
    ;;
  heap_end)  # the program break moved by brk calls the preload library buffers, which replay
    # makes again for real; a fast timer's signals land between them
    native=$("$TEST_PROGRAMS/heap_end")
    echo "$native" | grep -q "^heap_end done" || fail "natively: $native"
    echo "$native" | grep -q "^with a timer: 20 signals" || fail "natively, the timer: $native"
    like_native heap_end "$native" "$TEST_PROGRAMS/heap_end"
    # Buffered, the program's brk calls are records in its buffer (the loader's first one,
    # before the library starts, stays a traced event); traced, each is an event.
    buffered_calls heap_end brk brk 1000
    echo "$native" | grep -q "^SIGTRAP ignored: .*still ignored" || fail "natively, SIGTRAP: $native"
    # Replay makes the buffered brk calls again in the task, each with one stop (the preload
    # library's syscall; int3) until the program ignores SIGTRAP.
    "$REWIND" replay -a -v "$WORK/heap_end.trace" >/dev/null 2>"$WORK/heap_end.v.err"
    one=$(sed -n 's/.* made for real in replayed tasks, \([0-9]*\) of them with one stop.*/\1/p' \
      "$WORK/heap_end.v.err")
    [ "${one:-0}" -gt 1000 ] && pass "heap_end: replay made $one brk calls with one stop each" \
      || fail "heap_end: replay made ${one:-no} calls with one stop: $(cat "$WORK/heap_end.v.err")"
    if command -v gdb >/dev/null; then
      # Forwards and backwards over buffered brk calls: a finish, a reverse-continue back to
      # the call's start, then nexts over sbrk and the finish again (RWD_UNTRACED_PAGE is
      # 0x6ffff000: preload/rewind_preload_abi.h).
      gdb_batch "$WORK/heap_end.trace" heap_end_gdb <<'GDB'
break grow_once if pages == 6 && round == 5
continue
print round
finish
reverse-continue
print pages
next
next
next
finish
break sbrk
continue
set $n = 0
while $pc != 0x6ffff000 && $n < 3000
  stepi
  set $n = $n + 1
end
stepi
print $pc == 0x6ffff002
delete
continue
GDB
      # Then single steps from sbrk into the library, onto the untraced page's syscall (the
      # instruction replay runs brk at) and over it, and on to the end.
      expect_output heap_end_gdb '\$1 = 5.*Value returned is \$2 = 45.*\$3 = 6.*Value returned is \$4 = 45.*\$5 = 1.*No more reverse-execution history' \
        "finish, reverse-continue, next and stepi over buffered brk calls"
    fi
    ;;
  output_order) need seq  # two processes writing to rewind's stdout at once: replay prints
    # each write at its event, so the trace must keep the order the kernel wrote them in (without
    # that, 4 recordings in 5 replayed with other interleavings here)
    script='for i in $(seq 400); do echo a$i; done & for i in $(seq 400); do echo b$i; done; wait'
    for round in 1 2 3; do
      record_and_replay output_order_$round sh -c "$script" || continue
      out="$WORK/output_order_$round.rec.out"
      [ "$(grep -c '^a' "$out")" = 400 ] && [ "$(grep -c '^b' "$out")" = 400 ] ||
        fail "output_order: the recording's output lacks lines: $(wc -l <"$out")"
    done
    # Into a pipe that fills up before its reader starts: the writers wait in the kernel, and a
    # sleeping writer holds nobody back (their order in the pipe is then a race, as natively).
    script='for i in $(seq 15000); do echo a$i; done & for i in $(seq 15000); do echo b$i; done; wait'
    timeout 300 "$REWIND" record -o "$WORK/output_pipe.trace" sh -c "$script" </dev/null \
      2>"$WORK/output_pipe.err" | (sleep 2; cat) >"$WORK/output_pipe.rec.out"
    timeout 300 "$REWIND" replay -a "$WORK/output_pipe.trace" >"$WORK/output_pipe.rep.out" 2>&1
    if [ "$(grep -c '^a' "$WORK/output_pipe.rec.out")" = 15000 ] &&
      [ "$(grep -c '^b' "$WORK/output_pipe.rec.out")" = 15000 ] &&
      cmp -s <(sort "$WORK/output_pipe.rec.out") <(sort "$WORK/output_pipe.rep.out"); then
      pass "output_order: two writers into a full pipe, recorded and replayed, every line"
    else
      fail "output_order: into a full pipe: $(wc -l <"$WORK/output_pipe.rec.out") lines recorded, $(wc -l <"$WORK/output_pipe.rep.out") replayed; $(tail -2 "$WORK/output_pipe.err")"
    fi ;;
  signal_state)  # rt_sigaction and rt_sigprocmask, which the preload library buffers and replay
    # makes again for real: handlers replaced, a blocked signal delivered inside the call that
    # unblocks it, a 1 ms timer across mask changes, posix_spawn children resetting handlers
    native=$("$TEST_PROGRAMS/signal_state")
    echo "$native" | grep -q "^signal_state done" || fail "natively: $native"
    echo "$native" | grep -q "^SIGUSR1 delivered while unblocking: 1" || fail "natively: $native"
    like_native signal_state "$native" "$TEST_PROGRAMS/signal_state"
    # Buffered, they are records in the buffer (a posix_spawn child's more than a hundred
    # among them); traced, each is an event.
    buffered_calls signal_state 'rt_sigaction|rt_sigprocmask' rt_sigaction 400
    if command -v gdb >/dev/null; then
      # Back from after the unblock into the handler the unblocking call ran, and forwards.
      gdb_batch "$WORK/signal_state.trace" signal_state_gdb <<'GDB'
handle SIGUSR1 SIGUSR2 SIGALRM nostop noprint pass
break on_usr1
break after_unblock
continue
print usr1_count
print phase
continue
print usr1_count
reverse-continue
print usr1_count
print phase
continue
print phase
GDB
      expect_output signal_state_gdb '\$1 = 0.*\$2 = 1.*\$3 = 1.*\$4 = 0.*\$5 = 1.*\$6 = 2' \
        "reverse-continue into a handler that a buffered sigprocmask ran"
    fi ;;
  debugger_calls)  # what gdb does to an inferior: /proc/PID/mem reads and writes, an int3
    # breakpoint stepped over with PTRACE_SINGLESTEP, PTRACE_O_TRACEVFORKDONE
    native=$("$TEST_PROGRAMS/debugger_calls")
    echo "$native" | grep -q "^debugger_calls done: 3 hits" || fail "natively: $native"
    echo "$native" | grep -q "^inferior: secret 42, counter 60" ||
      fail "natively, the write through /proc/PID/mem did not take: $native"
    like_native debugger_calls "$native" "$TEST_PROGRAMS/debugger_calls"
    if command -v gdb >/dev/null; then
      # Backwards and forwards over the steps: each stop shows the hit it followed.
      gdb_batch "$WORK/debugger_calls.trace" debugger_gdb <<GDB
break report_step
continue
print hit
continue
print hit
continue
print hit
reverse-continue
print hit
reverse-continue
print hit
continue
print hit
GDB
      expect_output debugger_gdb '\$1 = 1.*\$2 = 2.*\$3 = 3.*\$4 = 2.*\$5 = 1.*\$6 = 2' \
        "continue and reverse-continue across a debugger's single steps"
    fi ;;
  gdb_inferior) need gdb  # gdb debugging a program, recorded: breakpoints, next, finish, a
    # variable set, a software watchpoint (single steps); its output as natively
    cat >"$WORK/inferior.gdb" <<'GDB'
break note
run
bt
next
finish
set var total = 100
print total
set can-use-hw-watchpoints 0
watch total
continue
continue
delete
continue
GDB
    pids() { sed -E 's/process [0-9]+/process N/'; }
    # gdb_like_native NAME SCRIPT OPTS...: gdb running SCRIPT on call_loop, recorded with each
    # record option of OPTS ("" for none), prints what it printed natively ($native).
    gdb_like_native() {
      local base=$1 script=$2 opts name
      shift 2
      for opts in "$@"; do
        name=$base${opts:+_traced}
        RECORD_OPTS=$opts record_and_replay "$name" gdb -nx -batch -x "$script" "$TEST_PROGRAMS/call_loop"
        [ "$(pids <"$WORK/$name.rec.out")" = "$native" ] ||
          fail "$name: gdb printed other things than natively: $(diff <(echo "$native") <(pids <"$WORK/$name.rec.out"))"
      done
    }
    native=$(gdb -nx -batch -x "$WORK/inferior.gdb" "$TEST_PROGRAMS/call_loop" 2>/dev/null | pids)
    echo "$native" | grep -q "^New value = 101" || fail "natively, no watchpoint hit: $native"
    gdb_like_native gdb_inferior "$WORK/inferior.gdb" "" --no-syscall-buffer
    # gdb's own choice, a hardware watchpoint (the debug registers), and a read watchpoint
    cat >"$WORK/inferior_hw.gdb" <<'GDB'
break note
run
watch sink
up
rwatch total
continue
continue
continue
continue
delete
continue
GDB
    native=$(gdb -nx -batch -x "$WORK/inferior_hw.gdb" "$TEST_PROGRAMS/call_loop" 2>/dev/null | pids)
    hw_opts=("" --no-syscall-buffer)
    if ! echo "$native" | grep -q "^Value = 0"; then
      echo "no hardware watchpoints here (the debug registers stop no program): not tried"
      hw_opts=()
    fi
    [ "${#hw_opts[@]}" = 0 ] || echo "$native" | grep -q "^New value = 1" ||
      fail "natively, no hardware watchpoint hit: $native"
    gdb_like_native gdb_inferior_hw "$WORK/inferior_hw.gdb" "${hw_opts[@]}"
    # gdb's hardware breakpoint (hbreak: an execute slot)
    cat >"$WORK/inferior_hbreak.gdb" <<'GDB'
break main
run
hbreak note
continue
continue
info breakpoints
delete
continue
GDB
    if [ "${#hw_opts[@]}" != 0 ]; then
      native=$(gdb -nx -batch -x "$WORK/inferior_hbreak.gdb" "$TEST_PROGRAMS/call_loop" 2>/dev/null | pids)
      echo "$native" | grep -q "breakpoint already hit 2 times" ||
        fail "natively, the hardware breakpoint was not hit twice: $native"
      gdb_like_native gdb_inferior_hbreak "$WORK/inferior_hbreak.gdb" ""
    fi
    # gdb's next and stepi over a watched write: the step's stop shows the hit in DR6
    cat >"$WORK/inferior_hw_next.gdb" <<'GDB'
break note
run
continue
watch sink
next
next
stepi
continue
GDB
    if [ "${#hw_opts[@]}" != 0 ]; then
      native=$(gdb -nx -batch -x "$WORK/inferior_hw_next.gdb" "$TEST_PROGRAMS/call_loop" 2>/dev/null | pids)
      echo "$native" | tr '\n' ' ' | grep -q "sink = i; Hardware watchpoint 2: sink  Hardware watchpoint 2: sink  Old value = 0 New value = 1" ||
        fail "natively, next did not stop at the watched write: $native"
      gdb_like_native gdb_inferior_hw_next "$WORK/inferior_hw_next.gdb" ""
    fi
    # A threaded inferior: gdb stops every thread at a breakpoint and clears the new threads'
    # debug registers. Its displaced stepping (gdb's default) writes into the inferior while
    # the other threads run; stepping over a breakpoint in line stops them all first.
    cmds=(-ex 'break consumer' -ex run -ex 'info threads' -ex continue -ex delete -ex continue)
    for displaced in on off; do
      record_and_replay gdb_threads_$displaced gdb -nx -batch -ex "set displaced-stepping $displaced" "${cmds[@]}" "$TEST_PROGRAMS/pthreads"
      grep -q '^Thread [0-9] "pthreads" hit Breakpoint 1, consumer' "$WORK/gdb_threads_$displaced.rec.out" &&
        grep -q "^\[Inferior 1 (process [0-9]*) exited normally\]" "$WORK/gdb_threads_$displaced.rec.out" ||
        fail "gdb_threads_$displaced: $(tail -5 "$WORK/gdb_threads_$displaced.rec.out")"
    done
    record_and_replay gdb_info_threads gdb -nx -batch -ex 'info threads' ;;
  strace) need strace  # strace itself, recorded: its tracee's syscall stops, a signal, the exit
    script='trap "echo got" USR1; kill -USR1 $$; echo done'
    # What strace printed from the handler's installation on, with numbers (pids, addresses)
    # and alignment left out: the same natively and recorded.
    shown() { sed -n '/rt_sigaction(SIGUSR1/,$p' | sed -E 's/0x[0-9a-f]+/X/g; s/[0-9]{2,}/N/g' | tr -s ' '; }
    native=$(strace -f sh -c "$script" 2>&1 >/dev/null | shown)
    echo "$native" | grep -q "^--- SIGUSR1" || fail "natively, strace saw no SIGUSR1: $native"
    record_and_replay strace strace -f sh -c "$script"
    [ "$(cat "$WORK/strace.rec.out")" = "$(printf 'got\ndone')" ] ||
      fail "strace: the traced shell printed $(cat "$WORK/strace.rec.out")"
    grep -qE '^execve\("[a-z/]*/sh", \["sh", "-c"' "$WORK/strace.rec.err" || fail "strace: no execve shown: $(head -3 "$WORK/strace.rec.err")"
    recorded=$(shown <"$WORK/strace.rec.err")
    [ "$recorded" = "$native" ] || fail "strace: recorded, it showed other calls than natively: $(diff <(echo "$native") <(echo "$recorded"))"
    # strace --seccomp-bpf: the tracee's own filter stops it only at the calls strace traces
    # (PTRACE_O_TRACESECCOMP), buffered and traced.
    only='trace=kill,write,rt_sigaction'
    native=$(strace -f --seccomp-bpf -e "$only" sh -c "$script" 2>&1 >/dev/null | shown)
    echo "$native" | grep -q "^--- SIGUSR1" || fail "natively, strace --seccomp-bpf saw no SIGUSR1: $native"
    for opts in "" --no-syscall-buffer; do
      name=strace_bpf${opts:+_traced}
      RECORD_OPTS=$opts record_and_replay $name strace -f --seccomp-bpf -e "$only" sh -c "$script"
      recorded=$(shown <"$WORK/$name.rec.err")
      [ "$recorded" = "$native" ] || fail "$name: recorded, it showed other calls than natively: $(diff <(echo "$native") <(echo "$recorded"))"
    done
    # Without -f, the shell's vfork children run untraced.
    record_and_replay strace_vfork strace -o "$WORK/strace.calls" sh -c '/bin/true; /bin/true'
    grep -q '^vfork()' "$WORK/strace.calls" || fail "strace: no vfork shown: $(tail -3 "$WORK/strace.calls")"
    # strace -f follows the shell's vfork children: each one's execve, output and end.
    record_and_replay strace_f strace -f sh -c '/bin/true; /bin/echo x; exit 3'
    err="$WORK/strace_f.rec.err"
    [ "$(grep -c '+++ exited with 0 +++' "$err")" = 2 ] && grep -q '+++ exited with 3 +++' "$err" ||
      fail "strace -f: not every end shown: $(grep '+++' "$err")"
    grep -qE '^\[pid +[0-9]+\] execve\("/bin/echo", \["/bin/echo", "x"\]' "$err" ||
      fail "strace -f: the second child's execve not shown: $(grep execve "$err")"
    grep -qE '^\[pid +[0-9]+\] write\(1, "x\\n", 2\) += 2' "$err" || fail "strace -f: the child's write not shown"
    # The preload library's registration in each new process is rewind's, not the program's:
    # natively there is no such call, so strace must not show it (an unknown syscall_0x3e8).
    ! grep -q 'syscall_0x' "$err" || fail "strace -f: rewind's own calls shown: $(grep 'syscall_0x' "$err")"
    [ "$(grep -oE '^\[pid +[0-9]+\]' "$err" | sort -u | wc -l)" = 3 ] ||
      fail "strace -f: not three processes: $(grep -oE '^\[pid +[0-9]+\]' "$err" | sort -u | tr '\n' ' ')"
    # strace -p and gdb -p of a recorded process that is not their child: a sleep the shell
    # started (4 s: time for either to start, recorded), attached to (PTRACE_SEIZE and
    # PTRACE_INTERRUPT while it waits in its sleep; gdb's PTRACE_ATTACH) and followed to its
    # end or detached from.
    # attached NAME PATTERN... <COMMAND: a shell script that starts the sleep, runs COMMAND on
    # it ($p) and says how the sleep ended; natively its output matches each grep PATTERN, and
    # recorded it is the same. The attacher starts 1.5 s after the sleep, which waits in its
    # clock_nanosleep by then: attached during the sleep's start, strace showed it making that
    # call (twice in CI's instrumented build). strace shows only the exit.
    attached() {
      local name=$1 pattern out
      shift
      { printf 'sleep 4 &\np=$!\nsleep 1.5\n'; cat; printf 'wait $p\necho "sleep ended $?"\n'; } >"$WORK/$name.sh"
      out=$(sh "$WORK/$name.sh")
      for pattern in "$@" '^sleep ended 0'; do
        echo "$out" | grep -q -- "$pattern" || fail "natively, $name: $out"
      done
      record_and_replay "$name" sh "$WORK/$name.sh"
      [ "$(cat "$WORK/$name.rec.out")" = "$out" ] ||
        fail "$name: recorded, it showed other things: $(diff <(echo "$out") "$WORK/$name.rec.out")"
    }
    attached strace_p '^exit_group(N)' <<'SH'
strace -qq -e trace=exit_group -p $p 2>&1 | sed -E 's/[0-9]+/N/g'
SH
    if command -v gdb >/dev/null; then
      attached gdb_p '^\$1 = 42' '^\* 1 process N' <<'SH'
gdb -nx -batch -p $p -ex 'print 6*7' -ex 'info inferiors' -ex detach 2>/dev/null |
  grep -E '^\$1|^\* 1 ' | sed -E 's/[0-9]{3,}/N/g; s/ +/ /g'
SH
    fi
    # gdb's run (PTRACE_O_TRACEVFORKDONE, its breakpoints in the dynamic loader): the case
    # gdb_inferior debugs a program this way.
    if command -v gdb >/dev/null; then
      record_and_replay gdb_run gdb -nx -batch -ex run --args /bin/true
      grep -q "exited normally" "$WORK/gdb_run.rec.out" ||
        fail "gdb's run under rewind: $(tail -2 "$WORK/gdb_run.rec.out" "$WORK/gdb_run.rec.err")"
    fi ;;
  unshare)  # user, UTS and PID namespaces, as sandboxes make them
    need unshare
    unshare -r true 2>/dev/null || { echo "no user namespaces here"; exit 77; }
    record_and_replay unshare unshare -r -u sh -c 'id -u; hostname'
    [ "$(head -1 "$WORK/unshare.rec.out")" = 0 ] || fail "unshare -r: not uid 0 inside: $(cat "$WORK/unshare.rec.out")"
    # In a PID namespace the shell is pid 1 and its children 2, 3...: the fork results, the
    # tids glibc keeps, and the kill of a child by its number, as recorded.
    record_and_replay pidns unshare -r -p -f sh -c 'echo "pid $$"; sleep 5 & echo "child $!"; kill $!; wait $!; echo "killed $?"'
    [ "$(cat "$WORK/pidns.rec.out")" = "$(printf 'pid 1\nchild 2\nkilled 143')" ] ||
      fail "unshare -p: $(cat "$WORK/pidns.rec.out" "$WORK/pidns.rec.err")"
    if command -v python3 >/dev/null; then  # threads in a PID namespace
      record_and_replay pidns_threads unshare -r -p -f python3 -c '
import os, threading
seen = []
t = threading.Thread(target=lambda: seen.append(threading.get_native_id() != os.getpid()))
t.start(); t.join(); print("pid", os.getpid(), "thread has its own id:", seen[0])'
      [ "$(cat "$WORK/pidns_threads.rec.out")" = "pid 1 thread has its own id: True" ] ||
        fail "threads in a PID namespace: $(cat "$WORK/pidns_threads.rec.out" "$WORK/pidns_threads.rec.err")"
    fi
    # A mount namespace with a tmpfs mounted in it, as sandboxes build their file systems.
    if command -v mount >/dev/null; then
      record_and_replay mountns unshare -r -m sh -c \
        'mount -t tmpfs scratch /mnt && echo inside >/mnt/file && cat /mnt/file && umount /mnt && echo unmounted'
      [ "$(cat "$WORK/mountns.rec.out")" = "$(printf 'inside\nunmounted')" ] ||
        fail "mount namespace: $(cat "$WORK/mountns.rec.out" "$WORK/mountns.rec.err")"
    fi
    # A real sandbox: bwrap with every namespace of its own (its loopback brought up with
    # SIOCGIFINDEX and netlink), its own /proc and a tmpfs, the shell pid 2 under bwrap's init.
    # (The tmpfs is not on /tmp: a build under /tmp, as CI's clone may be, would hide the
    # preload library.)
    if command -v bwrap >/dev/null; then
      box=(bwrap --ro-bind / / --proc /proc --dev /dev --tmpfs /mnt --unshare-all --hostname sandbox --die-with-parent)
      script='echo "pid $$"; hostname; echo /proc/[0-9]*; echo written >/mnt/f; cat /mnt/f'
      native=$("${box[@]}" sh -c "$script" 2>&1)
      [ "$native" = "$(printf 'pid 2\nsandbox\n/proc/1 /proc/2\nwritten')" ] || fail "natively, bwrap: $native"
      # bwrap's init (pid 1 there) may still be ending when bwrap itself ends: --wait waits.
      for opts in --wait "--wait --no-syscall-buffer"; do
        name=bwrap${opts#--wait}
        name=${name// --no-syscall-buffer/_traced}
        RECORD_OPTS=$opts record_and_replay "$name" "${box[@]}" sh -c "$script"
        [ "$(cat "$WORK/$name.rec.out" "$WORK/$name.rec.err")" = "$native" ] || fail "$name: $(cat "$WORK/$name.rec.out" "$WORK/$name.rec.err")"
      done
    fi ;;
  *) echo "unknown case $1"; exit 2 ;;
esac
finish
