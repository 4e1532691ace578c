// The rows of the History view from the answers of rewind's queries over a recording
// (docs/dap.md "Queries over the whole recording"): rewind/history (a value's changes),
// rewind/calls (a function's calls) and rewind/logAll (a logpoint's hits). Pure functions,
// unit-tested without VS Code.

/** A source location as the adapter sends it. */
export interface QuerySource { path?: string; name?: string }

/** One row of the History view: what it shows, and the rewind/seek arguments that go there. */
export interface QueryRow {
  label: string;
  description: string;
  tooltip: string;
  seek: { change?: number; call?: number; logHit?: number };
  source?: QuerySource;
  line?: number;
}

/** The view's content: a title (what was asked, and how many results) and the rows. */
export interface QueryResult {
  title: string;
  rows: QueryRow[];
  /** Shown when the answer is partial (cancelled) or empty. */
  note?: string;
}

function baseName(path?: string): string {
  if (!path) return '';
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** "function file.c:12", or "function" alone without a source. */
function where(fn: string, source?: QuerySource, line?: number): string {
  const file = baseName(source?.path ?? source?.name);
  return [fn || '??', file && line ? `${file}:${line}` : file].filter((s) => s).join(' ');
}

function partial(body: { complete?: boolean; truncated?: boolean; reachedEvent?: number }): string | undefined {
  if (body.truncated) return `The first results only, up to event ${body.reachedEvent ?? '?'}: ask about fewer events.`;
  return body.complete === false
    ? `Cancelled: the results up to event ${body.reachedEvent ?? '?'} only.` : undefined;
}

/** What a change of a struct or an array changed: "" (a scalar), "[3]: " or ".x, .y: ". */
function parts(c: any): string {
  return c.member ? `${c.member}: ` : '';
}

/** The rows of a rewind/history answer (its changes, in the order they came). */
export function historyResult(body: any): QueryResult {
  const rows: QueryRow[] = (body.changes ?? []).map((c: any) => ({
    label: `${parts(c)}${c.oldValue} → ${c.newValue}`,
    description: `#${c.event} · ${where(c.function, c.source, c.line)}`,
    tooltip: `${body.expression}${c.member && !c.member.includes(', ') ? c.member : ''}: ` +
      `${c.member?.includes(', ') ? parts(c) : ''}${c.oldValue} → ${c.newValue}\nevent ${c.event}, thread ${c.threadId}, ` +
      `in ${where(c.function, c.source, c.line)}\nClick to go to the point just after this write.`,
    seek: { change: c.index },
    source: c.source,
    line: c.line,
  }));
  const scope = body.frameFunction ? `, a local of ${body.frameFunction}` : '';
  return {
    title: `History of ${body.expression}${scope}: ${body.totalChanges} change${body.totalChanges === 1 ? '' : 's'}`,
    rows,
    note: partial(body) ?? (rows.length ? undefined : `${body.expression} never changed in the recording.`),
  };
}

/** The rows of a rewind/calls answer. */
export function callsResult(body: any): QueryResult {
  const rows: QueryRow[] = (body.calls ?? []).map((c: any) => {
    const args = (c.arguments ?? []).map((a: any) => `${a.name}=${a.value}`).join(', ');
    // (No `returned` where the return was not followed: an R call, some Python ones.)
    const result = c.returned === undefined ? '' : !c.returned ? ' (did not return)'
      : c.returnValue ? ` → ${c.returnValue}` : '';
    const from = c.caller ? where(c.caller.function, c.caller.source, c.caller.line) : '??';
    return {
      label: `${c.function}(${args})${result}`,
      description: `#${c.event} · from ${from}`,
      tooltip: `${c.function}(${args})${result}\nevent ${c.event}, thread ${c.threadId}, called from ${from}\n` +
        'Click to go to the start of this call.',
      seek: { call: c.index },
      source: c.source,
      line: c.line,
    };
  });
  return {
    title: `Calls of ${body.function}: ${body.totalCalls}`,
    rows,
    note: partial(body) ?? (rows.length ? undefined : `${body.function} was never called in the recording.`),
  };
}

/** The rows of a rewind/logAll answer. */
export function logResult(body: any): QueryResult {
  const rows: QueryRow[] = (body.hits ?? []).map((h: any) => ({
    label: h.message,
    description: `#${h.event} · ${where(h.function, h.source, h.line)}`,
    tooltip: `${h.message}\nevent ${h.event}, thread ${h.threadId}\nClick to go to this hit.`,
    seek: { logHit: h.index },
    source: h.source,
    line: h.line,
  }));
  return {
    title: `Log over the recording at ${baseName(body.location)}: ${body.totalHits} hit${body.totalHits === 1 ? '' : 's'}`,
    rows,
    note: partial(body) ?? (rows.length ? undefined : 'The line never ran in the recording.'),
  };
}
