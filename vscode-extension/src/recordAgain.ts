// "Record Again": a Record & Debug session replays the recording it made, even after the
// program was rebuilt. rewind says so on Restart (the custom event rewind/programChanged,
// docs/dap.md); this offers to record the program again, and the command does it any time.
import * as vscode from 'vscode';

/** Stops `session` and starts the same Record & Debug configuration again: a new recording.
 *  Says why when `session` replays a trace instead (nothing to record). */
export async function recordAgain(session: vscode.DebugSession): Promise<void> {
  const config = { ...session.configuration };
  if (config.request !== 'launch' || (config.mode ?? 'record') !== 'record') {
    void vscode.window.showWarningMessage(
      'rewind: Record Again needs a Record & Debug session; this one replays a recorded trace.');
    return;
  }
  // The new session starts once the old one has ended (stopDebugging resolves earlier), so
  // that the two never run side by side.
  const ended = new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const sub = vscode.debug.onDidTerminateDebugSession((s) => {
      if (s.id === session.id) done();
    });
    const timer = setTimeout(done, 10000);
  });
  await vscode.debug.stopDebugging(session);
  await ended;
  await vscode.debug.startDebugging(session.workspaceFolder, config);
}

/** Offers "Record Again" when a rewind session reports that its program changed since it
 *  was recorded. */
export function watchProgramChanges(): vscode.Disposable {
  return vscode.debug.onDidReceiveDebugSessionCustomEvent(async (e) => {
    if (e.session.type !== 'rewind' || e.event !== 'rewind/programChanged') return;
    const program = typeof e.body?.program === 'string' ? e.body.program : 'the program';
    const choice = await vscode.window.showWarningMessage(
      `rewind: ${program} has changed since it was recorded; this session replays the old build.`,
      'Record Again');
    if (choice === 'Record Again') await recordAgain(e.session);
  });
}
