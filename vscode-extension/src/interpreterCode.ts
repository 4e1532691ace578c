// "Show Byte Code" on a Python or R frame of the call stack: asks rewind for the byte code
// the frame runs (`rewind/interpreterCode`) and opens it as a read-only document at the
// frame's current instruction.
import * as vscode from 'vscode';
import { codeDocumentName, currentLine, frameIdOf, InterpreterCodeBody } from './interpreterCodeModel';

/** The scheme of the byte code documents. */
export const CODE_SCHEME = 'rewind-code';

/** Serves the documents' text, kept per document until the window closes. */
class CodeDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
  }
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ??
      'This byte code view is gone: open it again from a Python or R frame of the call stack.';
  }
}

/** The frame selected in the call stack of `session`, if any. */
function selectedFrame(session: vscode.DebugSession): number | undefined {
  const item = vscode.debug.activeStackItem;
  return item && item.session.id === session.id && 'frameId' in item ? item.frameId : undefined;
}

/** Registers the document provider and the rewind.showInterpreterCode command. */
export function registerInterpreterCode(): vscode.Disposable[] {
  const docs = new CodeDocuments();
  let opened = 0;
  return [
    vscode.workspace.registerTextDocumentContentProvider(CODE_SCHEME, docs),
    vscode.commands.registerCommand('rewind.showInterpreterCode', async (arg?: unknown) => {
      const session = vscode.debug.activeDebugSession;
      if (!session || session.type !== 'rewind') {
        void vscode.window.showErrorMessage('rewind: no rewind session is stopped.');
        return;
      }
      const frameId = frameIdOf(arg) ?? selectedFrame(session);
      if (frameId === undefined) {
        void vscode.window.showInformationMessage('rewind: select a Python or R frame in the Call Stack first.');
        return;
      }
      let body: InterpreterCodeBody;
      try {
        body = await session.customRequest('rewind/interpreterCode', { frameId });
      } catch (e) {
        void vscode.window.showErrorMessage(`rewind: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      const uri = vscode.Uri.from({ scheme: CODE_SCHEME, path: `/${codeDocumentName(body)}`, query: `${++opened}` });
      docs.set(uri, body.text);
      const doc = await vscode.workspace.openTextDocument(uri);
      const editor = await vscode.window.showTextDocument(doc, { preview: true });
      const line = currentLine(body);
      if (line !== undefined) {
        const at = new vscode.Position(line, 0);
        editor.selection = new vscode.Selection(at, at);
        editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
      }
    }),
  ];
}
