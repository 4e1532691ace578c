#!/usr/bin/env bash
# bench/suite's workloads (issue 29), each in its short version (bench/suite --list-short: the
# same commands on smaller inputs): recorded buffered and with every syscall traced, each
# recording replayed twice with byte-identical output and the recorded exit status, which
# must be 0. The HTTP server's client runs outside the recording, as in the benchmark.
. "$(dirname "$0")/lib.sh"
: "${BENCH_PROGRAMS:=$SAMPLES_BIN/../bench}"
need python3
REWIND_BENCH_PROGRAMS="$BENCH_PROGRAMS" python3 "$SOURCE_DIR/bench/suite" \
  --list-short "$WORK/inputs" >"$WORK/workloads.json" ||
  { fail "bench/suite --list-short failed"; finish; }
# Each workload's name, the path to remove before each run, its command line and its client's
# command line as files (the command lines as NUL-separated words).
python3 - "$WORK/workloads.json" "$WORK" <<'PY' || { fail "bad workload list"; finish; }
import json, os, sys
for k, line in enumerate(open(sys.argv[1])):
    w = json.loads(line)
    base = os.path.join(sys.argv[2], f"w{k:02d}")
    open(base + ".name", "w").write(w["name"])
    if w["remove"]:
        open(base + ".remove", "w").write(w["remove"])
    open(base + ".argv", "w").write("\0".join(w["argv"]) + "\0")
    if w["client"]:
        open(base + ".client", "w").write("\0".join(w["client"]) + "\0")
PY
count=0
for names in "$WORK"/w*.name; do
  base=${names%.name}
  name=$(cat "$names")
  mapfile -d '' -t argv <"$base.argv"
  need "${argv[0]}"
  for opts in "" --no-syscall-buffer; do
    tag="$(basename "$base")_$(echo "$name" | sed 's/[^A-Za-z0-9+]\+/_/g; s/_$//')${opts:+_traced}"
    # The output of the run before (cp's copy, sqlite3's database, the server's port file).
    [ -f "$base.remove" ] && rm -rf "$(cat "$base.remove")"
    client=
    if [ -f "$base.client" ]; then
      mapfile -d '' -t client_argv <"$base.client"
      "${client_argv[@]}" >"$WORK/$tag.client.out" 2>&1 &
      client=$!
    fi
    RC=1
    RECORD_OPTS=$opts record_and_replay "$tag" "${argv[@]}"
    [ "$RC" -eq 0 ] || fail "$name${opts:+ (traced)}: the recording exited $RC: $(tail -3 "$WORK/$tag.rec.err")"
    if [ -n "$client" ] && ! wait "$client"; then
      fail "$name${opts:+ (traced)}: the client failed: $(tail -3 "$WORK/$tag.client.out")"
    fi
    rm -rf "$TRACE"
  done
  count=$((count + 1))
done
[ "$count" -ge 13 ] || fail "only $count workloads listed (bench/suite has 13)"
finish
