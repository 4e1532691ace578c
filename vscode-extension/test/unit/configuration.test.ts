import * as assert from 'assert';
import { initialConfigurations, ResolveContext, resolveConfiguration, programForFile } from '../../src/configuration';

function ctx(over: Partial<ResolveContext> = {}): ResolveContext & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    isExecutable: (f) => f.endsWith('/app'),
    workspaceFolder: '/ws',
    pickProgram: async () => {
      asked.push('program');
      return { program: '/ws/picked' };
    },
    pickTrace: async () => {
      asked.push('trace');
      return '/traces/app-3';
    },
    ...over,
  };
}

describe('resolveConfiguration (the configuration provider)', () => {
  it('F5 without launch.json records the active executable', async () => {
    const r = await resolveConfiguration({}, ctx({ activeFile: '/ws/bin/app' }));
    assert.deepStrictEqual(r, {
      kind: 'start',
      config: {
        type: 'rewind', request: 'launch', name: 'rewind: Record & Debug',
        program: '/ws/bin/app', args: [], cwd: '/ws',
      },
    });
  });

  it('F5 on a Python script records python3 running it', async () => {
    const r = await resolveConfiguration({}, ctx({ activeFile: '/ws/job.py' }));
    assert.strictEqual(r.kind, 'start');
    if (r.kind === 'start') {
      assert.strictEqual(r.config.program, 'python3');
      assert.deepStrictEqual(r.config.args, ['/ws/job.py']);
    }
  });

  it('asks for the program when there is none, and cancels when the user does', async () => {
    const c = ctx({ activeFile: '/ws/main.c' });
    const r = await resolveConfiguration({}, c);
    assert.deepStrictEqual(c.asked, ['program']);
    assert.strictEqual(r.kind === 'start' && r.config.program, '/ws/picked');
    const cancelled = await resolveConfiguration(
      { type: 'rewind', request: 'launch', name: 'x' },
      ctx({ pickProgram: async () => undefined }),
    );
    assert.deepStrictEqual(cancelled, { kind: 'cancel' });
  });

  it('keeps what launch.json gives and adds defaults', async () => {
    const r = await resolveConfiguration(
      { type: 'rewind', request: 'launch', name: 'n', program: 'prog', args: ['-v'], env: { A: '1', B: null } },
      ctx({ workspaceFolder: undefined }),
    );
    assert.deepStrictEqual(r, {
      kind: 'start',
      config: { type: 'rewind', request: 'launch', name: 'n', program: 'prog', args: ['-v'], env: { A: '1', B: null } },
    });
  });

  it('replay without a trace shows the trace picker', async () => {
    const c = ctx();
    const r = await resolveConfiguration({ type: 'rewind', request: 'launch', name: 'r', mode: 'replay' }, c);
    assert.deepStrictEqual(c.asked, ['trace']);
    assert.strictEqual(r.kind === 'start' && r.config.trace, '/traces/app-3');
    const named = ctx();
    await resolveConfiguration({ type: 'rewind', request: 'launch', mode: 'replay', trace: 'app-1' }, named);
    assert.deepStrictEqual(named.asked, []);
    const none = await resolveConfiguration(
      { type: 'rewind', request: 'launch', mode: 'replay' },
      ctx({ pickTrace: async () => undefined }),
    );
    assert.deepStrictEqual(none, { kind: 'cancel' });
  });

  it('attach defaults the host and checks the port', async () => {
    const r = await resolveConfiguration({ type: 'rewind', request: 'attach', port: '4711' }, ctx());
    assert.deepStrictEqual(r, { kind: 'start', config: { type: 'rewind', request: 'attach', port: 4711, host: '127.0.0.1' } });
    for (const port of [undefined, 0, 70000, 'abc', 1.5]) {
      const bad = await resolveConfiguration({ type: 'rewind', request: 'attach', port }, ctx());
      assert.strictEqual(bad.kind, 'error', `port ${port}`);
    }
  });

  it('refuses malformed arguments with a message naming them', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ args: 'one two' }, /"args"/],
      [{ args: [1] }, /"args"/],
      [{ env: ['A=1'] }, /"env"/],
      [{ env: { A: 1 } }, /"env"/],
      [{ console: 'tty' }, /"console"/],
      [{ interpreterFrames: 'both' }, /"interpreterFrames"/],
      [{ mode: 'rewind' }, /"mode"/],
      [{ request: 'start' }, /"request"/],
    ];
    for (const [extra, re] of cases) {
      const r = await resolveConfiguration({ type: 'rewind', request: 'launch', program: 'p', ...extra }, ctx());
      assert.ok(r.kind === 'error' && re.test(r.message), JSON.stringify(extra) + ' -> ' + JSON.stringify(r));
    }
  });
});

describe('programForFile', () => {
  it('knows executables, Python and R scripts, and nothing else', () => {
    const exe = (f: string) => f === '/ws/app';
    assert.deepStrictEqual(programForFile('/ws/app', exe), { program: '/ws/app', args: [] });
    assert.deepStrictEqual(programForFile('/ws/a.R', exe), { program: 'Rscript', args: ['/ws/a.R'] });
    assert.strictEqual(programForFile('/ws/main.c', exe), undefined);
  });
  it('starts a new launch.json with the picked program, once each', () => {
    const [record, replay] = initialConfigurations({ program: '/ws/build/app', args: ['-v'] }, '/ws');
    assert.strictEqual(record.program, '${workspaceFolder}/build/app');
    assert.deepStrictEqual(record.args, ['-v']);
    assert.strictEqual(replay.mode, 'replay');
    assert.strictEqual(initialConfigurations({ program: '/usr/bin/ls' }, '/ws')[0].program, '/usr/bin/ls');
    assert.strictEqual(initialConfigurations({ program: '/wsx/app' }, '/ws')[0].program, '/wsx/app');
    // Nothing picked: no program, asked for at each launch (no a.out guessed).
    assert.ok(!('program' in initialConfigurations(undefined, '/ws')[0]));
    assert.strictEqual(initialConfigurations(undefined, '/ws').length, 2);
  });
});
