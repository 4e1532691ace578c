// The "rewind Timeline" view in the Run and Debug side bar: the recorded events around the
// current point (syscalls, signals, thread switches, exits), the current one highlighted;
// clicking an event goes there (`rewind/seek`).
import * as vscode from 'vscode';
import { RewindSessionState } from './sessionState';
import {
  isTimelineGroup, TimelineGroup, TimelineNode, TimelineRow, timelineNodes, timelineRows,
} from './timelineModel';

/** Whether the Timeline lists rewind's own events (rewind.timeline.showRewindEvents). */
function showRewindEvents(): boolean {
  return vscode.workspace.getConfiguration('rewind').get<boolean>('timeline.showRewindEvents') ?? false;
}

/** The tree data behind the Timeline view: event rows, runs of the dynamic loader's events
 *  folded into a group, rewind's own events left out unless the setting shows them. */
export class TimelineProvider implements vscode.TreeDataProvider<TimelineNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private nodes: TimelineNode[] = [];
  private parents = new Map<TimelineRow, TimelineGroup>();

  constructor(private readonly state: RewindSessionState) {
    const update = () => {
      const s = state.snapshot;
      const rows = s?.timeline ? timelineRows(s.timeline, s.checkpoints) : [];
      this.nodes = timelineNodes(rows, showRewindEvents());
      this.parents = new Map();
      for (const n of this.nodes) if (isTimelineGroup(n)) for (const r of n.rows) this.parents.set(r, n);
      this.changed.fire();
    };
    state.onDidChange(update);
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('rewind.timeline.showRewindEvents')) update();
    });
  }

  /** The row of the current event, if it is in the listed window. */
  currentRow(): TimelineRow | undefined {
    for (const n of this.nodes) {
      if (!isTimelineGroup(n)) {
        if (n.current) return n;
      } else if (n.current) {
        return n.rows.find((r) => r.current);
      }
    }
    return undefined;
  }

  getChildren(element?: TimelineNode): TimelineNode[] {
    if (!element) return this.nodes;
    return isTimelineGroup(element) ? element.rows : [];
  }

  getParent(node: TimelineNode): TimelineGroup | undefined {
    return isTimelineGroup(node) ? undefined : this.parents.get(node);
  }

  getTreeItem(node: TimelineNode): vscode.TreeItem {
    if (isTimelineGroup(node)) {
      const item = new vscode.TreeItem(node.label, node.current
        ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `loader-${node.rows[0].event}`;
      item.description = node.description;
      item.iconPath = new vscode.ThemeIcon('package');
      item.tooltip = `${node.rows.length} events of the dynamic loader (ld.so): loading the program's libraries.`;
      item.contextValue = 'loaderEvents';
      return item;
    }
    const row = node;
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
