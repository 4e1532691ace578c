#!/usr/bin/env bash
# A real editor drives `rewind dap`: headless Neovim with nvim-dap 0.6.0 (the vendored copy
# in ../shared/vendor; see vendor_dir in lib.sh) and editors/neovim. Record & Debug of
# symbols_demo in nvim-dap's terminal buffer, a breakpoint toggled in the source buffer,
# continue, step back, reverse-continue and rewind's reverse step-out and step-in, each
# checked on the cursor's line and the evaluated values (tests/editors/nvim_dap_test.lua).
. "$(dirname "$0")/lib.sh"
need nvim
NVIM_DAP="$(vendor_dir)/nvim-dap-0.6.0"
[ -f "$NVIM_DAP/lua/dap.lua" ] || skip "nvim-dap 0.6.0 not found at $NVIM_DAP (set REWIND_VENDOR_DIR)"
OUT="$WORK" REWIND="$REWIND" PROGRAM="$TEST_PROGRAMS/symbols_demo_gcc_O0" \
  SOURCE="$SOURCE_DIR/tests/programs/symbols_demo.c" XDG_CACHE_HOME="$WORK/cache" \
  XDG_STATE_HOME="$WORK/state" timeout 240 nvim --headless -u NONE -i NONE \
  --cmd "set rtp+=$NVIM_DAP" --cmd "set rtp+=$SOURCE_DIR/editors/neovim" \
  -c "luafile $SOURCE_DIR/tests/editors/nvim_dap_test.lua" >"$WORK/nvim.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "checks held" "$WORK/nvim.out"; then
  pass "nvim-dap: $(grep -o '[0-9]* checks held' "$WORK/nvim.out"): record in a terminal buffer," \
    "breakpoint, continue, step back, reverse-continue, step out and in backwards"
else
  fail "nvim-dap session (nvim exited $rc):"
  tail -40 "$WORK/nvim.out" | sed 's/^/    /'
fi
finish
