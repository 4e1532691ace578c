// Shared by the unit tests: where the built rewind program is.
import * as fs from 'fs';
import * as path from 'path';

/** The rewind binary the tests run: $REWIND_BIN, else ../build/rewind; throws when neither exists. */
export function rewindBinary(): string {
  const p = process.env.REWIND_BIN ?? path.resolve(__dirname, '../../../../build/rewind');
  if (!fs.existsSync(p)) throw new Error(`no rewind binary at ${p}: build it (scripts/build.sh) or set REWIND_BIN`);
  return p;
}
