#!/usr/bin/env bash
# The VS Code extension (vscode-extension/): its unit tests (mocha, against the built rewind),
# its .vsix package, and the end-to-end test in real VS Code (code-server) driven in Debian's
# chromium (vscode-extension/test/e2e/run.js; screenshots in build/vscode-e2e/screenshots).
# Needs `npm ci` in vscode-extension/ and scripts/install-code-server.sh: scripts/test.sh
# runs both.
set -euo pipefail
ext=$SOURCE_DIR/vscode-extension
build=$(dirname "$SAMPLES_BIN")
prefix=${CODE_SERVER_PREFIX:-$SOURCE_DIR/build/code-server}
if [ ! -d "$ext/node_modules" ] || [ ! -f "$prefix/.installed" ]; then
  echo "vscode_extension: missing npm packages or code-server: run 'npm ci' in vscode-extension/" \
    "and scripts/install-code-server.sh (scripts/test.sh does both)" >&2
  exit 1
fi
cd "$ext"
REWIND_BIN=$REWIND npm test --silent
rm -f rewind-debug-*.vsix
npm run package --silent >/dev/null
ls rewind-debug-*.vsix
# Where the CPU does not give programs its debug registers (a PVM guest), rewind refuses
# Python breakpoints: the end-to-end test checks the refusal there instead of the stop.
debug_registers=no
"$REWIND" machine | grep -q '^debug registers for programs: yes' && debug_registers=yes
REWIND_BIN=$REWIND SAMPLES_BIN=$SAMPLES_BIN CODE_SERVER_PREFIX=$prefix E2E_OUT=$build/vscode-e2e \
  REWIND_DEBUG_REGISTERS=$debug_registers node test/e2e/run.js
