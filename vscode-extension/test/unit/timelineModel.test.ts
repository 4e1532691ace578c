import * as assert from 'assert';
import {
  eventStatusText, isTimelineGroup, moveDirection, parseEventNumber, timelineNodes, timelineRows,
} from '../../src/timelineModel';

describe('timeline rows and the status bar', () => {
  const body = {
    currentEvent: 8,
    eventCount: 45,
    events: [
      { event: 7, threadId: 100, kind: 'syscall', syscall: 'write', description: 'write = 6 [stdout]' },
      { event: 8, threadId: 100, kind: 'signal', description: 'SIGSEGV' },
      { event: 9, threadId: 100, kind: 'exit', description: 'status 0' },
      { event: 10, threadId: 0, kind: 'end', description: 'the end of the recording' },
    ],
  };
  it('marks the current event and the checkpoints', () => {
    const rows = timelineRows(body, [{ id: 2, event: 7 }]);
    assert.deepStrictEqual(rows.map((r) => r.label), [
      '#7  write = 6 [stdout]', '#8  signal: SIGSEGV', '#9  exit: status 0', '#10  the end of the recording',
    ]);
    assert.deepStrictEqual(rows.map((r) => r.current), [false, true, false, false]);
    assert.strictEqual(rows[0].description, 'task 100 · checkpoint 2');
    assert.strictEqual(rows[1].description, 'task 100 · current');
    assert.strictEqual(rows[1].icon, 'debug-stackframe');
    assert.strictEqual(rows[2].icon, 'debug-stop');
    assert.strictEqual(rows[3].description, '', 'the end belongs to no task');
  });
  it('marks thread switches', () => {
    const rows = timelineRows({
      currentEvent: 3,
      eventCount: 9,
      events: [
        { event: 2, threadId: 100, kind: 'sched', description: 'preempted' },
        { event: 3, threadId: 101, switchedFrom: 100, kind: 'syscall', description: 'read = 8' },
      ],
    });
    assert.strictEqual(rows[0].description, 'task 100');
    assert.strictEqual(rows[0].icon, 'arrow-swap');
    assert.strictEqual(rows[1].description, 'task 101 · switch from task 100 · current');
  });
  describe('start-up and rewind\'s own events', () => {
    const ev = (event: number, syscall: string, origin?: 'loader' | 'rewind') =>
      ({ event, threadId: 100, kind: 'syscall', syscall, description: `${syscall} = 0`, origin });
    const events = [
      { event: 1, threadId: 100, kind: 'exec', description: '/bin/demo' },
      ev(2, 'openat', 'loader'), ev(3, 'mmap', 'loader'), ev(4, 'perf_event_open', 'rewind'),
      ev(5, 'mprotect', 'loader'), ev(6, 'prlimit64'), ev(7, 'rewind_register_buffer', 'rewind'),
      ev(8, 'mmap', 'loader'), ev(9, 'write'),
    ];
    it('folds runs of loader events and hides rewind\'s own', () => {
      const nodes = timelineNodes(timelineRows({ currentEvent: 9, eventCount: 9, events }));
      assert.deepStrictEqual(nodes.map((n) => isTimelineGroup(n) ? n.label : n.event),
        [1, 'start-up: the dynamic loader', 6, 8, 9], 'a lone loader event stays a row');
      const group = nodes[1];
      assert.ok(isTimelineGroup(group));
      assert.deepStrictEqual(group.rows.map((r) => r.event), [2, 3, 5], 'a hidden event does not break the run');
      assert.strictEqual(group.description, '#2–#5 · 3 events');
      assert.strictEqual(group.current, false);
    });
    it('shows rewind\'s events when asked, and the one the replay stands at', () => {
      const shown = timelineNodes(timelineRows({ currentEvent: 9, eventCount: 9, events }), true);
      assert.deepStrictEqual(shown.map((n) => isTimelineGroup(n) ? n.rows.map((r) => r.event) : n.event),
        [1, [2, 3], 4, 5, 6, 7, 8, 9]);
      const rows = timelineRows({ currentEvent: 7, eventCount: 9, events });
      assert.strictEqual(rows[6].description, 'task 100 · rewind\'s own · current');
      assert.ok(timelineNodes(rows).some((n) => !isTimelineGroup(n) && n.event === 7));
      const atLoader = timelineNodes(timelineRows({ currentEvent: 3, eventCount: 9, events }));
      assert.ok(atLoader.some((n) => isTimelineGroup(n) && n.current), 'the group holding the current event is marked');
    });
  });
  it('formats the status bar and checks typed event numbers', () => {
    assert.strictEqual(eventStatusText(4711, 120000), 'event 4711 / 120000');
    assert.strictEqual(eventStatusText(4711, 120000, true), '◀ reverse · event 4711 / 120000');
    assert.strictEqual(parseEventNumber(' #12 ', 45), 12);
    assert.match(String(parseEventNumber('0', 45)), /events 1 to 45/);
    assert.match(String(parseEventNumber('46', 45)), /events 1 to 45/);
    assert.match(String(parseEventNumber('ten', 45)), /event number/);
  });
  it('tells which way a request moves the replay', () => {
    for (const c of ['stepBack', 'reverseContinue', 'rewind/stepInBack', 'rewind/stepOutBack'])
      assert.strictEqual(moveDirection(c, {}, 10), 'backward', c);
    for (const c of ['continue', 'next', 'stepIn', 'stepOut', 'restart', 'configurationDone'])
      assert.strictEqual(moveDirection(c, {}, 10), 'forward', c);
    assert.strictEqual(moveDirection('rewind/seek', { event: 4 }, 10), 'backward');
    assert.strictEqual(moveDirection('rewind/seek', { event: 12 }, 10), 'forward');
    assert.strictEqual(moveDirection('rewind/seek', { event: 4 }, undefined), undefined);
    for (const c of ['threads', 'stackTrace', 'evaluate', 'rewind/when'])
      assert.strictEqual(moveDirection(c, {}, 10), undefined, c);
  });
});
