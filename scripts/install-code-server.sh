#!/usr/bin/env bash
# Installs code-server (VS Code in the browser, from npm), playwright-core and Debian's chromium
# into PREFIX (default build/code-server) for the VS Code extension's end-to-end test. Offline
# apart from Debian's apt and the npm registry: code-server's postinstall is done by hand, as
# ../shared/recipes/code-server.md explains (its native modules are built from source, ripgrep
# is Debian's). Does nothing when PREFIX already holds a working install.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=$(realpath -m "${PREFIX:-build/code-server}")
CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4}
export npm_config_nodedir=/usr  # node's headers from Debian (no headers download)
export XDG_CONFIG_HOME=$PREFIX/xdg/config XDG_DATA_HOME=$PREFIX/xdg/data XDG_CACHE_HOME=$PREFIX/xdg/cache
if [ -f "$PREFIX/.installed" ]; then
  echo "code-server already installed in $PREFIX"
  exit 0
fi
pkgs=(build-essential python3 pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
  ripgrep chromium fonts-liberation curl)
scripts/apt-install-missing.sh "${pkgs[@]}"
mkdir -p "$PREFIX" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
npm install --no-audit --no-fund --ignore-scripts --prefix "$PREFIX" "code-server@$CODE_SERVER_VERSION"
(cd "$PREFIX" && npm rebuild argon2 --build-from-source)
VS="$PREFIX/node_modules/code-server/lib/vscode"
(
  cd "$VS"
  npm install --no-audit --no-fund --omit=dev --ignore-scripts
  npm_config_yes=true npm rebuild kerberos @vscode/deviceid @vscode/spdlog native-watchdog node-pty
  mkdir -p node_modules/@vscode/ripgrep/bin
  ln -sfn /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
  (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
  (cd extensions && npm install --no-audit --no-fund --omit=dev)
  node -e 'for (const m of ["kerberos","@vscode/spdlog","@vscode/deviceid","native-watchdog","node-pty","@parcel/watcher"]) require(m)'
)
"$PREFIX/node_modules/.bin/code-server" --version --config "$PREFIX/config.yaml"
touch "$PREFIX/.installed"
