import * as assert from 'assert';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { adapterFor } from '../../src/adapterDescriptor';
import { findRewind, isExecutableFile } from '../../src/adapterLocation';
import { rewindBinary } from './helpers';

describe('findRewind (where the adapter factory finds rewind)', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rewind-ext-'));
    for (const d of ['ext/bin', 'path1', 'path2']) fs.mkdirSync(path.join(dir, d), { recursive: true });
    for (const f of ['ext/bin/rewind', 'path2/rewind', 'custom']) {
      fs.writeFileSync(path.join(dir, f), '#!/bin/sh\n');
      fs.chmodSync(path.join(dir, f), 0o755);
    }
    fs.writeFileSync(path.join(dir, 'path1/rewind'), 'not executable');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('uses rewind.path when it is set', () => {
    assert.deepStrictEqual(findRewind(path.join(dir, 'custom'), path.join(dir, 'ext'), ''), { path: path.join(dir, 'custom') });
  });
  it('says how to fix a rewind.path that is not a program', () => {
    const r = findRewind(path.join(dir, 'path1/rewind'), path.join(dir, 'ext'), '');
    assert.ok('error' in r && /rewind\.path is set to .*not an executable file: fix the setting/.test(r.error));
  });
  it('prefers the bundled copy, then PATH (skipping what cannot run)', () => {
    assert.deepStrictEqual(findRewind('', path.join(dir, 'ext'), '/nowhere'), { path: path.join(dir, 'ext/bin/rewind') });
    const env = `${path.join(dir, 'path1')}:${path.join(dir, 'path2')}`;
    assert.deepStrictEqual(findRewind(undefined, path.join(dir, 'none'), env), { path: path.join(dir, 'path2/rewind') });
  });
  it('says how to install it when it is nowhere', () => {
    const r = findRewind(undefined, path.join(dir, 'none'), path.join(dir, 'path1'));
    assert.ok('error' in r && /rewind was not found: set "rewind.path"/.test(r.error));
    assert.strictEqual(isExecutableFile(dir), false, 'a directory is not a program');
  });
});

describe('adapterFor (the adapter factory)', () => {
  it('launch runs `rewind dap`; attach connects to the server', () => {
    assert.deepStrictEqual(adapterFor({ request: 'launch' }, { path: '/opt/rewind' }), {
      kind: 'executable', command: '/opt/rewind', args: ['dap'],
    });
    assert.deepStrictEqual(adapterFor({ request: 'attach', port: 4711 }, { error: 'x' }), {
      kind: 'server', host: '127.0.0.1', port: 4711,
    });
    assert.deepStrictEqual(adapterFor({ request: 'attach', host: 'h', port: 9 }, { error: 'x' }), {
      kind: 'server', host: 'h', port: 9,
    });
    assert.deepStrictEqual(adapterFor({ request: 'launch' }, { error: 'rewind was not found' }), {
      kind: 'error', message: 'rewind was not found',
    });
    assert.strictEqual(adapterFor({ request: 'attach', port: 'x' }, { error: '' }).kind, 'error');
  });

  it('the command it gives starts a real adapter that offers reverse execution', async function () {
    this.timeout(20000);
    const d = adapterFor({ request: 'launch' }, findRewind(rewindBinary(), '/nonexistent', ''));
    assert.strictEqual(d.kind, 'executable');
    if (d.kind !== 'executable') return;
    const child = spawn(d.command, d.args, { stdio: ['pipe', 'pipe', 'inherit'] });
    const body = JSON.stringify({ seq: 1, type: 'request', command: 'initialize', arguments: { adapterID: 'rewind' } });
    child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const reply = await new Promise<Record<string, any>>((resolve, reject) => {
      let buf = Buffer.alloc(0);
      child.stdout.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        const text = buf.toString('utf8');
        const m = /Content-Length: (\d+)\r\n\r\n/.exec(text);
        if (!m) return;
        const start = m.index + m[0].length;
        if (buf.length >= start + Number(m[1])) resolve(JSON.parse(buf.subarray(start, start + Number(m[1])).toString('utf8')));
      });
      child.on('exit', (code) => reject(new Error(`rewind dap exited with ${code}`)));
    });
    child.kill();
    assert.strictEqual(reply.command, 'initialize');
    assert.strictEqual(reply.success, true);
    assert.strictEqual(reply.body.supportsStepBack, true);
  });
});
