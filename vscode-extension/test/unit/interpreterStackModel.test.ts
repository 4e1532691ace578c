import * as assert from 'assert';
import { interpreterRows } from '../../src/interpreterStackModel';

describe('Python/R Stack rows', () => {
  it('show each frame with its file and line, innermost first', () => {
    const rows = interpreterRows({
      frames: [
        { id: 7, name: 'Pipeline.stage', source: { path: '/w/pipeline.py' }, line: 22, language: 'python', variablesReference: 3 },
        { id: 8, name: '<module>', source: { path: '/w/pipeline.py' }, line: 40, language: 'python' },
        { id: 9, name: 'helper', language: 'r' },
      ],
    });
    assert.deepStrictEqual(rows, [
      { label: 'Pipeline.stage', description: 'pipeline.py:22', path: '/w/pipeline.py', line: 22, variablesReference: 3 },
      { label: '<module>', description: 'pipeline.py:40', path: '/w/pipeline.py', line: 40, variablesReference: 0 },
      { label: 'helper', description: 'r', path: undefined, line: 0, variablesReference: 0 },
    ]);
  });
  it('are none for a thread that runs no script', () => {
    assert.deepStrictEqual(interpreterRows({ frames: [] }), []);
    assert.deepStrictEqual(interpreterRows({}), []);
  });
});
