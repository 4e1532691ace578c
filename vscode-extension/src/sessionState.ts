// Follows the rewind debug session in focus: after each stop it asks the adapter where the
// replay stands (`rewind/when`), the events around it (`rewind/timeline`) and the user's
// checkpoints (`rewind/checkpoints`), for the Timeline view and the status bar.
import * as vscode from 'vscode';
import { MoveDirection, moveDirection, TimelineBody } from './timelineModel';

/** What the views show: the session's point in the recording and the events around it. */
export interface RewindSnapshot {
  session: vscode.DebugSession;
  /** The last event replayed, and how many the recording has. */
  event: number;
  eventCount: number;
  timeline?: TimelineBody;
  checkpoints: { id: number; event: number }[];
  /** Why the timeline could not be read, if it could not. */
  error?: string;
}

/** The state of the focused rewind session; fires onDidChange after each refresh. */
export class RewindSessionState implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when snapshot or running changes. */
  readonly onDidChange = this.changed.event;
  /** The last snapshot of the focused rewind session; undefined when there is none. */
  snapshot?: RewindSnapshot;
  /** Whether the focused rewind session is running (between continued and stopped). */
  running = false;
  /** Which way the focused session's last move went (VS Code itself shows no sign of it). */
  direction: MoveDirection = 'forward';
  private readonly disposables: vscode.Disposable[] = [];
  private generation = 0;
  /** Ids of sessions that have ended: a refresh still in flight for one shows nothing. */
  private readonly ended = new Set<string>();

  constructor() {
    this.disposables.push(
      this.changed,
      vscode.debug.registerDebugAdapterTrackerFactory('rewind', {
        createDebugAdapterTracker: (session) => ({
          onWillReceiveMessage: (m: { type?: string; command?: string; arguments?: { event?: number } }) => {
            if (m.type !== 'request' || !m.command) return;
            if (this.snapshot && this.snapshot.session.id !== session.id) return;
            const d = moveDirection(m.command, m.arguments, this.snapshot?.event);
            if (d) this.direction = d;
          },
          onDidSendMessage: (m: { type?: string; event?: string }) => {
            if (m.type !== 'event') return;
            if (m.event === 'stopped') void this.refresh(session);
            else if (m.event === 'continued') this.setRunning(session);
          },
        }),
      }),
      vscode.debug.onDidChangeActiveDebugSession((s) => {
        if (s?.type === 'rewind') void this.refresh(s);
        else this.clear();  // no session in focus, or another debugger's
      }),
      vscode.debug.onDidTerminateDebugSession((s) => {
        this.ended.add(s.id);
        // Also before the session's first snapshot: a refresh in flight must not show it.
        if (!this.snapshot || this.snapshot.session.id === s.id) this.clear();
      }),
    );
  }

  /** The focused rewind session, if any. */
  activeSession(): vscode.DebugSession | undefined {
    const s = vscode.debug.activeDebugSession;
    return s?.type === 'rewind' ? s : undefined;
  }

  /** How many events around the current one the timeline lists (rewind.timeline.eventCount). */
  private eventWindow(): number {
    return vscode.workspace.getConfiguration('rewind').get<number>('timeline.eventCount') ?? 60;
  }

  /** Reads the session's point, timeline and checkpoints again (after a stop). */
  async refresh(session = this.activeSession()): Promise<void> {
    if (!session || session.type !== 'rewind' || this.ended.has(session.id)) return;
    const generation = ++this.generation;
    this.running = false;
    let snap: RewindSnapshot;
    try {
      const when = await session.customRequest('rewind/when');
      snap = { session, event: when.event, eventCount: when.eventCount, checkpoints: [] };
      const count = this.eventWindow();
      const start = Math.max(1, when.event - Math.floor(count / 2));
      snap.timeline = await session.customRequest('rewind/timeline', { start, count });
      const cps = await session.customRequest('rewind/checkpoints', { action: 'list' });
      snap.checkpoints = cps.checkpoints ?? [];
    } catch (e) {
      if (generation !== this.generation) return;
      if (!this.snapshot || this.snapshot.session.id !== session.id) return;
      snap = { ...this.snapshot, error: (e as Error).message };
    }
    if (generation !== this.generation) return;  // a later stop already refreshed
    if (this.ended.has(session.id)) return;  // it ended while we asked
    this.snapshot = snap;
    this.changed.fire();
  }

  private setRunning(session: vscode.DebugSession): void {
    if (this.snapshot && this.snapshot.session.id !== session.id) return;
    this.running = true;
    this.changed.fire();
  }

  private clear(): void {
    this.generation++;
    this.snapshot = undefined;
    this.running = false;
    this.direction = 'forward';
    this.changed.fire();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
