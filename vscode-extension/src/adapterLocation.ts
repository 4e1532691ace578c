// Where the `rewind` program is: the rewind.path setting, the copy bundled with the extension,
// or PATH. Pure (no `vscode` import); factory.ts and traces.ts use it.
import * as fs from 'fs';
import * as path from 'path';

/** The found program, or a one-line message saying what is wrong and how to fix it. */
export type RewindLocation = { path: string } | { error: string };

/** Whether `file` is a regular file the current user may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds `rewind`: `setting` (rewind.path) when set, which must then be an executable file;
 * else `<extensionDir>/bin/rewind` (bundled by `npm run package:bundled`); else the first
 * `rewind` in `envPath` (a PATH string, ':'-separated).
 */
export function findRewind(
  setting: string | undefined,
  extensionDir: string,
  envPath: string | undefined,
  isExecutable: (file: string) => boolean = isExecutableFile,
): RewindLocation {
  if (setting && setting.trim()) {
    const p = setting.trim();
    if (isExecutable(p)) return { path: p };
    return {
      error: `rewind.path is set to "${p}", which is not an executable file: fix the setting, ` +
        'or clear it to use rewind from PATH.',
    };
  }
  const bundled = path.join(extensionDir, 'bin', 'rewind');
  if (isExecutable(bundled)) return { path: bundled };
  for (const dir of (envPath ?? '').split(':')) {
    if (!dir) continue;
    const candidate = path.join(dir, 'rewind');
    if (isExecutable(candidate)) return { path: candidate };
  }
  return {
    error: 'rewind was not found: set "rewind.path" to the rewind program (build it with ' +
      'scripts/build.sh: build/rewind), or put rewind on PATH.',
  };
}
