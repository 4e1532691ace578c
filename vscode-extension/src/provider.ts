// The DebugConfigurationProvider for "rewind": initial configurations for a new launch.json,
// and defaults, checks and pickers before a session starts (configuration.ts holds the rules).
import * as vscode from 'vscode';
import { isExecutableFile } from './adapterLocation';
import { RewindConfiguration, resolveConfiguration } from './configuration';
import { pickProgram, pickTrace } from './pickers';

/** Resolves rewind debug configurations (VS Code's DebugConfigurationProvider). */
export class RewindConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly extensionDir: string) {}

  /** The configurations a new launch.json starts with. */
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [
      {
        type: 'rewind',
        request: 'launch',
        name: 'rewind: Record & Debug',
        program: '${workspaceFolder}/a.out',
        args: [],
        cwd: '${workspaceFolder}',
      },
      { type: 'rewind', request: 'launch', name: 'rewind: Replay trace', mode: 'replay' },
    ];
  }

  /** Fills defaults and asks for what is missing; undefined cancels the launch. */
  async resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    const active = vscode.window.activeTextEditor?.document.uri;
    const resolved = await resolveConfiguration(config as RewindConfiguration, {
      activeFile: active?.scheme === 'file' ? active.fsPath : undefined,
      isExecutable: isExecutableFile,
      workspaceFolder: folder?.uri.fsPath ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
      pickProgram,
      pickTrace: () => pickTrace(this.extensionDir),
    });
    if (resolved.kind === 'error') {
      void vscode.window.showErrorMessage(`rewind: ${resolved.message}`);
      return undefined;
    }
    if (resolved.kind === 'cancel') return undefined;
    return resolved.config as vscode.DebugConfiguration;
  }
}
