// The DebugAdapterDescriptorFactory for "rewind": `rewind dap` for launch, a TCP connection to
// `rewind dap --listen` for attach (adapterDescriptor.ts decides).
import * as vscode from 'vscode';
import { adapterFor } from './adapterDescriptor';
import { RewindConfiguration } from './configuration';
import { rewindLocation } from './pickers';

/** Starts or connects to rewind's debug adapter for each rewind session. */
export class RewindAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly extensionDir: string) {}

  /** The adapter for `session`; throws (VS Code shows the message) when rewind is missing. */
  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.DebugAdapterDescriptor {
    const config = session.configuration as RewindConfiguration;
    const d = adapterFor(config, rewindLocation(this.extensionDir));
    if (d.kind === 'error') {
      void vscode.window
        .showErrorMessage(`rewind: ${d.message}`, 'Open Settings')
        .then((choice) => {
          if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', 'rewind.path');
        });
      throw new Error(d.message);
    }
    if (d.kind === 'server') return new vscode.DebugAdapterServer(d.port, d.host);
    return new vscode.DebugAdapterExecutable(d.command, d.args);
  }
}
