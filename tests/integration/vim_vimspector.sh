#!/usr/bin/env bash
# A real editor drives `rewind dap`: Vim 9 (vim-nox, with Python 3) and the vendored
# vimspector (../shared/vendor; see vendor_dir in lib.sh) in a pseudo-terminal, with
# editors/vim's gadget and configuration files installed as docs/editors.md says. Record &
# Debug of symbols_demo in vimspector's terminal, a breakpoint toggled in the source buffer,
# continue, and editors/vim's :RewindStepBack, :RewindReverseContinue, :RewindStepOutBack and
# :RewindStepInBack, each checked on the cursor's line and the console's values
# (tests/editors/vimspector_test.vim).
. "$(dirname "$0")/lib.sh"
need script
VIM=$(command -v vim.nox || command -v vim) || skip "vim is not installed"
"$VIM" --version | grep -q '+python3' || skip "$VIM has no Python 3 (apt-get install vim-nox)"
VIMSPECTOR="$(vendor_dir)/vimspector"
[ -f "$VIMSPECTOR/plugin/vimspector.vim" ] ||
  skip "vimspector not found at $VIMSPECTOR (set REWIND_VENDOR_DIR)"
# vimspector's home for the user's files: rewind's gadget and configurations, as installed.
HOME_DIR="$WORK/vimspector"
mkdir -p "$HOME_DIR/gadgets/linux/.gadgets.d" "$HOME_DIR/configurations/linux/_all"
cp "$SOURCE_DIR/editors/vim/gadgets/rewind.json" "$HOME_DIR/gadgets/linux/.gadgets.d/"
cp "$SOURCE_DIR/editors/vim/configurations/rewind.json" "$HOME_DIR/configurations/linux/_all/"
mkdir -p "$WORK/bin" && ln -s "$REWIND" "$WORK/bin/rewind"  # the gadget runs `rewind dap`
cd "$WORK" || exit 1
PATH="$WORK/bin:$PATH" OUT="$WORK" SOURCE="$SOURCE_DIR/tests/programs/symbols_demo.c" \
  PROGRAM="$TEST_PROGRAMS/symbols_demo_gcc_O0" RESULT="$WORK/result" TERM=xterm \
  timeout 240 script -qec "$VIM -N -u NONE -i NONE --cmd 'set rtp+=$VIMSPECTOR,$SOURCE_DIR/editors/vim' --cmd 'let g:vimspector_base_dir=\"$HOME_DIR\"' -S $SOURCE_DIR/tests/editors/vimspector_test.vim" \
  /dev/null >"$WORK/screen" 2>&1
rc=$?
if grep -q '^PASS' "$WORK/result" 2>/dev/null; then
  pass "vimspector: $(cut -d' ' -f2- "$WORK/result") held: record in a terminal, breakpoint," \
    "continue, step back, reverse-continue, step out and in backwards"
else
  fail "vimspector session (script exited $rc): $(cat "$WORK/result" 2>/dev/null || echo 'no result')"
fi
finish
