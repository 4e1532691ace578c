#!/usr/bin/env bash
# A real editor drives `rewind dap`: Emacs with dap-mode (Debian's elpa-dap-mode) and
# editors/emacs/dap-rewind.el, headless. Record & Debug of symbols_demo in a terminal buffer
# (DAP runInTerminal), a breakpoint set in the source buffer, continue, step back and
# reverse-continue, each checked on the line point is on and the values dap-eval shows
# (tests/editors/dap-rewind-test.el).
. "$(dirname "$0")/lib.sh"
need emacs
emacs --batch -q --eval "(require 'dap-mode)" >/dev/null 2>&1 || skip "elpa-dap-mode is not installed"
OUT="$WORK" REWIND="$REWIND" PROGRAM="$TEST_PROGRAMS/symbols_demo_gcc_O0" \
  SOURCE="$SOURCE_DIR/tests/programs/symbols_demo.c" \
  timeout 240 emacs --batch -q -L "$SOURCE_DIR/editors/emacs" \
  -l "$SOURCE_DIR/tests/editors/dap-rewind-test.el" -f ert-run-tests-batch-and-exit \
  >"$WORK/emacs.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "1 results as expected, 0 unexpected" "$WORK/emacs.out"; then
  pass "dap-mode: record in a terminal buffer, breakpoint, continue, step back, reverse-continue"
else
  fail "dap-mode session (emacs exited $rc):"
  grep -v '^Loading\|Treemacs' "$WORK/emacs.out" | tail -40 | sed 's/^/    /'
fi
finish
