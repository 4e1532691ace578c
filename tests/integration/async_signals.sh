#!/usr/bin/env bash
# Asynchronous signals delivered at the recorded instruction: a SIGALRM compute loop and a
# program receiving SIGUSR1 from another process at a random moment. Their handlers note the
# loop iteration they interrupted; replay must print the same number.
. "$(dirname "$0")/lib.sh"
case "$1" in
  alarm)
    seen=()
    for i in 1 2 3; do
      record_and_replay "alarm$i" "$SAMPLES_BIN/signal_alarm_loop"
      seen+=("$(grep -o 'handler saw [0-9]* iterations' "$WORK/alarm$i.rec.out")")
    done
    printf '%s\n' "${seen[@]}"
    [ -n "${seen[0]}" ] || fail "no handler output"
    ;;
  usr1)
    for i in 1 2 3; do
      record_and_replay "usr1-$i" "$SAMPLES_BIN/signal_usr1_from_sibling"
      grep -q "SIGUSR1 arrived at iteration [0-9]" "$WORK/usr1-$i.rec.out" || fail "usr1 output"
      cat "$WORK/usr1-$i.rec.out"
    done
    # The point really is in user code, found again by registers and memory digest.
    "$REWIND" dump "$TRACE" | grep -q "signal   SIGUSR1 at" && pass "SIGUSR1 recorded as an event" \
      || fail "no SIGUSR1 event in the trace"
    ;;
  string_insn)
    for i in 1 2 3; do
      record_and_replay "memset$i" "$TEST_PROGRAMS/memset_alarm"
      grep -q "handler saw [0-9]* memsets" "$WORK/memset$i.rec.out" || fail "memset output"
      cat "$WORK/memset$i.rec.out"
    done
    ;;
  posix_timer)  # also recorded with an explicit --ticks=none (auto gives none here anyway)
    RECORD_OPTS=--ticks=none
    for i in 1 2 3; do
      record_and_replay "timer$i" "$TEST_PROGRAMS/posix_timer"
      grep -q "timer value 4711 at iteration [0-9]*; nested SIGUSR1 at [0-9]" "$WORK/timer$i.rec.out" \
        || fail "timer output: $(cat "$WORK/timer$i.rec.out")"
      cat "$WORK/timer$i.rec.out"
    done
    ;;
  *) echo "unknown case $1"; exit 2 ;;
esac
finish
