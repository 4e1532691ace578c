#!/usr/bin/env bash
# Ctrl-C at a real terminal (tmux) while recording reaches the program as it would without
# rewind; its SIGINT handler runs, and the trace replays to the same output and status.
. "$(dirname "$0")/lib.sh"
need tmux
sock="$WORK/tmux.sock"
tmux -S "$sock" new-session -d -s rec -x 120 -y 20 "bash --norc --noprofile"
trap 'tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$WORK"' EXIT
tmux -S "$sock" send-keys -t rec "'$REWIND' record -o '$WORK/t' '$SAMPLES_BIN/signal_sigint_progress' > '$WORK/rec.out'; echo \"rc=\$?\" > '$WORK/rc'" Enter
for _ in $(seq 100); do grep -q computing "$WORK/rec.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
tmux -S "$sock" send-keys -t rec C-c
for _ in $(seq 100); do [ -s "$WORK/rc" ] && break; sleep 0.1; done
[ "$(cat "$WORK/rc")" = "rc=130" ] && pass "Ctrl-C ran the program's handler: $(tail -1 "$WORK/rec.out")" \
  || fail "record after Ctrl-C: $(cat "$WORK/rc" 2>/dev/null), output: $(cat "$WORK/rec.out")"
grep -q "interrupted after [0-9]* rounds" "$WORK/rec.out" || fail "the handler did not run"
for i in 1 2; do
  "$REWIND" replay -a "$WORK/t" >"$WORK/rep.out" 2>"$WORK/rep.err"
  rc=$?
  [ "$rc" -eq 130 ] && cmp -s "$WORK/rec.out" "$WORK/rep.out" && pass "replay $i: $(tail -1 "$WORK/rep.out")" \
    || fail "replay $i: rc $rc, $(cat "$WORK/rep.err")"
done
finish
