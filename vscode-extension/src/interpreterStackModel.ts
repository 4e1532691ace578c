// The "Python/R Stack" view's rows, from rewind's `rewind/interpreterStack` response
// (docs/dap.md): the script's frames, innermost first. Pure; interpreterStackView.ts draws it.
import * as path from 'path';

/** One frame of a `rewind/interpreterStack` response body. */
export interface InterpreterFrame {
  id: number;
  name: string;
  source?: { path?: string; name?: string };
  line?: number;
  language?: string;
  variablesReference?: number;
}

/** One frame row: "Pipeline.stage" with "pipeline.py:22" beside it. */
export interface InterpreterFrameRow {
  label: string;
  description: string;
  /** The script file to open at `line` when the row is clicked, if known. */
  path?: string;
  line: number;
  /** The locals' variablesReference; 0 when the frame has none. */
  variablesReference: number;
}

/** The rows for a response body `{interpreter, frames}`; none when the thread runs no script. */
export function interpreterRows(body: { frames?: InterpreterFrame[] }): InterpreterFrameRow[] {
  return (body.frames ?? []).map((f) => {
    const file = f.source?.path ?? f.source?.name;
    const line = f.line ?? 0;
    return {
      label: f.name,
      description: file ? `${path.basename(file)}${line ? `:${line}` : ''}` : f.language ?? '',
      path: f.source?.path,
      line,
      variablesReference: f.variablesReference ?? 0,
    };
  });
}
