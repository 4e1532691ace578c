# Shared helpers for rewind's integration tests: each test records real programs with the
# real `rewind` binary and replays them. Exit codes: 0 pass, 1 fail, 77 skip (CTest).
set -u
: "${REWIND:?set REWIND to the rewind binary}"
: "${SAMPLES_BIN:?set SAMPLES_BIN to the built samples directory}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
: "${TEST_PROGRAMS:=$SAMPLES_BIN/../tests}"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rewind-test.XXXXXX")
export REWIND_TRACE_DIR="$WORK/traces"
trap 'rm -rf "$WORK"' EXIT
FAILED=0

fail() { echo "FAIL: $*"; FAILED=1; }
pass() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; exit 77; }
finish() { [ "$FAILED" -eq 0 ] && echo "PASS" || echo "FAILED"; exit "$FAILED"; }

# vendor_dir: the folder of third-party editor clients the project hands its tests (nvim-dap,
# vimspector; ../shared/vendor/README.md): $REWIND_VENDOR_DIR, else shared/vendor beside the
# source tree or inside it, else where the project's machines keep it (/work/shared/vendor,
# for a clone made elsewhere). Prints the first that exists (or the first candidate).
vendor_dir() {
  local d
  for d in ${REWIND_VENDOR_DIR:+"$REWIND_VENDOR_DIR"} "$SOURCE_DIR/../shared/vendor" \
    "$SOURCE_DIR/shared/vendor" /work/shared/vendor; do
    [ -d "$d" ] && { (cd "$d" && pwd); return; }
  done
  echo "${REWIND_VENDOR_DIR:-$SOURCE_DIR/../shared/vendor}"
}

# need PROGRAM: skip the test (with a message) when PROGRAM is not installed.
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# record_and_replay NAME CMD...: records CMD (with $RECORD_OPTS, e.g. --chaos), then replays the trace twice with
# `rewind replay -a`; each replay must print byte-identical stdout and stderr and exit with
# the recorded status. Leaves the trace in $TRACE and the recorded outputs in $WORK/NAME.*.
record_and_replay() {
  local name=$1
  shift
  local out="$WORK/$name"
  # shellcheck disable=SC2086
  "$REWIND" record ${RECORD_OPTS:-} -o "$WORK/$name.trace" "$@" >"$out.rec.out" 2>"$out.rec.err" </dev/null
  local rc=$?
  TRACE="$WORK/$name.trace"
  if [ ! -f "$TRACE/processes" ]; then
    fail "$name: recording did not complete (rc $rc): $(tail -2 "$out.rec.err")"
    return 1
  fi
  local i ok=1
  for i in 1 2; do
    "$REWIND" replay -a "$TRACE" >"$out.rep$i.out" 2>"$out.rep$i.err" </dev/null
    local rrc=$?
    if [ "$rrc" -ne "$rc" ]; then
      fail "$name: replay $i exited $rrc, recording exited $rc: $(tail -2 "$out.rep$i.err")"
      ok=0
    fi
    if ! cmp -s "$out.rec.out" "$out.rep$i.out"; then
      fail "$name: replay $i stdout differs from the recording"
      diff "$out.rec.out" "$out.rep$i.out" | head -5
      ok=0
    fi
    if ! cmp -s "$out.rec.err" "$out.rep$i.err"; then
      fail "$name: replay $i stderr differs from the recording"
      diff "$out.rec.err" "$out.rep$i.err" | head -5
      ok=0
    fi
  done
  [ "$ok" -eq 1 ] && pass "$name: recorded (exit $rc, $(wc -c <"$out.rec.out") bytes of output) and replayed twice identically"
  RC=$rc
  return $((1 - ok))
}

# gdb_batch TRACE NAME: runs gdb in batch mode over `rewind replay TRACE` with the commands
# on stdin (kept in $WORK/NAME.gdb); its output goes to $WORK/NAME.out.
# Writes $WORK/next_hit.gdb: a gdb script that sources it may use next_hit, a continue that
# goes on in inferior 1 past the ends of other processes (gdb stops at each, as natively with
# detach-on-fork off, and selects the exited inferior). gdb_batch writes it too.
next_hit_script() {
  [ -f "$WORK/next_hit.gdb" ] || cat >"$WORK/next_hit.gdb" <<'GDB'
define next_hit
  continue
  while $_thread == 0
    inferior 1
    continue
  end
end
GDB
}
gdb_batch() {
  next_hit_script
  cat >"$WORK/$2.gdb"
  timeout 180 "$REWIND" replay "$1" -- -batch -nx -x "$WORK/$2.gdb" >"$WORK/$2.out" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || fail "$2: gdb exited $rc: $(tail -3 "$WORK/$2.out")"
}
# expect_output NAME REGEX WHAT: $WORK/NAME.out matches REGEX (grep -E, across lines as one).
expect_output() {
  if tr '\n' ' ' <"$WORK/$1.out" | grep -Eq -- "$2"; then pass "$1: $3"; else
    fail "$1: $3; the output was:"; sed 's/^/    /' "$WORK/$1.out" | tail -40
  fi
}
