// package.json is what VS Code reads: its launch.json schema, snippets and commands must agree
// with the code.
import * as assert from 'assert';
import * as fs from 'fs';
import * as path from 'path';
import { initialConfigurations } from '../../src/configuration';

const root = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const dbg = pkg.contributes.debuggers[0];

describe('package.json', () => {
  it('every snippet and initial configuration uses only attributes the schema describes', () => {
    // The initial configurations come from the provider alone: declared here too, VS Code
    // wrote each of them twice into a new launch.json.
    assert.strictEqual(dbg.initialConfigurations, undefined);
    const configs = [...initialConfigurations({ program: '/w/a.out', args: ['-v'] }, '/w'),
      ...initialConfigurations(undefined, '/w'), ...dbg.configurationSnippets.map((s: any) => s.body)];
    for (const c of configs) {
      const props = dbg.configurationAttributes[c.request].properties;
      for (const key of Object.keys(c))
        if (!['type', 'request', 'name'].includes(key)) assert.ok(key in props, `${c.name}: ${key}`);
    }
  });
  it('every attribute has a description', () => {
    for (const req of ['launch', 'attach'])
      for (const [k, v] of Object.entries<any>(dbg.configurationAttributes[req].properties))
        assert.ok(v.description, `${req}.${k}`);
  });
  it('every contributed command is registered, and the reverse buttons have keys', () => {
    const src = ['commands.ts', 'queryView.ts', 'interpreterCode.ts']
      .map((f) => fs.readFileSync(path.join(root, 'src', f), 'utf8')).join('\n');
    for (const c of pkg.contributes.commands)
      assert.ok(src.includes(`registerCommand('${c.command}'`), c.command);
    const keys = pkg.contributes.keybindings.map((k: any) => k.command);
    assert.deepStrictEqual(keys.sort(), ['rewind.stepInBack', 'rewind.stepOutBack',
      'workbench.action.debug.reverseContinue', 'workbench.action.debug.stepBack']);
    // rewind's reverse steps are buttons on the debug toolbar of rewind sessions.
    const toolbar = pkg.contributes.menus['debug/toolBar'].map((m: any) => [m.command, m.when]);
    assert.deepStrictEqual(toolbar, [['rewind.stepInBack', "debugType == 'rewind'"],
      ['rewind.stepOutBack', "debugType == 'rewind'"]]);
  });
  it('offers the queries where a user looks for them', () => {
    const menus = pkg.contributes.menus;
    assert.deepStrictEqual(menus['debug/variables/context'].map((m: any) => m.command),
      ['rewind.showHistory', 'rewind.previousChange', 'rewind.nextChange']);
    assert.deepStrictEqual(menus['editor/lineNumber/context'].map((m: any) => m.command), ['rewind.logOverRecording']);
    // The byte code of a Python or R frame, from that frame's context menu.
    assert.deepStrictEqual(menus['debug/callstack/context'].map((m: any) => [m.command, m.when]),
      [['rewind.showInterpreterCode', "debugType == 'rewind' && callStackItemType == 'stackFrame'"]]);
    const views = pkg.contributes.views.debug.map((v: any) => v.id);
    assert.ok(views.includes('rewind.history'));
  });
});
