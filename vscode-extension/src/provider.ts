// The DebugConfigurationProvider for "rewind": initial configurations for a new launch.json,
// and defaults, checks and pickers before a session starts (configuration.ts holds the rules).
import * as vscode from 'vscode';
import { isExecutableFile } from './adapterLocation';
import { initialConfigurations, RewindConfiguration, resolveConfiguration } from './configuration';
import { pickProgram, pickTrace } from './pickers';

/** Resolves rewind debug configurations (VS Code's DebugConfigurationProvider). */
export class RewindConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly extensionDir: string) {}

  /**
   * The configurations a new launch.json starts with (the only source of them: package.json
   * declares none, or VS Code would write each twice): the program to record is picked, as
   * for a launch without one.
   */
  async provideDebugConfigurations(folder?: vscode.WorkspaceFolder): Promise<vscode.DebugConfiguration[]> {
    const picked = await pickProgram();
    return initialConfigurations(picked, folder?.uri.fsPath) as vscode.DebugConfiguration[];
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
