#!/usr/bin/env bash
# Process trees: fork, vfork (posix_spawn), exec chains and #! scripts, wait; `rewind ps`
# lists every process of the trace with its parent, exit status and command.
. "$(dirname "$0")/lib.sh"
need sh
printf '#!/bin/sh\necho "script $0 got $1"\nexec ls -d /usr\n' >"$WORK/script.sh"
chmod +x "$WORK/script.sh"
record_and_replay script "$WORK/script.sh" arg1
grep -q "script .*script.sh got arg1" "$WORK/script.rec.out" || fail "#! script output"
record_and_replay exec-chain sh -c 'exec sh -c "exec echo chained"'
if command -v python3 >/dev/null; then
  record_and_replay spawn python3 -c 'import subprocess; r = subprocess.run(["sh", "-c", "echo child says hi; exit 3"], capture_output=True); print(r.stdout.decode().strip(), r.returncode)'
  grep -qx "child says hi 3" "$WORK/spawn.rec.out" || fail "subprocess output: $(cat "$WORK/spawn.rec.out")"
fi
record_and_replay tree sh -c 'ls /usr | sort -r | head -2; (exit 5); echo $?'
"$REWIND" ps "$TRACE" >"$WORK/ps.out"
cat "$WORK/ps.out"
head -1 "$WORK/ps.out" | grep -qx "$(printf 'PID\tPPID\tEXIT\tCMD')" || fail "ps header"
root=$(awk 'NR == 2 { print $1 }' "$WORK/ps.out")
awk -v r="$root" 'NR == 2 && $2 == 0 && $3 == 0 && $4 == "sh"' "$WORK/ps.out" | grep -q . || fail "ps: first process"
for cmd in ls sort head; do
  awk -v r="$root" -v c="$cmd" '$2 == r && $3 == 0 && $4 == c' "$WORK/ps.out" | grep -q . \
    || fail "ps: no '$cmd' child of $root exiting 0"
done
awk -v r="$root" '$2 == r && $3 == 5' "$WORK/ps.out" | grep -q . || fail "ps: subshell exiting 5"
[ "$(awk 'NR > 1' "$WORK/ps.out" | wc -l)" -ge 5 ] || fail "ps lists too few processes"
finish
