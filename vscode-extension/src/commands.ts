// The palette commands: Record & Debug Current Program, Open Trace…, Go to Event…, Add
// Checkpoint, Show Timeline, Record Again, the Timeline view's seek and refresh, and the reverse steps DAP
// has no request for (Step Into Backwards, Step Out Backwards: buttons on the debug toolbar).
import * as vscode from 'vscode';
import { isExecutableFile } from './adapterLocation';
import { programForFile } from './configuration';
import { pickProgram, pickTrace } from './pickers';
import { recordAgain } from './recordAgain';
import { RewindSessionState } from './sessionState';
import { parseEventNumber } from './timelineModel';

function workspaceFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
}

/** The focused rewind session, or a message saying there is none. */
function requireSession(state: RewindSessionState): vscode.DebugSession | undefined {
  const s = state.activeSession();
  if (!s) void vscode.window.showWarningMessage('rewind: no rewind debug session is in focus.');
  return s;
}

async function seek(state: RewindSessionState, event: number): Promise<void> {
  const session = requireSession(state);
  if (!session) return;
  try {
    await session.customRequest('rewind/seek', { event });
  } catch (e) {
    void vscode.window.showErrorMessage(`rewind: cannot go to event ${event}: ${(e as Error).message}`);
  }
}

/** The thread selected in the Call Stack view when it is `session`'s (undefined: the adapter
 *  takes the thread that stopped). */
function selectedThread(session: vscode.DebugSession): number | undefined {
  const item = vscode.debug.activeStackItem;
  return item && item.session.id === session.id ? item.threadId : undefined;
}

/** Sends one of rewind's reverse steps (docs/dap.md: rewind/stepInBack, rewind/stepOutBack). */
async function reverseStep(state: RewindSessionState, command: string): Promise<void> {
  const session = requireSession(state);
  if (!session) return;
  const threadId = selectedThread(session);
  try {
    await session.customRequest(command, threadId === undefined ? {} : { threadId });
  } catch (e) {
    void vscode.window.showErrorMessage(`rewind: ${(e as Error).message}`);
  }
}

/** Registers every command; `extensionDir` locates a bundled rewind. */
export function registerCommands(extensionDir: string, state: RewindSessionState): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('rewind.recordAndDebug', async () => {
      const active = vscode.window.activeTextEditor?.document.uri;
      const fromFile = active?.scheme === 'file' ? programForFile(active.fsPath, isExecutableFile) : undefined;
      const picked = fromFile ?? (await pickProgram());
      if (!picked) return;
      const folder = workspaceFolder();
      await vscode.debug.startDebugging(folder, {
        type: 'rewind',
        request: 'launch',
        name: 'rewind: Record & Debug',
        program: picked.program,
        args: picked.args ?? [],
        cwd: folder?.uri.fsPath,
      });
    }),
    vscode.commands.registerCommand('rewind.openTrace', async () => {
      const trace = await pickTrace(extensionDir);
      if (!trace) return;
      await vscode.debug.startDebugging(workspaceFolder(), {
        type: 'rewind',
        request: 'launch',
        name: 'rewind: Replay trace',
        mode: 'replay',
        trace,
      });
    }),
    vscode.commands.registerCommand('rewind.goToEvent', async (event?: number) => {
      if (typeof event === 'number') return seek(state, event);
      const session = requireSession(state);
      if (!session) return;
      const when = state.snapshot?.session.id === session.id
        ? state.snapshot
        : await session.customRequest('rewind/when');
      const eventCount: number = when.eventCount;
      const text = await vscode.window.showInputBox({
        title: 'rewind: Go to Event',
        prompt: `An event number, 1 to ${eventCount}: the replay goes to the point just after it.`,
        value: String(when.event),
        validateInput: (t) => {
          const n = parseEventNumber(t, eventCount);
          return typeof n === 'string' ? n : undefined;
        },
      });
      if (text === undefined) return;
      const n = parseEventNumber(text, eventCount);
      if (typeof n === 'number') await seek(state, n);
    }),
    vscode.commands.registerCommand('rewind.seek', (event: number) => seek(state, event)),
    vscode.commands.registerCommand('rewind.addCheckpoint', async () => {
      const session = requireSession(state);
      if (!session) return;
      try {
        const cp = await session.customRequest('rewind/checkpoints', { action: 'add' });
        void vscode.window.showInformationMessage(`rewind: checkpoint ${cp.id} at event ${cp.event}.`);
        await state.refresh(session);
      } catch (e) {
        void vscode.window.showErrorMessage(`rewind: no checkpoint here: ${(e as Error).message}`);
      }
    }),
    vscode.commands.registerCommand('rewind.showTimeline', async () => {
      await vscode.commands.executeCommand('setContext', 'rewind.timelineVisible', true);
      await vscode.commands.executeCommand('rewind.timeline.focus');
      await vscode.commands.executeCommand('rewind.timeline.revealCurrent');
    }),
    vscode.commands.registerCommand('rewind.timeline.refresh', () => state.refresh()),
    vscode.commands.registerCommand('rewind.recordAgain', async () => {
      const session = requireSession(state);
      if (session) await recordAgain(session);
    }),
    vscode.commands.registerCommand('rewind.stepInBack', () => reverseStep(state, 'rewind/stepInBack')),
    vscode.commands.registerCommand('rewind.stepOutBack', () => reverseStep(state, 'rewind/stepOutBack')),
  ];
}
