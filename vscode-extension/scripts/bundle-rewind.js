// Copies the built rewind program (../build/rewind, or $REWIND_BIN) to bin/rewind, so that
// `npm run package:bundled` makes a .vsix that needs no rewind on PATH. The copy uses this
// machine's shared libraries (libdwarf, libunwind, capstone...): install the same packages
// where the extension runs (see the project README).
const fs = require('fs');
const path = require('path');
const src = process.env.REWIND_BIN || path.resolve(__dirname, '../../build/rewind');
if (!fs.existsSync(src)) {
  console.error(`bundle-rewind: no rewind at ${src}: build it first (scripts/build.sh)`);
  process.exit(1);
}
fs.mkdirSync(path.resolve(__dirname, '../bin'), { recursive: true });
fs.copyFileSync(src, path.resolve(__dirname, '../bin/rewind'));
fs.chmodSync(path.resolve(__dirname, '../bin/rewind'), 0o755);
console.log(`bundled ${src} as bin/rewind`);
// Syscall buffering's library must sit next to rewind (without it, recordings trace every
// syscall and say so).
const lib = path.join(path.dirname(src), 'librewind_preload.so');
if (fs.existsSync(lib)) {
  fs.copyFileSync(lib, path.resolve(__dirname, '../bin/librewind_preload.so'));
  console.log(`bundled ${lib} as bin/librewind_preload.so`);
} else {
  console.warn(`bundle-rewind: no ${lib}: the bundled rewind will record without syscall buffering`);
}
