import * as assert from 'node:assert/strict';
import type { ProcessStatus } from '../../src/features/processes/common/supervisor';
import { formatDuration, processSummary } from '../../src/features/processes/vscode/processSummary';
import type { SlotHolder } from '../../src/features/processes/vscode/terminalSlots';
import { MAX_FINISHED_TERMINALS, terminalSlots } from '../../src/features/processes/vscode/terminalSlots';

const running = (processId: string, requested = false): SlotHolder => ({ processId, requested });
const finished = (processId: string, finishedSeq: number, requested = false): SlotHolder => ({ processId, finishedSeq, requested });

/**
 * Plays the policy the way ProcessTerminals applies it, over a script of events, and returns the open terminals.
 * `start` is a new process, `exit` its end, `ask` the developer's Show Agent Process Terminal, `tick` a grace
 * period passing (every finished terminal whose timer runs closes).
 */
function play(slots: number, events: readonly string[], maxFinished = MAX_FINISHED_TERMINALS): { open: string[]; log: string[] } {
  const open = new Map<string, SlotHolder>();
  const log: string[] = [];
  let seq = 0;
  const holders = () => [...open.values()];
  const close = (ids: readonly string[]) => {
    for (const id of ids) {
      open.delete(id);
      log.push(`close ${id}`);
    }
  };
  for (const event of events) {
    const [verb, id] = event.split(' ') as [string, string];
    if (verb === 'start') {
      const a = terminalSlots.admitNewProcess(holders(), slots);
      close(a.close);
      if (a.open) open.set(id, running(id));
      log.push(a.open ? `open ${id}` : `none ${id}`);
    } else if (verb === 'exit') {
      const h = open.get(id);
      if (h) open.set(id, { ...h, finishedSeq: ++seq });
      close(terminalSlots.finishedBeyondCap(holders(), maxFinished));
    } else if (verb === 'ask') {
      const h = open.get(id);
      if (h) {
        open.set(id, { ...h, requested: true });
        continue;
      }
      const a = terminalSlots.admitRequested(holders(), slots);
      assert.equal(a.open, true, 'a terminal the developer asks for always opens');
      close(a.close);
      open.set(id, { processId: id, requested: true });
      log.push(`open ${id}`);
    } else if (verb === 'tick') {
      close(holders().filter((h) => h.finishedSeq !== undefined && terminalSlots.closeDelayMs(h, 30) !== undefined).map((h) => h.processId));
    }
  }
  return { open: [...open.keys()], log };
}

