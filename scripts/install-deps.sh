#!/usr/bin/env bash
# Installs rewind's build and test dependencies from Debian 12's packages (as root, or with
# sudo). Only what is missing is installed.
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config     # the C++20 toolchain (g++ 12) and build
  python3 linux-libc-dev               # the build generates the syscall tables (tools/)
  nlohmann-json3-dev libcli11-dev      # JSON; command-line parsing
  libzstd-dev libxxhash-dev            # trace compression; checksums and digests
  libdwarf-dev libelf-dev libunwind-dev zlib1g-dev    # DWARF, ELF, unwinding, CRC-32
  libcapstone-dev                      # disassembly (DAP disassemble)
  python3-jsonschema                   # the DAP test validates every message against the schema
  libasio-dev                          # gdb/DAP sockets
  libssl-dev                           # base64 for DAP readMemory (OpenSSL's libcrypto)
  libc6-dbg clang                      # the symbol tests: libc's separate debug info; clang builds
  catch2                               # unit tests
  python3 r-base-core sqlite3 gcc file git # programs the integration tests record
  python3-dev                          # CPython's headers: its offsets checked against their DWARF
  meson ninja-build                    # real build systems' source paths (the DAP paths test)
  tmux                                 # a real terminal for the Ctrl-C test
  gdb                                  # `rewind replay` runs it; the gdb test drives it
  strace                               # a real tracer the ptrace emulation test records
  bubblewrap                           # a real sandbox (bwrap) the namespace test records
  lmdb-utils                           # LMDB's tools: pwrite into a file read through a map
  emacs-nox elpa-dap-mode              # a real editor for the DAP test (editors/emacs)
  neovim vim-nox                       # Neovim and Vim (with Python 3) for the editor tests
)
"$(dirname "$0")/apt-install-missing.sh" "${pkgs[@]}"
# CPython 3.14 for the interpreter tests (Debian 12 has 3.11): Debian unstable's, unpacked in
# /opt/rewind-cpython-3.14 and run with its own glibc, nothing installed into the system.
# Without it (no archive, or unstable moved on), those tests run with the other versions.
"$(dirname "$0")/install-cpython-sid.sh" 3.14 ||
  echo "install-deps: no CPython 3.14 for the interpreter tests (see above)"
