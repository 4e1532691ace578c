// The "rewind Timeline" view in the Run and Debug side bar: the recorded events around the
// current point (syscalls, signals, thread switches, exits), the current one highlighted;
// clicking an event goes there (`rewind/seek`).
import * as vscode from 'vscode';
import { RewindSessionState } from './sessionState';
import { TimelineRow, timelineRows } from './timelineModel';

/** The tree data behind the Timeline view: one flat level of event rows. */
export class TimelineProvider implements vscode.TreeDataProvider<TimelineRow> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private rows: TimelineRow[] = [];

  constructor(private readonly state: RewindSessionState) {
    state.onDidChange(() => {
      const s = state.snapshot;
      this.rows = s?.timeline ? timelineRows(s.timeline, s.checkpoints) : [];
      this.changed.fire();
    });
  }

  /** The row of the current event, if it is in the listed window. */
  currentRow(): TimelineRow | undefined {
    return this.rows.find((r) => r.current);
  }

  getChildren(element?: TimelineRow): TimelineRow[] {
    return element ? [] : this.rows;
  }

  getParent(): undefined {
    return undefined;
  }

  getTreeItem(row: TimelineRow): vscode.TreeItem {
    const item = new vscode.TreeItem(
      row.current ? { label: row.label, highlights: [[0, row.label.length]] } : row.label,
    );
    item.id = `event-${row.event}`;
    item.description = row.description;
    item.iconPath = new vscode.ThemeIcon(
      row.icon,
      row.current ? new vscode.ThemeColor('debugIcon.stopForeground') : undefined,
    );
    item.tooltip = `${row.label}\nClick to go to the point just after this event.`;
    item.contextValue = row.current ? 'currentEvent' : 'event';
    item.command = { command: 'rewind.seek', title: 'Go to This Event', arguments: [row.event] };
    return item;
  }
}

/** Creates the view, keeps the current event selected and the title saying where it is. */
export function createTimelineView(state: RewindSessionState): vscode.Disposable {
  const provider = new TimelineProvider(state);
  const view = vscode.window.createTreeView('rewind.timeline', { treeDataProvider: provider });
  const sub = state.onDidChange(() => {
    const s = state.snapshot;
    view.message = s?.error ? `Cannot read the timeline: ${s.error}` : '';
    view.description = !s ? '' : state.running ? 'running…' : `event ${s.event} / ${s.eventCount}`;
    revealSoon();
  });
  // Scrolls to the current event and selects it, when the view is shown.
  const revealCurrent = () => {
    const current = provider.currentRow();
    if (current && view.visible) void view.reveal(current, { select: true, focus: false });
  };
  // After the view has asked for its new rows (a reveal in the same tick as the change can
  // find the old ones).
  const revealSoon = () => setTimeout(revealCurrent, 0);
  const shown = view.onDidChangeVisibility((e) => {
    if (e.visible) revealSoon();
  });
  // "rewind: Show Timeline" on a view already open: nothing else would scroll to the current
  // event if an earlier reveal happened while the view was folded or resized.
  const reveal = vscode.commands.registerCommand('rewind.timeline.revealCurrent', revealSoon);
  return vscode.Disposable.from(view, sub, shown, reveal);
}
