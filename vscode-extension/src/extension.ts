// The rewind extension's entry point: registers the "rewind" debug type's configuration
// provider and adapter factory, the commands, the Timeline and History views, the byte code
// view of script frames, the status bar item, and the offer to record a rebuilt program again.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { RewindAdapterFactory } from './factory';
import { registerInterpreterCode } from './interpreterCode';
import { createInterpreterStackView } from './interpreterStackView';
import { createQueryView } from './queryView';
import { RewindConfigurationProvider } from './provider';
import { watchProgramChanges } from './recordAgain';
import { RewindSessionState } from './sessionState';
import { createEventStatusItem } from './statusBar';
import { createTimelineView } from './timelineView';

/** Called by VS Code when a rewind session or command is first needed. */
export function activate(context: vscode.ExtensionContext): void {
  const dir = context.extensionPath;
  const state = new RewindSessionState();
  context.subscriptions.push(
    state,
    vscode.debug.registerDebugConfigurationProvider('rewind', new RewindConfigurationProvider(dir)),
    vscode.debug.registerDebugAdapterDescriptorFactory('rewind', new RewindAdapterFactory(dir)),
    createTimelineView(state),
    createInterpreterStackView(state),
    createQueryView(state),
    createEventStatusItem(state),
    ...registerCommands(dir, state),
    ...registerInterpreterCode(),
    watchProgramChanges(),
    vscode.debug.onDidStartDebugSession((s) => {
      if (s.type === 'rewind') void vscode.commands.executeCommand('setContext', 'rewind.timelineVisible', true);
    }),
  );
}

/** Nothing to clean up beyond the subscriptions. */
export function deactivate(): void {}
