#!/usr/bin/env bash
# Takes docs/images/neovim-reverse.png, the picture in docs/editors.md: the Neovim test
# (tests/editors/nvim_dap_test.lua) run in a real terminal (tmux, 160x45) instead of
# headless, held just after its step back; the screen is captured with its colours
# (tmux capture-pane), turned into HTML (aha) and photographed by headless chromium.
# Needs: a build in build/, tmux, aha, chromium, neovim, and nvim-dap 0.6.0 in
# ../shared/vendor (or $REWIND_VENDOR_DIR). Usage: scripts/capture-neovim.sh [OUTPUT.png]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-docs/images/neovim-reverse.png}
vendor=${REWIND_VENDOR_DIR:-$root/../shared/vendor}
for tool in tmux aha chromium nvim; do
  command -v "$tool" >/dev/null || { echo "capture-neovim: $tool is not installed" >&2; exit 1; }
done
[ -f "$vendor/nvim-dap-0.6.0/lua/dap.lua" ] ||
  { echo "capture-neovim: nvim-dap 0.6.0 not found in $vendor" >&2; exit 1; }
work=$(mktemp -d /tmp/rewind-capture.XXXXXX)
session=rewind-capture-$$
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/run.sh" <<RUN
export OUT='$work' REWIND='$root/build/rewind' PROGRAM='$root/build/tests/symbols_demo_gcc_O0'
export SOURCE='$root/tests/programs/symbols_demo.c' CAPTURE='$work/capture'
export XDG_CACHE_HOME='$work/cache' XDG_STATE_HOME='$work/state'
cd '$work' && nvim -u NONE -i NONE --cmd 'set rtp+=$vendor/nvim-dap-0.6.0' \\
  --cmd 'set rtp+=$root/editors/neovim' --cmd 'set termguicolors number signcolumn=yes' \\
  --cmd 'syntax on' -c 'luafile $root/tests/editors/nvim_dap_test.lua'
RUN
tmux new-session -d -s "$session" -x 160 -y 45 "bash $work/run.sh"
for _ in $(seq 600); do [ -e "$work/capture.ready" ] && break; sleep 0.2; done
[ -e "$work/capture.ready" ] || { echo "capture-neovim: the test never reached the step back" >&2; exit 1; }
tmux capture-pane -t "$session" -e -p >"$work/screen.ansi"
touch "$work/capture.done"
aha --black --title "rewind in Neovim" <"$work/screen.ansi" >"$work/screen.html"
sed -i 's|<pre>|<pre style="font: 14px/1.25 \x27DejaVu Sans Mono\x27, monospace; margin: 0">|' "$work/screen.html"
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1380,800 \
  --screenshot="$root/$out" "file://$work/screen.html" >/dev/null 2>&1
echo "capture-neovim: wrote $out"
