// The two pickers resolving a configuration may show: a recorded trace, a program to record.
import * as path from 'path';
import * as vscode from 'vscode';
import { findRewind, isExecutableFile } from './adapterLocation';
import { programForFile } from './configuration';
import { listTraces, traceItem } from './traces';

/** Where the rewind program is for this window (rewind.path, bundled, PATH). */
export function rewindLocation(extensionDir: string) {
  const setting = vscode.workspace.getConfiguration('rewind').get<string>('path');
  return findRewind(setting, extensionDir, process.env.PATH);
}

/**
 * Lets the user pick one of the traces `rewind ls --json` lists (the latest first); returns
 * its directory, or undefined when cancelled or when there is none (with a message saying so).
 */
export async function pickTrace(extensionDir: string): Promise<string | undefined> {
  const where = rewindLocation(extensionDir);
  if ('error' in where) {
    void vscode.window.showErrorMessage(where.error);
    return undefined;
  }
  let traces;
  try {
    traces = await listTraces(where.path);
  } catch (e) {
    void vscode.window.showErrorMessage(`rewind: cannot list traces: ${(e as Error).message}`);
    return undefined;
  }
  if (!traces.length) {
    void vscode.window.showInformationMessage(
      'rewind: no recorded traces yet. Record one with "rewind: Record & Debug Current Program" ' +
        'or `rewind record PROGRAM` in a terminal.',
    );
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    traces.map((t) => ({ ...traceItem(t), dir: t.dir })),
    { title: 'rewind: Open Trace', placeHolder: 'The trace to replay', matchOnDetail: true },
  );
  return picked?.dir;
}

/**
 * Lets the user pick a program to record: the active file when it can run (an executable, a
 * .py or .R script) comes first, then the workspace's executable files, then "Browse…".
 */
export async function pickProgram(): Promise<{ program: string; args?: string[] } | undefined> {
  type Item = vscode.QuickPickItem & { program?: string; args?: string[]; browse?: boolean };
  const items: Item[] = [];
  const active = vscode.window.activeTextEditor?.document.uri;
  const stem = active ? path.parse(active.fsPath).name : undefined;
  if (active?.scheme === 'file') {
    const p = programForFile(active.fsPath, isExecutableFile);
    if (p) items.push({ label: path.basename(active.fsPath), description: 'active editor', ...p });
  }
  const files = await vscode.workspace.findFiles('**/*', '{**/node_modules/**,**/.git/**}', 5000);
  const executables = files
    .map((u) => u.fsPath)
    .filter((f) => isExecutableFile(f) && !/\.(sh|py|pl|rb|js)$/.test(f))
    .sort((a, b) => Number(path.parse(b).name === stem) - Number(path.parse(a).name === stem) ||
      a.localeCompare(b));
  for (const f of executables)
    items.push({ label: path.basename(f), description: vscode.workspace.asRelativePath(f), program: f });
  items.push({ label: '$(folder-opened) Browse…', browse: true });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'rewind: Record & Debug',
    placeHolder: 'The program to record',
  });
  if (!picked) return undefined;
  if (picked.browse) {
    const uri = await vscode.window.showOpenDialog({ canSelectMany: false, openLabel: 'Record' });
    return uri?.[0] ? { program: uri[0].fsPath } : undefined;
  }
  return { program: picked.program as string, args: picked.args };
}
