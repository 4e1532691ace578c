#!/usr/bin/env bash
# gdb over a replay of an interpreter: `monitor stack` shows the Python or R frames in place of
# the interpreter's own (the stack engine/debugger/script_stacks builds for DAP too), and
# `monitor script-stack` the script frames alone with their locals, `monitor script-code` a
# script frame's byte code; after a reverse-continue to the same breakpoint, the same stack
# again. Programs: tests/programs/nested_calls.{py,R}
# under Debian's /usr/bin/python3 and R.
. "$(dirname "$0")/lib.sh"
need gdb
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing (scripts/install-deps.sh installs it)"
[ -x /usr/lib/R/bin/exec/R ] || fail "R is missing (scripts/install-deps.sh installs r-base-core)"
PROGS="$SOURCE_DIR/tests/programs"

gdb_run() { gdb_batch "$WORK/$1" "$2"; }  # lib.sh
expect() { expect_output "$@"; }

"$REWIND" record -o "$WORK/py" /usr/bin/python3 "$PROGS/nested_calls.py" >"$WORK/py.rec" 2>&1 ||
  fail "recording python3 failed: $(tail -3 "$WORK/py.rec")"
PY="$PROGS/nested_calls.py"
SLEEP_LINE=$(grep -n 'time.sleep(0.001)' "$PY" | cut -d: -f1)
gdb_run py python <<'GDB'
set breakpoint pending on
break clock_nanosleep
continue
monitor stack
monitor script-stack
monitor py-bt
monitor r-bt
monitor script-code
monitor script-code 99
continue
reverse-continue
monitor stack
monitor nonsense
GDB
# The native frames under time.sleep, then the script's five frames in place of the eval loop's,
# then the C start-up frames.
stack="#0 +0x[0-9a-f]+ in [_a-z]*clock_nanosleep \(\).*\[Python\] Pipeline.stage at $PY:$SLEEP_LINE #[0-9]+ +\[Python\] Pipeline.stage at $PY:25 .*\[Python\] main at $PY:31 #[0-9]+ +\[Python\] <module> at $PY:36 #[0-9]+ +0x[0-9a-f]+ in __libc_start_call_main"
expect python "$stack" "monitor stack: Python frames in place of the interpreter's, native frames kept"
expect python "#0 +\[Python\] Pipeline.stage at $PY:$SLEEP_LINE +self = <Pipeline object at 0x[0-9a-f]+> +depth = 0 +label = 'axxx' +ratio = 0.0 .*#3 +\[Python\] Pipeline.stage at $PY:25 +self = .* depth = 3 +label = 'a'" \
  "monitor script-stack: each frame's locals, innermost first"
if tr '\n' ' ' <"$WORK/python.out" | grep -Eq "_PyEval_EvalFrameDefault"; then
  fail "monitor stack still shows the eval loop's frames"
else pass "python: no eval loop frames in the mixed stack"; fi
expect python "$stack.*$stack" "after reverse-continue to the breakpoint, the same stack again"
expect python "depth = 3 +label = 'a'.*#0 +\[Python\] Pipeline.stage at $PY:$SLEEP_LINE +self = .*depth = 0 .*rewind: this program is not GNU R but CPython 3\.[0-9.]+; monitor script-stack" \
  "monitor py-bt: the Python frames again; monitor r-bt says the program is not R"
expect python "Pipeline.stage .{1,4}CPython 3\.[0-9.]+ bytecode \(adaptive\), $PY .* line +offset +instruction .*=> +$SLEEP_LINE +[0-9]+ +[A-Z_]*CALL[A-Z_]* .*constants" \
  "monitor script-code: the innermost Python frame's bytecode, at its call of time.sleep"
expect python "rewind: usage: monitor script-code \[N\], N a script frame from 0 to [0-9]+ \(monitor script-stack" \
  "monitor script-code with a frame that is not there says which there are"
expect python "unknown monitor command 'nonsense'; known: when, stack, script-stack, py-bt, r-bt" \
  "an unknown monitor command is named, with the known ones"

R_HOME=/usr/lib/R "$REWIND" record -o "$WORK/r" /usr/lib/R/bin/exec/R --no-echo --no-restore \
  -e "options(keep.source = TRUE); source('$PROGS/nested_calls.R')" >"$WORK/r.rec" 2>&1 ||
  fail "recording R failed: $(tail -3 "$WORK/r.rec")"
RS="$PROGS/nested_calls.R"
# R's start runs sh: gdb hears of each one's end on the way (next_hit goes on past them).
gdb_run r rlang <<GDB
source $WORK/next_hit.gdb
set breakpoint pending on
break stat if \$_streq((char*)\$rdi, "/rewind-marker-that-does-not-exist")
next_hit
monitor stack
monitor script-stack
monitor r-bt
monitor script-code 1
GDB
expect rlang "#0 +0x[0-9a-f]+ in [_a-z0-9]*stat[0-9]* \(\).*#1 +\[R\] file.exists #2 +\[R\] helper at $RS:19 #3 +\[R\] middle at $RS:24 #4 +\[R\] middle at $RS:25 .*\[R\] top at $RS:29 .*\[R\] source #[0-9]+ +0x[0-9a-f]+ in main \(\)" \
  "monitor stack: R frames in place of libR's, with their lines"
expect rlang "\[R\] helper at $RS:19 +far = c\(3000000000, .* +flags = c\(TRUE, FALSE, NA\) \[3\] +label = \"deep\" +y = 11 +x = 10 " \
  "monitor script-stack: helper's locals"
expect rlang "label = \"deep\".*\[R\] helper at $RS:19 +far = c\(3000000000, .*label = \"deep\"" \
  "monitor r-bt: the R frames with their locals, as script-stack"
expect rlang "helper .{1,4}(R byte code version [0-9]+, $RS .*=> +19 +[0-9]+ +[A-Z]*CALL|AST, $RS +helper is not byte-compiled)" \
  "monitor script-code 1: helper's byte code at its call of file.exists (or that R runs it as AST)"
finish
