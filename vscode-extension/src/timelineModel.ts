// The Timeline view's content, from rewind's `rewind/timeline`, `rewind/when` and
// `rewind/checkpoints` responses (docs/dap.md). Pure; timelineView.ts draws it.

/** One event of a `rewind/timeline` response body. */
export interface TimelineEvent {
  event: number;
  threadId?: number;
  /** Set when another task ran the event before: a thread switch of the recorded schedule. */
  switchedFrom?: number;
  kind: string;
  syscall?: string;
  description?: string;
  /** Whose event it was when not the program's: the dynamic loader's or rewind's own. */
  origin?: 'loader' | 'rewind';
}

/** A `rewind/timeline` response body. */
export interface TimelineBody {
  events: TimelineEvent[];
  currentEvent: number;
  eventCount: number;
}

/** One row of the Timeline view. */
export interface TimelineRow {
  event: number;
  /** "#4711  write = 6 [stdout]". */
  label: string;
  /** "task 1234 · switch from task 1233 · current" and the like. */
  description: string;
  /** A codicon name for the row's icon. */
  icon: string;
  current: boolean;
  /** Ids of the user's checkpoints at this event. */
  checkpoints: number[];
  /** Whose event it was: the program's, the dynamic loader's or rewind's own. */
  origin: 'program' | 'loader' | 'rewind';
}

/** Consecutive loader events of the Timeline, folded under one row. */
export interface TimelineGroup {
  group: true;
  /** "start-up: the dynamic loader". */
  label: string;
  /** "#2–#47 · 44 events". */
  description: string;
  rows: TimelineRow[];
  /** Whether the current event is one of them (the group is then shown open). */
  current: boolean;
}

/** A top-level node of the Timeline: an event or a folded group of loader events. */
export type TimelineNode = TimelineRow | TimelineGroup;

const ICONS: Record<string, string> = {
  syscall: 'symbol-method',
  exec: 'rocket',
  signal: 'zap',
  exit: 'debug-stop',
  rdtsc: 'clock',
  cpuid: 'chip',
  entry: 'debug-pause',
  sched: 'arrow-swap',
  end: 'debug-stop',
};

/** What an event row says: a syscall's own description ("write = 6 [stdout]"), otherwise
 *  the kind first ("rdtsc: 1011511", "exit: status 0", "signal: SIGSEGV"). */
export function eventText(e: TimelineEvent): string {
  if (!e.description) return e.syscall ?? e.kind;
  if (e.kind === 'syscall' || e.kind === 'end') return e.description;
  return `${e.kind}: ${e.description}`;
}

/**
 * The rows for `body`, in event order. The current event (the last one replayed) is marked;
 * `checkpoints` (id, event) adds a checkpoint note to the events they were taken at.
 */
export function timelineRows(
  body: TimelineBody,
  checkpoints: { id: number; event: number }[] = [],
): TimelineRow[] {
  return body.events.map((e) => {
    const here = checkpoints.filter((c) => c.event === e.event).map((c) => c.id);
    const notes: string[] = [];
    if (e.threadId) notes.push(`task ${e.threadId}`);
    if (e.switchedFrom) notes.push(`switch from task ${e.switchedFrom}`);
    if (e.origin === 'rewind') notes.push('rewind\'s own');
    if (here.length) notes.push(`checkpoint ${here.join(', ')}`);
    const current = e.event === body.currentEvent;
    if (current) notes.push('current');
    return {
      event: e.event,
      label: `#${e.event}  ${eventText(e)}`,
      description: notes.join(' · '),
      icon: current ? 'debug-stackframe' : ICONS[e.kind] ?? 'circle-small',
      current,
      checkpoints: here,
      origin: e.origin ?? 'program',
    };
  });
}

/**
 * What the Timeline shows of `rows`: rewind's own events left out (unless
 * `showRewindEvents`, or the one the replay stands at), and each run of two or more loader
 * events (rewind's hidden ones do not break a run) folded into one "start-up" group.
 */
export function timelineNodes(rows: TimelineRow[], showRewindEvents = false): TimelineNode[] {
  const nodes: TimelineNode[] = [];
  let run: TimelineRow[] = [];
  const flush = () => {
    if (run.length >= 2) {
      const first = run[0].event, last = run[run.length - 1].event;
      nodes.push({
        group: true,
        label: first <= 2 ? 'start-up: the dynamic loader' : 'the dynamic loader',
        description: `#${first}–#${last} · ${run.length} events`,
        rows: run,
        current: run.some((r) => r.current),
      });
    } else {
      nodes.push(...run);
    }
    run = [];
  };
  for (const row of rows) {
    if (row.origin === 'rewind' && !showRewindEvents && !row.current) continue;
    if (row.origin === 'loader') {
      run.push(row);
      continue;
    }
    flush();
    nodes.push(row);
  }
  flush();
  return nodes;
}

/** Whether `node` is a folded group of loader events. */
export function isTimelineGroup(node: TimelineNode): node is TimelineGroup {
  return (node as TimelineGroup).group === true;
}

/** The status bar text for the current point: "event 4711 / 120000". */
export function eventStatusText(event: number, eventCount: number, backwards = false): string {
  return `${backwards ? '◀ reverse · ' : ''}event ${event} / ${eventCount}`;
}

/** Which way a request sent to the adapter moves the replay. */
export type MoveDirection = 'forward' | 'backward';

const BACKWARD_REQUESTS = new Set(['stepBack', 'reverseContinue', 'rewind/stepInBack', 'rewind/stepOutBack']);
const FORWARD_REQUESTS = new Set(['continue', 'next', 'stepIn', 'stepOut', 'restart', 'configurationDone']);

/**
 * The way request `command` moves the replay (DAP's steps and continues, and rewind's own
 * requests of docs/dap.md), undefined for a request that does not move it. A `rewind/seek`
 * goes backwards when its event comes before `currentEvent`.
 */
export function moveDirection(command: string, args: { event?: number } | undefined,
  currentEvent: number | undefined): MoveDirection | undefined {
  if (BACKWARD_REQUESTS.has(command)) return 'backward';
  if (FORWARD_REQUESTS.has(command)) return 'forward';
  if (command === 'rewind/seek' && typeof args?.event === 'number' && currentEvent !== undefined)
    return args.event < currentEvent ? 'backward' : 'forward';
  return undefined;
}

/**
 * Checks what the user typed in "Go to Event…": a whole number from 1 to `eventCount`.
 * Returns the event number, or a message for the input box.
 */
export function parseEventNumber(text: string, eventCount: number): number | string {
  const t = text.trim().replace(/^#/, '');
  if (!/^\d+$/.test(t)) return 'Type an event number (1 is the program\'s exec).';
  const n = Number(t);
  if (n < 1 || n > eventCount) return `The recording has events 1 to ${eventCount}.`;
  return n;
}
