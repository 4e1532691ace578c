// The byte code view of a Python or R frame, from rewind's `rewind/interpreterCode` response
// (docs/dap.md): which frame a command names, the read-only document's name, and the line of
// the frame's current instruction. Pure; interpreterCode.ts opens the document.

/** A `rewind/interpreterCode` response body (the parts the view uses). */
export interface InterpreterCodeBody {
  function: string;
  format?: string;
  text: string;
  currentOffset?: number;
  note?: string;
}

/**
 * The frame a command was given: VS Code passes the call stack's element (an object with a
 * `frameId` in recent versions); anything else names none, and the selected frame is used.
 */
export function frameIdOf(arg: unknown): number | undefined {
  if (arg && typeof arg === 'object' && 'frameId' in arg) {
    const id = (arg as { frameId: unknown }).frameId;
    if (typeof id === 'number' && Number.isInteger(id)) return id;
  }
  return undefined;
}

/** The document's file name: "accumulate (R byte code version 12).txt". */
export function codeDocumentName(body: InterpreterCodeBody): string {
  const what = body.format ? ` (${body.format})` : '';
  return `${body.function}${what}.txt`.replace(/[/\\]/g, '_');
}

/** The 0-based line of the listing that marks the current instruction ("=>"), if any. */
export function currentLine(body: InterpreterCodeBody): number | undefined {
  if (body.currentOffset === undefined) return undefined;
  const i = body.text.split('\n').findIndex((l) => l.startsWith('=>'));
  return i >= 0 ? i : undefined;
}
