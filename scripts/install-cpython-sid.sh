#!/usr/bin/env bash
# Puts a CPython newer than Debian 12's in a directory of its own, for the interpreter tests
# (tests/CMakeLists.txt runs the Python cases once more with it): Debian unstable's
# python3.X packages and the libraries they need, downloaded from Debian's archive with apt
# and unpacked, nothing installed into the system. Debian 12's glibc is older than the one
# those packages are built against, so the directory holds unstable's glibc too, and
# DIR/bin/python3.X (the interpreter, patched with patchelf) runs with unstable's loader.
# Usage: scripts/install-cpython-sid.sh [VERSION [DIR]] (default 3.14 and
# /opt/rewind-cpython-VERSION). Does nothing when DIR/bin/python3.X runs already; fails with
# a one-line message (and exit 1) when the archive cannot be reached or has no such version.
set -euo pipefail
version=${1:-3.14}
dir=${2:-/opt/rewind-cpython-$version}
if [ -x "$dir/bin/python$version" ] && "$dir/bin/python$version" -c pass 2>/dev/null; then
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
echo "deb http://deb.debian.org/debian sid main" >"$work/sources.list"
apt=(-o "Dir::Etc::sourcelist=$work/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Get::List-Cleanup=0
  -o APT::Sandbox::User=root -q)
if ! apt-get "${apt[@]}" update >"$work/log" 2>&1; then
  echo "install-cpython-sid: cannot read Debian unstable's package lists (see apt-get update)" >&2
  exit 1
fi
# The interpreter, its standard library and headers (the layout test builds against them),
# and the shared libraries the interpreter and its stdlib's extension modules load.
pkgs=(python$version-minimal libpython$version-minimal libpython$version-stdlib
  libpython$version-dev libc6 zlib1g libexpat1 libssl3t64 libffi8 libzstd1 liblzma5 libbz2-1.0
  libsqlite3-0 libmpdec4 libuuid1 libncursesw6 libtinfo6 libreadline8t64 libdb5.3t64)
(cd "$work/debs" && apt-get "${apt[@]}" download "${pkgs[@]}" >"$work/log" 2>&1) || {
  echo "install-cpython-sid: Debian unstable has no CPython $version packages to download" \
    "($(tail -1 "$work/log"))" >&2
  exit 1
}
rm -rf "$dir"
mkdir -p "$dir/root" "$dir/bin"
for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
lib="$dir/root/usr/lib/x86_64-linux-gnu"
# Executed by the kernel as an installed interpreter would be: its ELF interpreter is the
# unpacked glibc's loader, and its DT_RPATH (which dlopen'd extension modules' own libraries
# use too) the unpacked libraries; it finds its standard library from its own location.
"$(dirname "$0")/apt-install-missing.sh" patchelf >/dev/null
patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib" \
  "$dir/root/usr/bin/python$version"
ln -s "../root/usr/bin/python$version" "$dir/bin/python$version"
"$dir/bin/python$version" -c "import sys; print('CPython', sys.version.split()[0], 'in $dir')"
