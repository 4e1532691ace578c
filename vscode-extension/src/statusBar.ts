// The status bar item "event 4711 / 120000" while a rewind session is in focus ("◀ reverse ·
// event 4711 / 120000" after a move backwards); clicking it runs "rewind: Go to Event…".
import * as vscode from 'vscode';
import { RewindSessionState } from './sessionState';
import { eventStatusText } from './timelineModel';

/** Creates the item and keeps it in step with `state`. */
export function createEventStatusItem(state: RewindSessionState): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('rewind.event', vscode.StatusBarAlignment.Left, 10);
  item.name = 'rewind: current event';
  item.command = 'rewind.goToEvent';
  const sub = state.onDidChange(() => {
    const s = state.snapshot;
    if (!s) {
      item.hide();
      return;
    }
    item.text = `$(history) ${eventStatusText(s.event, s.eventCount, state.direction === 'backward')}`;
    item.tooltip = state.running
      ? 'rewind: the replay is running'
      : 'rewind: the last event replayed, of the recording\'s events. Click to go to another event.';
    item.show();
  });
  return vscode.Disposable.from(item, sub);
}
