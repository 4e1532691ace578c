// The "rewind History" view in Run and Debug and the commands that fill it: the history of a
// variable (Variables view context menu, or the palette), the calls of a function (palette,
// also offered as a quick pick) and a logpoint over the whole recording (the editor's line
// number context menu). Each query runs in the adapter on a second replay, with progress
// (cancellable) while it runs, and does not move the session; clicking a row goes there
// (rewind/seek with the row's result).
import * as vscode from 'vscode';
import { callsResult, historyResult, logResult, QueryResult, QueryRow } from './queryModel';
import { RewindSessionState } from './sessionState';

/** How many results the view lists (the title says how many there are in all). */
const PAGE = 1000;

class QueryProvider implements vscode.TreeDataProvider<QueryRow> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  result: QueryResult | undefined;

  show(result: QueryResult): void {
    this.result = result;
    this.changed.fire();
  }

  getChildren(row?: QueryRow): QueryRow[] {
    return row || !this.result ? [] : this.result.rows;
  }

  getTreeItem(row: QueryRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.iconPath = new vscode.ThemeIcon(row.seek.change !== undefined ? 'edit'
      : row.seek.call !== undefined ? 'symbol-method' : 'debug-breakpoint-log');
    item.command = { command: 'rewind.query.goto', title: 'Go There', arguments: [row] };
    return item;
  }
}

/** What the Variables view's context menu passes to a command. */
type VariableArg = { variable?: { name: string; evaluateName?: string } };

/** The frame selected in the Call Stack view when it is `session`'s (undefined: the
 *  adapter takes the stopped thread's innermost). */
function selectedFrame(session: vscode.DebugSession): number | undefined {
  const item = vscode.debug.activeStackItem;
  return item && item.session.id === session.id && 'frameId' in item ? item.frameId : undefined;
}

/** Creates the view and registers the query commands. */
export function createQueryView(state: RewindSessionState): vscode.Disposable {
  const provider = new QueryProvider();
  const view = vscode.window.createTreeView('rewind.history', { treeDataProvider: provider });

  const session = (): vscode.DebugSession | undefined => {
    const s = state.activeSession();
    if (!s) void vscode.window.showWarningMessage('rewind: no rewind debug session is in focus.');
    return s;
  };
  // Runs `command` and shows its answer (made rows by `toResult`) in the view.
  const query = async (command: string, args: object, toResult: (body: any) => QueryResult,
    what: string): Promise<QueryResult | undefined> => {
    const s = session();
    if (!s) return undefined;
    try {
      const result = toResult(await s.customRequest(command, { ...args, count: PAGE }));
      provider.show(result);
      view.title = 'rewind History';
      view.description = result.title;
      view.message = result.note ?? '';
      await vscode.commands.executeCommand('setContext', 'rewind.historyVisible', true);
      await vscode.commands.executeCommand('rewind.history.focus');
      return result;
    } catch (e) {
      void vscode.window.showErrorMessage(`rewind: ${what}: ${(e as Error).message}`);
      return undefined;
    }
  };
  const history = async (expression: string) => {
    const s = session();
    if (!s) return;
    const frameId = selectedFrame(s);
    await query('rewind/history', frameId === undefined ? { expression } : { expression, frameId },
      historyResult, `no history of ${expression}`);
  };
  const toChange = async (which: string, arg?: VariableArg) => {
    const s = session();
    const v = arg?.variable;
    if (!s || !v) return;
    const frameId = selectedFrame(s);
    const expression = v.evaluateName || v.name;
    try {
      await s.customRequest(`rewind/${which}`, frameId === undefined ? { expression } : { expression, frameId });
    } catch (e) {
      void vscode.window.showErrorMessage(`rewind: ${(e as Error).message}`);
    }
  };
  const goTo = async (row: QueryRow) => {
    const s = session();
    if (!s) return;
    try {
      await s.customRequest('rewind/seek', row.seek);
    } catch (e) {
      void vscode.window.showErrorMessage(`rewind: cannot go there: ${(e as Error).message}`);
    }
  };

  // The results belong to the session that answered them (rewind/seek names them by their
  // index in its last answer): the view empties and hides when that session ends.
  let owner: string | undefined;
  const ended = vscode.debug.onDidTerminateDebugSession((s) => {
    if (s.id !== owner) return;
    owner = undefined;
    provider.show({ title: '', rows: [] });
    view.description = '';
    view.message = '';
    void vscode.commands.executeCommand('setContext', 'rewind.historyVisible', false);
  });
  const shown = provider.onDidChangeTreeData(() => {
    if (provider.result?.rows.length || provider.result?.title) owner = state.activeSession()?.id;
  });

  return vscode.Disposable.from(
    view,
    ended,
    shown,
    vscode.commands.registerCommand('rewind.query.goto', goTo),
    // From the Variables view's context menu: the variable's expression in the selected frame.
    vscode.commands.registerCommand('rewind.showHistory', async (arg?: VariableArg) => {
      const v = arg?.variable;
      if (v) return history(v.evaluateName || v.name);
      const expression = await vscode.window.showInputBox({
        title: 'rewind: History of…',
        prompt: 'A C or C++ lvalue (a variable, p->field, a[3]) in the selected frame: every change of its value over the recording',
      });
      if (expression) await history(expression);
    }),
    // Previous and next change of a variable: the session moves (reverse-continue and
    // continue to its writes, whatever else would stop them).
    vscode.commands.registerCommand('rewind.previousChange', (arg?: VariableArg) => toChange('previousChange', arg)),
    vscode.commands.registerCommand('rewind.nextChange', (arg?: VariableArg) => toChange('nextChange', arg)),
    vscode.commands.registerCommand('rewind.showCalls', async () => {
      const fn = await vscode.window.showInputBox({
        title: 'rewind: Calls of…',
        prompt: 'A function name: every call of it over the recording, with its arguments and result',
      });
      if (!fn) return;
      const result = await query('rewind/calls', { function: fn }, callsResult, `no calls of ${fn}`);
      if (!result?.rows.length) return;
      const picked = await vscode.window.showQuickPick(
        result.rows.map((row) => ({ label: row.label, description: row.description, row })),
        { title: result.title, placeHolder: 'A call to go to (the History view lists them too)' },
      );
      if (picked) await goTo(picked.row);
    }),
    // From the editor's line number context menu.
    vscode.commands.registerCommand('rewind.logOverRecording', async (arg?: { lineNumber?: number; uri?: vscode.Uri }) => {
      const editor = vscode.window.activeTextEditor;
      const uri = arg?.uri ?? editor?.document.uri;
      const line = arg?.lineNumber ?? (editor ? editor.selection.active.line + 1 : undefined);
      if (!uri || !line) return;
      const message = await vscode.window.showInputBox({
        title: `rewind: Log over the Recording at line ${line}`,
        prompt: 'The message of a logpoint run at every hit of this line over the whole recording: {expr} is replaced by its value',
      });
      if (!message) return;
      const result = await query('rewind/logAll', { source: { path: uri.fsPath }, line, logMessage: message },
        logResult, `no log at line ${line}`);
      if (result) {
        // And in the Debug Console, as a logpoint's lines are, each with its event.
        const lines = result.rows.map((r) => `${r.description.split(' · ')[0]}  ${r.label}`);
        vscode.debug.activeDebugConsole.appendLine(`${result.title}\n${lines.join('\n')}`);
      }
    }),
  );
}
