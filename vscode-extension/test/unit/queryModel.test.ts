import * as assert from 'assert';
import { callsResult, historyResult, logResult } from '../../src/queryModel';

describe('History view rows', () => {
  it('lists a value\'s changes, each going to its change', () => {
    const r = historyResult({
      expression: 'total', frameFunction: 'main', totalChanges: 2, complete: true,
      changes: [
        { index: 0, event: 90, threadId: 7, function: 'main', source: { path: '/w/crash.c' }, line: 22, oldValue: '0', newValue: '3' },
        { index: 1, event: 95, threadId: 7, function: 'main', source: { path: '/w/crash.c' }, line: 22, oldValue: '3', newValue: '8' },
      ],
    });
    assert.strictEqual(r.title, 'History of total, a local of main: 2 changes');
    assert.deepStrictEqual(r.rows.map((x) => x.label), ['0 → 3', '3 → 8']);
    assert.strictEqual(r.rows[1].description, '#95 · main crash.c:22');
    assert.deepStrictEqual(r.rows[1].seek, { change: 1 });
    assert.strictEqual(r.note, undefined);
  });
  it('names the members or elements a change of a struct or an array changed', () => {
    const r = historyResult({
      expression: 'shape', totalChanges: 2, complete: true,
      changes: [
        { index: 0, event: 90, threadId: 7, function: 'reshape', member: '.pos.x', oldValue: '0', newValue: '1' },
        { index: 1, event: 90, threadId: 7, function: 'reshape', member: '.pos.x, .pos.y', oldValue: '6, 0', newValue: '40, 50' },
      ],
    });
    assert.deepStrictEqual(r.rows.map((x) => x.label), ['.pos.x: 0 → 1', '.pos.x, .pos.y: 6, 0 → 40, 50']);
    assert.match(r.rows[0].tooltip, /^shape\.pos\.x: 0 → 1\n/);
    assert.match(r.rows[1].tooltip, /^shape: \.pos\.x, \.pos\.y: 6, 0 → 40, 50\n/);
  });
  it('says when nothing changed, or the query was cancelled', () => {
    assert.match(historyResult({ expression: 'x', totalChanges: 0, changes: [] }).note ?? '', /never changed/);
    assert.match(historyResult({ expression: 'x', totalChanges: 0, changes: [], complete: false, reachedEvent: 40 }).note ?? '',
      /Cancelled: the results up to event 40/);
    assert.match(historyResult({ expression: 'x', totalChanges: 9, changes: [], complete: false, truncated: true, reachedEvent: 40 }).note ?? '',
      /The first results only, up to event 40/);
  });
  it('lists calls with arguments, results and callers', () => {
    const r = callsResult({
      function: 'depth_sum', totalCalls: 3, complete: true,
      calls: [
        { index: 0, event: 5, threadId: 1, function: 'depth_sum', arguments: [{ name: 'n', value: '1' }],
          caller: { function: 'main', source: { path: '/w/v.c' }, line: 50 }, returned: true, returnValue: '1' },
        { index: 1, event: 5, threadId: 1, function: 'note', arguments: [], caller: { function: 'depth_sum' },
          returned: false },
        { index: 2, event: 7, threadId: 1, function: 'accumulate', arguments: [{ name: 'n', value: '3L' }],
          caller: { function: 'eval' } },
      ],
    });
    assert.strictEqual(r.title, 'Calls of depth_sum: 3');
    assert.deepStrictEqual(r.rows.map((x) => x.label),
      ['depth_sum(n=1) → 1', 'note() (did not return)', 'accumulate(n=3L)']);
    assert.strictEqual(r.rows[0].description, '#5 · from main v.c:50');
    assert.deepStrictEqual(r.rows[1].seek, { call: 1 });
  });
  it('lists a logpoint\'s hits', () => {
    const r = logResult({ location: '/w/v.c:24', totalHits: 1, hits: [
      { index: 0, event: 9, threadId: 1, function: 'accumulate', source: { path: '/w/v.c' }, line: 24, message: 'sum 5 1' },
    ] });
    assert.strictEqual(r.title, 'Log over the recording at v.c:24: 1 hit');
    assert.strictEqual(r.rows[0].label, 'sum 5 1');
    assert.deepStrictEqual(r.rows[0].seek, { logHit: 0 });
  });
});