describe('agent terminal slots', () => {
  it('gives a new process a terminal while a slot is free', () => {
    assert.deepEqual(terminalSlots.admitNewProcess([], 2), { open: true, close: [] });
    assert.deepEqual(terminalSlots.admitNewProcess([running('a')], 2), { open: true, close: [] });
  });

  it('gives none when every slot holds a running process, and never closes a running one', () => {
    assert.deepEqual(terminalSlots.admitNewProcess([running('a'), running('b')], 2), { open: false, close: [] });
    assert.deepEqual(terminalSlots.admitNewProcess([running('a', true), running('b')], 2), { open: false, close: [] });
  });

  it("makes room by closing CodeSpace's own finished terminal that finished first", () => {
    const holders = [running('a'), finished('b', 2), finished('c', 1), running('d')];
    assert.deepEqual(terminalSlots.admitNewProcess(holders, 4), { open: true, close: ['c'] });
  });

  it('never closes a terminal the developer asked for to make room for a new process', () => {
    const holders = [running('a'), finished('b', 1, true)];
    assert.deepEqual(terminalSlots.admitNewProcess(holders, 2), { open: false, close: [] });
  });

  it('closes nothing when closing what it may would still not make room (the cap was lowered)', () => {
    // 4 open, 2 slots: 3 must close for one more, only 1 may.
    const holders = [running('a'), running('b'), running('c'), finished('d', 1)];
    assert.deepEqual(terminalSlots.admitNewProcess(holders, 2), { open: false, close: [] });
    // 2 may close, 2 must: both go.
    assert.deepEqual(terminalSlots.admitNewProcess([running('a'), finished('b', 2), finished('c', 1)], 2), { open: true, close: ['c', 'b'] });
  });

  it('always opens a terminal the developer asks for, closing finished ones (own first) to stay within the slots', () => {
    assert.deepEqual(terminalSlots.admitRequested([running('a'), running('b')], 2), { open: true, close: [] }, 'beyond the cap when all run');
    assert.deepEqual(terminalSlots.admitRequested([finished('a', 1, true), finished('b', 2)], 2), { open: true, close: ['b'] });
    assert.deepEqual(terminalSlots.admitRequested([finished('a', 1, true), running('b')], 2), { open: true, close: ['a'] });
    assert.deepEqual(terminalSlots.admitRequested([running('a')], 2), { open: true, close: [] });
  });

  it('keeps at most the cap of finished terminals, closing the earliest finished (own first)', () => {
    const holders = [finished('a', 1, true), finished('b', 2), finished('c', 3), finished('d', 4), running('e')];
    assert.deepEqual(terminalSlots.finishedBeyondCap(holders, 2), ['b', 'c']);
    assert.deepEqual(terminalSlots.finishedBeyondCap(holders, 4), []);
    assert.deepEqual(terminalSlots.finishedBeyondCap(holders, 0), ['b', 'c', 'd', 'a']);
  });

  it('closes only CodeSpace-opened terminals on a timer, never with 0 seconds', () => {
    assert.equal(terminalSlots.closeDelayMs({ requested: false }, 30), 30_000);
    assert.equal(terminalSlots.closeDelayMs({ requested: false }, 1), 1000);
    assert.equal(terminalSlots.closeDelayMs({ requested: false }, 0), undefined);
    assert.equal(terminalSlots.closeDelayMs({ requested: true }, 30), undefined);
    assert.equal(terminalSlots.closeDelayMs({ requested: false }, 10 ** 9), undefined, 'beyond what a timer can wait: never');
  });

  it('reads the settings as integers within their bounds, else the defaults', () => {
    assert.equal(terminalSlots.validSlots(3), 3);
    assert.equal(terminalSlots.validSlots(0), 1);
    assert.equal(terminalSlots.validSlots(1000), 100);
    assert.equal(terminalSlots.validSlots(2.5), 8);
    assert.equal(terminalSlots.validSlots('4'), 8);
    assert.equal(terminalSlots.validCloseAfter(0), 0);
    assert.equal(terminalSlots.validCloseAfter(5), 5);
    assert.equal(terminalSlots.validCloseAfter(-1), 30);
    assert.equal(terminalSlots.validCloseAfter(Number.NaN), 30);
  });

  it('fifty concurrent commands open only the slots, and no tab pops up later for those already running', () => {
    const starts = Array.from({ length: 50 }, (_, i) => `start p${i}`);
    const r = play(8, [...starts, 'exit p0', 'exit p1', 'tick']);
    assert.deepEqual(r.open, ['p2', 'p3', 'p4', 'p5', 'p6', 'p7'], 'the two finished closed; none of p8..p49 opened');
    assert.equal(r.log.filter((l) => l.startsWith('open')).length, 8);
  });

  it('gives a freed slot to the next new process, and the developer opens any other', () => {
    const r = play(2, ['start a', 'start b', 'start c', 'exit a', 'start d', 'ask c', 'start e']);
    assert.deepEqual(r.log, ['open a', 'open b', 'none c', 'close a', 'open d', 'open c', 'none e']);
    assert.deepEqual(r.open, ['b', 'd', 'c'], 'c opened beyond the cap: b and d still run');
  });

  it('keeps a terminal the developer asked to show open past the grace period', () => {
    const r = play(3, ['start a', 'start b', 'ask a', 'exit a', 'exit b', 'tick']);
    assert.deepEqual(r.open, ['a']);
  });
});

describe('agent process summary', () => {
  const base: ProcessStatus = {
    process_id: 'p1',
    workspace_id: 'ws',
    state: 'running',
    started_at: '2026-01-01T00:00:00.000Z',
    command: ['npm', 'test'],
    tty: false,
    occupancy: 'shared',
  };
  const t0 = Date.parse(base.started_at);

  it('says how a process stands and how long it has run', () => {
    assert.equal(processSummary(base, t0 + 12_345), 'running · 12.3 s');
    assert.equal(processSummary({ ...base, state: 'exited', termination: 'exited', exit_code: 2, ended_at: '2026-01-01T00:00:00.850Z' }, t0 + 99_999), 'exited 2 · 850 ms');
    assert.equal(processSummary({ ...base, state: 'exited', termination: 'terminated', ended_at: '2026-01-01T00:04:05.000Z' }, t0), 'terminated · 4 min 05 s');
    assert.equal(processSummary({ ...base, state: 'exited', termination: 'timeout', ended_at: '2026-01-01T02:07:00.000Z' }, t0), 'timed out · 2 h 07 min');
    assert.equal(processSummary({ ...base, state: 'exited', termination: 'unknown', signal: 'SIGKILL', ended_at: base.started_at }, t0), 'ended by SIGKILL · 0 ms');
  });

  it('formats durations', () => {
    assert.equal(formatDuration(-5), '0 ms');
    assert.equal(formatDuration(59_940), '59.9 s');
    assert.equal(formatDuration(59_999), '1 min 00 s');
    assert.equal(formatDuration(60_000), '1 min 00 s');
  });
});
