// The recorded traces, from `rewind ls --json` (cli/cmd_traces.cpp), for the trace picker.
import { execFile } from 'child_process';

/** One trace as `rewind ls --json` describes it. */
export interface TraceInfo {
  name: string;
  /** The trace directory (absolute). */
  dir: string;
  /** When recording started, seconds since the epoch. */
  recorded?: number;
  /** Number of events; null while the trace is partial. */
  events?: number | null;
  /** The recorded program's exit code; null while partial. */
  exitCode?: number | null;
  /** The recorded command line. */
  command?: string[];
  /** Whether latest-trace points at it. */
  latest?: boolean;
  /** Why the trace cannot be read, for an unreadable one. */
  error?: string;
}

/** Parses the output of `rewind ls --json`; throws an Error with a one-line reason when it is not that. */
export function parseTraceList(text: string): TraceInfo[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('rewind ls --json did not print JSON (is rewind.path an old rewind?)');
  }
  if (!Array.isArray(data)) throw new Error('rewind ls --json did not print a list');
  return data.filter(
    (t): t is TraceInfo => typeof t === 'object' && t !== null &&
      typeof t.name === 'string' && typeof t.dir === 'string',
  );
}

/** A picker entry for `t`: label (name), description (exit, events, when), detail (command). */
export function traceItem(t: TraceInfo): { label: string; description: string; detail: string } {
  if (t.error) return { label: t.name, description: 'unreadable', detail: t.error };
  const parts: string[] = [];
  if (t.latest) parts.push('latest');
  parts.push(t.events === null || t.events === undefined ? 'partial' : `${t.events} events`);
  if (t.exitCode !== null && t.exitCode !== undefined) parts.push(`exit ${t.exitCode}`);
  if (t.recorded) parts.push(new Date(t.recorded * 1000).toLocaleString());
  return { label: t.name, description: parts.join(' · '), detail: (t.command ?? []).join(' ') };
}

/** Runs `<rewind> ls --json` and returns the traces (readable ones first, as rewind orders them). */
export function listTraces(rewind: string): Promise<TraceInfo[]> {
  return new Promise((resolve, reject) => {
    execFile(rewind, ['ls', '--json'], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(stderr.trim().split('\n')[0] || err.message));
        return;
      }
      try {
        resolve(parseTraceList(stdout));
      } catch (e) {
        reject(e);
      }
    });
  });
}
