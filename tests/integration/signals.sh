#!/usr/bin/env bash
# Synchronous signals with and without handlers, signal frames (sigaltstack, siglongjmp),
# SIGPIPE, masks, signals between processes interrupting a blocked read, with and without
# SA_RESTART, and a timer interrupting poll: each records and replays identically, with the
# same exit status.
. "$(dirname "$0")/lib.sh"
P="$TEST_PROGRAMS/signals"
expect_rc() { [ "$RC" -eq "$2" ] || fail "$1: exit $RC, expected $2"; }
record_and_replay segv-handler "$P" segv-handler && expect_rc segv-handler 0
grep -q "caught SEGV at 0x30" "$WORK/segv-handler.rec.out" || fail "handler output: $(cat "$WORK/segv-handler.rec.out")"
record_and_replay fpe "$P" fpe && expect_rc fpe 136
record_and_replay abort "$P" abort && expect_rc abort 134
record_and_replay sigpipe "$P" sigpipe && expect_rc sigpipe 141
record_and_replay sigpipe-handled "$P" sigpipe-handled && expect_rc sigpipe-handled 0
grep -q "write returned -1 (EPIPE), handled 1" "$WORK/sigpipe-handled.rec.out" || fail "sigpipe-handled output"
record_and_replay mask "$P" mask && expect_rc mask 0
grep -q "after unblocking: handled 1" "$WORK/mask.rec.out" || fail "mask output: $(cat "$WORK/mask.rec.out")"
record_and_replay restart "$P" restart && expect_rc restart 0
grep -q "read 4 bytes: data" "$WORK/restart.rec.out" || fail "SA_RESTART read: $(cat "$WORK/restart.rec.out")"
record_and_replay eintr "$P" eintr && expect_rc eintr 0
grep -q "read failed: EINTR" "$WORK/eintr.rec.out" || fail "EINTR read: $(cat "$WORK/eintr.rec.out")"
# A signal interrupting poll/ppoll with a timeout: the kernel rewrites revents even then, and
# the handler's point after the call must find the same memory (traced and buffered).
for opts in "" --no-syscall-buffer; do
  name=poll-eintr${opts:+-traced}
  RECORD_OPTS=$opts record_and_replay "$name" "$P" poll-eintr && expect_rc "$name" 0
  [ "$(grep -c "returned -1 (EINTR), revents 0, cleared" "$WORK/$name.rec.out")" = 2 ] ||
    fail "$name: $(cat "$WORK/$name.rec.out")"
done
finish
