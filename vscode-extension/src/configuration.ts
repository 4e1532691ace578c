// Debug configurations of type "rewind": defaults and checks before a session starts.
// Pure (no `vscode` import) so that the unit tests run without VS Code; provider.ts adapts it.
// The arguments are rewind's DAP launch/attach arguments (docs/dap.md).
import * as path from 'path';

/** A debug configuration as launch.json holds it (type, request, name and rewind's arguments). */
export interface RewindConfiguration {
  type?: string;
  request?: string;
  name?: string;
  mode?: string;
  program?: string;
  args?: unknown;
  cwd?: string;
  env?: unknown;
  trace?: string;
  host?: string;
  port?: unknown;
  token?: string;
  console?: string;
  interpreterFrames?: string;
  [key: string]: unknown;
}

/** What resolving needs from the editor: the active file, the workspace, and two pickers. */
export interface ResolveContext {
  /** Absolute path of the file in the active editor, if any. */
  activeFile?: string;
  /** Whether `file` is an executable regular file (execute permission). */
  isExecutable(file: string): boolean;
  /** The workspace folder the session starts in, if any. */
  workspaceFolder?: string;
  /** Asks the user for a program to record; undefined when they cancel. */
  pickProgram(): Promise<{ program: string; args?: string[] } | undefined>;
  /** Asks the user for a recorded trace (its directory); undefined when they cancel. */
  pickTrace(): Promise<string | undefined>;
}

/** The outcome: a configuration to start, a cancel (the user closed a picker), or an error. */
export type Resolved =
  | { kind: 'start'; config: RewindConfiguration }
  | { kind: 'cancel' }
  | { kind: 'error'; message: string };

const CONSOLES = ['internalConsole', 'integratedTerminal', 'externalTerminal'];
const INTERPRETER_FRAMES = ['merged', 'separate', 'off'];

/**
 * How to record the file `file` as a program: a .py file runs under python3, a .R file under
 * Rscript, an executable file runs itself; anything else (a C source, say) gives undefined.
 */
export function programForFile(
  file: string,
  isExecutable: (f: string) => boolean,
): { program: string; args: string[] } | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.py') return { program: 'python3', args: [file] };
  if (ext === '.r') return { program: 'Rscript', args: [file] };
  if (isExecutable(file)) return { program: file, args: [] };
  return undefined;
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((a) => typeof a === 'string');
}

/**
 * Fills in defaults and checks `config` the way VS Code's resolveDebugConfiguration hook does
 * (before ${...} variables are substituted). An empty configuration (F5 without launch.json)
 * becomes Record & Debug of the active file's program, or of one the user picks.
 */
export async function resolveConfiguration(
  input: RewindConfiguration,
  ctx: ResolveContext,
): Promise<Resolved> {
  const config: RewindConfiguration = { ...input };
  if (!config.type && !config.request && !config.name) {
    config.type = 'rewind';
    config.request = 'launch';
    config.name = 'rewind: Record & Debug';
    const fromFile = ctx.activeFile ? programForFile(ctx.activeFile, ctx.isExecutable) : undefined;
    if (fromFile) Object.assign(config, fromFile);
  }
  config.type = 'rewind';
  if (config.request === 'attach') return resolveAttach(config);
  if (config.request !== 'launch')
    return { kind: 'error', message: `"request" must be "launch" or "attach", not "${config.request}".` };
  if (config.console !== undefined && !CONSOLES.includes(config.console))
    return { kind: 'error', message: `"console" must be one of ${CONSOLES.join(', ')}.` };
  if (config.interpreterFrames !== undefined && !INTERPRETER_FRAMES.includes(config.interpreterFrames))
    return { kind: 'error', message: `"interpreterFrames" must be one of ${INTERPRETER_FRAMES.join(', ')}.` };
  const mode = config.mode ?? 'record';
  if (mode === 'replay') {
    if (!config.trace) {
      const trace = await ctx.pickTrace();
      if (!trace) return { kind: 'cancel' };
      config.trace = trace;
    }
    return { kind: 'start', config };
  }
  if (mode !== 'record')
    return { kind: 'error', message: `"mode" must be "record" or "replay", not "${mode}".` };
  if (!config.program) {
    const picked = await ctx.pickProgram();
    if (!picked) return { kind: 'cancel' };
    config.program = picked.program;
    if (picked.args && config.args === undefined) config.args = picked.args;
  }
  if (config.args === undefined) config.args = [];
  if (!isStringArray(config.args))
    return { kind: 'error', message: '"args" must be an array of strings.' };
  if (config.env !== undefined) {
    const env = config.env;
    if (typeof env !== 'object' || env === null || Array.isArray(env) ||
        !Object.values(env).every((v) => typeof v === 'string' || v === null))
      return { kind: 'error', message: '"env" must map names to strings (or null to remove one).' };
  }
  if (!config.cwd) {
    const program = config.program as string;
    config.cwd = ctx.workspaceFolder ??
      (path.isAbsolute(program) ? path.dirname(program) : undefined);
    if (!config.cwd) delete config.cwd;
  }
  return { kind: 'start', config };
}

/** A TCP port from launch.json (a number, or a string of digits): 1 to 65535, else undefined. */
export function parsePort(value: unknown): number | undefined {
  const port = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535
    ? port
    : undefined;
}

function resolveAttach(config: RewindConfiguration): Resolved {
  const port = parsePort(config.port);
  if (port === undefined)
    return {
      kind: 'error',
      message: '"port" must be the port of a `rewind dap --listen PORT` server (1 to 65535).',
    };
  config.port = port;
  if (!config.host) config.host = '127.0.0.1';
  return { kind: 'start', config };
}

/**
 * The configurations a new launch.json starts with: Record & Debug of `picked` (the program
 * the user chose; without one, the program is asked for at each launch) and Replay trace.
 * A program inside `workspaceFolder` is written as `${workspaceFolder}/...`.
 */
export function initialConfigurations(
  picked: { program: string; args?: string[] } | undefined,
  workspaceFolder: string | undefined,
): RewindConfiguration[] {
  const record: RewindConfiguration = { type: 'rewind', request: 'launch', name: 'rewind: Record & Debug' };
  if (picked) {
    const rel = workspaceFolder ? path.relative(workspaceFolder, picked.program) : undefined;
    record.program = rel !== undefined && !rel.startsWith('..') && !path.isAbsolute(rel)
      ? `\${workspaceFolder}/${rel}`
      : picked.program;
    record.args = picked.args ?? [];
  }
  record.cwd = '${workspaceFolder}';
  return [record, { type: 'rewind', request: 'launch', name: 'rewind: Replay trace', mode: 'replay' }];
}

