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
