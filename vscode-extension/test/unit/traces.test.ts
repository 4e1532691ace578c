import * as assert from 'assert';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { listTraces, parseTraceList, traceItem } from '../../src/traces';
import { rewindBinary } from './helpers';

describe('traces (the trace picker)', () => {
  it('lists what `rewind ls --json` reports, the latest first', async function () {
    this.timeout(30000);
    const rewind = rewindBinary();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-traces-'));
    const saved = process.env.REWIND_TRACE_DIR;
    process.env.REWIND_TRACE_DIR = dir;
    try {
      execFileSync(rewind, ['record', 'true'], { env: process.env });
      assert.throws(
        () => execFileSync(rewind, ['record', 'sh', '-c', 'exit 3'], { env: process.env }),
        (e: { status?: number }) => e.status === 3,  // rewind record exits with the program's status
      );
      const traces = await listTraces(rewind);
      assert.deepStrictEqual(traces.map((t) => t.name), ['sh-0', 'true-0']);
      assert.strictEqual(traces[0].latest, true);
      assert.strictEqual(traces[0].exitCode, 3);
      assert.strictEqual(traces[0].dir, path.join(dir, 'sh-0'));
      const item = traceItem(traces[0]);
      assert.strictEqual(item.label, 'sh-0');
      assert.match(item.description, /^latest · \d+ events · exit 3 · /);
      assert.strictEqual(item.detail, 'sh -c exit 3');
    } finally {
      process.env.REWIND_TRACE_DIR = saved;
      if (saved === undefined) delete process.env.REWIND_TRACE_DIR;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a program that prints no trace list with a one-line reason', async () => {
    assert.throws(() => parseTraceList('NAME RECORDED'), /did not print JSON/);
    assert.throws(() => parseTraceList('{}'), /did not print a list/);
    await assert.rejects(listTraces('/bin/false'), Error);
  });

  it('shows partial and unreadable traces for what they are', () => {
    assert.deepStrictEqual(traceItem({ name: 'a-0', dir: '/t/a-0', events: null, exitCode: null, command: ['a'] }), {
      label: 'a-0', description: 'partial', detail: 'a',
    });
    assert.strictEqual(traceItem({ name: 'b', dir: '/t/b', error: 'bad version' }).description, 'unreadable');
  });
});
