// The "Python/R Stack" view in Run and Debug, shown when the session's interpreterFrames is
// "separate" (the Call Stack then stays native): the script's frames from
// `rewind/interpreterStack`, each with its locals; clicking a frame opens its file at the line.
import * as vscode from 'vscode';
import { InterpreterFrameRow, interpreterRows } from './interpreterStackModel';
import { RewindSessionState } from './sessionState';

// `id` is stable across refreshes of one stop (frame index and name; a variable's path), so
// VS Code keeps what the user expanded when the view reloads.
type Node =
  | { kind: 'frame'; id: string; row: InterpreterFrameRow }
  | { kind: 'variable'; id: string; name: string; value: string; ref: number }
  | { kind: 'note'; text: string };

/** Tree data for the view: frames, and their locals as children. */
class InterpreterStackProvider implements vscode.TreeDataProvider<Node> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly state: RewindSessionState) {
    state.onDidChange(() => this.changed.fire());
  }

  async getChildren(node?: Node): Promise<Node[]> {
    const session = this.state.activeSession();
    if (!session || this.state.running) return [];
    try {
      if (!node) {
        const body = await session.customRequest('rewind/interpreterStack');
        const rows = interpreterRows(body);
        if (!rows.length) return [{ kind: 'note', text: 'No Python or R frames in this thread.' }];
        return rows.map((row, i) => ({ kind: 'frame', id: `${session.id}/${i}/${row.label}`, row }));
      }
      const ref = node.kind === 'frame' ? node.row.variablesReference : node.kind === 'variable' ? node.ref : 0;
      if (!ref) return [];
      const vars = await session.customRequest('variables', { variablesReference: ref });
      return (vars.variables ?? []).map((v: { name: string; value: string; variablesReference?: number }) => ({
        kind: 'variable', id: `${node.kind === 'note' ? '' : node.id}/${v.name}`, name: v.name, value: v.value,
        ref: v.variablesReference ?? 0,
      }));
    } catch (e) {
      return [{ kind: 'note', text: `Cannot read the script's frames: ${(e as Error).message}` }];
    }
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'note') return new vscode.TreeItem(node.text);
    if (node.kind === 'variable') {
      const item = new vscode.TreeItem(
        node.name,
        node.ref ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
      );
      item.id = node.id;
      item.description = node.value;
      item.tooltip = `${node.name} = ${node.value}`;
      return item;
    }
    const { row } = node;
    const item = new vscode.TreeItem(
      row.label,
      row.variablesReference ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = node.id;
    item.description = row.description;
    item.iconPath = new vscode.ThemeIcon('debug-stackframe-dot');
    if (row.path) {
      const line = Math.max(0, row.line - 1);
      item.command = {
        command: 'vscode.open',
        title: 'Open',
        arguments: [vscode.Uri.file(row.path), { selection: new vscode.Range(line, 0, line, 0), preview: true }],
      };
    }
    return item;
  }
}

/** Creates the view and shows it (context key rewind.interpreterStackVisible) for sessions
 *  launched with "interpreterFrames": "separate". */
export function createInterpreterStackView(state: RewindSessionState): vscode.Disposable {
  const view = vscode.window.createTreeView('rewind.interpreterStack', {
    treeDataProvider: new InterpreterStackProvider(state),
  });
  const sub = vscode.debug.onDidChangeActiveDebugSession((s) => {
    const separate = s?.type === 'rewind' && s.configuration.interpreterFrames === 'separate';
    void vscode.commands.executeCommand('setContext', 'rewind.interpreterStackVisible', separate);
  });
  return vscode.Disposable.from(view, sub);
}
