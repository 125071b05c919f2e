import * as assert from 'node:assert/strict';
import { TerminalFeed, WRITE_DELAY_MS, droppedMarker } from '../../src/features/processes/common/terminalFeed';

/** A feed whose timer and terminal the test drives by hand. */
const enc = (text: string): Uint8Array => new TextEncoder().encode(text);

function harness(
  options: { maxPendingBytes?: number; batchBytes?: number; flowControl?: boolean; render?: (text: string) => string; flood?: { delayMs: number; batches: number } } = {},
) {
  const writes: string[] = [];
  /** The delay of each timer the feed set, in order. */
  const delays: number[] = [];
  let scheduled: (() => void) | undefined;
  let release: (() => void) | undefined;
  const feed = new TerminalFeed({
    maxPendingBytes: options.maxPendingBytes ?? 1000,
    batchBytes: options.batchBytes ?? 100,
    write: (text) => writes.push(text),
    ...(options.render ? { render: options.render } : {}),
    ...(options.flood ? { flood: options.flood } : {}),
    ...(options.flowControl === false
      ? {}
      : {
          barrier: () =>
            new Promise<void>((resolve) => {
              release = resolve;
            }),
        }),
    schedule: (fn, delayMs) => {
      delays.push(delayMs);
      scheduled = fn;
      return () => (scheduled = undefined);
    },
  });
  return {
    feed,
    writes,
    delays,
    /** Runs the pending timer, if any; true when one ran. */
    tick(): boolean {
      const fn = scheduled;
      scheduled = undefined;
      fn?.();
      return fn !== undefined;
    },
    /** The terminal takes the last write. */
    async ack(): Promise<void> {
      const r = release;
      release = undefined;
      r?.();
      await new Promise((resolve) => setImmediate(resolve));
    },
    get waiting(): boolean {
      return release !== undefined;
    },
  };
}

describe('terminal feed (the bounded terminal mirror)', () => {
  it('coalesces many small pieces into one write', () => {
    const h = harness({ batchBytes: 1000 });
    for (let i = 0; i < 50; i++) h.feed.push(enc(`${i},`));
    assert.equal(h.writes.length, 0, 'nothing before the coalescing delay');
    assert.equal(h.tick(), true);
    assert.equal(h.writes.length, 1);
    assert.equal(h.writes[0], Array.from({ length: 50 }, (_, i) => `${i},`).join(''));
  });

  it('waits for the terminal to take a write before the next, and delivers everything in order', async () => {
    const h = harness({ batchBytes: 10, maxPendingBytes: 1000 });
    const text = 'abcdefghijklmnopqrstuvwxyz0123456789';
    h.feed.push(enc(text));
    h.tick();
    assert.deepEqual(h.writes, ['abcdefghij']);
    assert.equal(h.tick(), false, 'no second write while the first is not taken');
    while (h.waiting) {
      await h.ack();
      h.tick();
    }
    assert.equal(h.writes.join(''), text);
    assert.equal(h.feed.dropped, 0);
  });

  it('keeps at most maxPendingBytes of a flood when the terminal is stuck, and says how many bytes it dropped', async () => {
    const h = harness({ maxPendingBytes: 64 * 1024, batchBytes: 16 * 1024 });
    const chunk = enc('x'.repeat(4096));
    // 1 GiB of output in 4 KiB chunks, with the terminal never taking the first write meanwhile.
    const chunks = (1024 * 1024 * 1024) / 4096;
    let maxPending = 0;
    h.feed.push(chunk);
    h.tick();
    for (let i = 1; i < chunks; i++) {
      h.feed.push(chunk);
      maxPending = Math.max(maxPending, h.feed.pending);
    }
    assert.ok(maxPending <= 64 * 1024, `pending stayed bounded (${maxPending})`);
    assert.ok(h.feed.allocated <= 64 * 1024, `storage stayed bounded (${h.feed.allocated})`);
    assert.equal(h.writes.length, 1);
    h.feed.note('[process exited with code 0]\r\n');
    const kept = h.feed.pending + 4096;
    const dropped = 1024 * 1024 * 1024 - kept;
    assert.equal(h.feed.dropped, dropped);
    while (h.waiting) {
      await h.ack();
      h.tick();
    }
    const shown = h.writes.join('');
    assert.equal(shown.split(droppedMarker(dropped)).length, 2, 'one marker, with the exact count');
    assert.match(shown, /\[… \d+ bytes not shown …\]/);
    assert.ok(shown.endsWith('[process exited with code 0]\r\n'), 'the mirror\'s own notes are never dropped');
    assert.equal(shown.length, kept + droppedMarker(dropped).length + '[process exited with code 0]\r\n'.length);
  });

  it('drops the oldest waiting output for the newest, shows the marker there, and takes output again once the terminal catches up', async () => {
    const h = harness({ maxPendingBytes: 10, batchBytes: 100 });
    h.feed.push(enc('0123456789'));
    h.feed.push(enc('newest'));
    h.tick();
    assert.deepEqual(h.writes, [droppedMarker(10) + 'newest']);
    assert.equal(h.feed.dropped, 10);
    await h.ack();
    h.feed.push(enc('after'));
    h.tick();
    assert.equal(h.writes[1], 'after');
  });

  it('shows the end of a flood: the middle is skipped with one marker, the last output and the exit line are shown', async () => {
    const h = harness({ maxPendingBytes: 64 * 1024, batchBytes: 16 * 1024 });
    h.feed.push(enc('start\r\n'));
    h.tick();
    // The terminal is stuck on its first write while 10 MiB pass, in pieces of several sizes (one larger than all it holds).
    const piece = enc('y'.repeat(3000));
    let total = 0;
    for (let i = 0; total < 10 * 1024 * 1024; i++) {
      const p = i % 1000 === 999 ? enc('z'.repeat(100 * 1024)) : piece;
      h.feed.push(p);
      total += p.length;
      assert.ok(h.feed.pending <= 64 * 1024 && h.feed.allocated <= 64 * 1024, `bounded (${h.feed.pending} pending, ${h.feed.allocated} allocated)`);
    }
    h.feed.push(enc('\r\nthe last line\r\n'));
    h.feed.end();
    h.feed.note('[process exited with code 0]\r\n');
    while (h.waiting) {
      await h.ack();
      h.tick();
    }
    const shown = h.writes.join('');
    const dropped = h.feed.dropped;
    assert.ok(dropped > total - 64 * 1024, `all but the last 64 KiB dropped (${dropped} of ${total})`);
    assert.ok(shown.startsWith('start\r\n' + droppedMarker(dropped)), 'the beginning, then one marker with the exact count');
    assert.ok(shown.endsWith('\r\nthe last line\r\n[process exited with code 0]\r\n'), 'the end of the flood, then the exit line');
    const output = 'start\r\n'.length + total + '\r\nthe last line\r\n'.length;
    assert.equal(shown.length - droppedMarker(dropped).length - '[process exited with code 0]\r\n'.length, output - dropped, 'shown + dropped = all output');
  });

  it('makes writes of at most batchBytes of output, however large the backlog', async () => {
    const h = harness({ maxPendingBytes: 1024 * 1024, batchBytes: 16 * 1024 });
    h.feed.push(enc('w'.repeat(1024 * 1024)));
    let writes = 0;
    h.tick();
    while (h.waiting) {
      await h.ack();
      h.tick();
      writes++;
    }
    assert.equal(h.writes.length, 64);
    assert.ok(h.writes.every((w) => w.length === 16 * 1024));
    assert.equal(writes, 64);
  });

  it('paces a flood as fewer, fuller writes: after the delay given, the newest batches at once, each its own write, the rest marked', async () => {
    const h = harness({ maxPendingBytes: 1024 * 1024, batchBytes: 16 * 1024, flood: { delayMs: 100, batches: 4 } });
    h.feed.push(enc('f'.repeat(200 * 1024)));
    h.tick();
    assert.deepEqual(h.writes.map((w) => w.length), [16 * 1024], 'the first write is one batch, as for any output');
    assert.deepEqual(h.delays, [WRITE_DELAY_MS]);
    await h.ack();
    assert.equal(h.delays.at(-1), 100, 'output was still waiting: the next write follows the flood pace');
    h.tick();
    // 184 KiB waited, more than four batches: the oldest 120 KiB are dropped, the newest 64 KiB shown.
    assert.equal(h.writes.length, 5, 'four batches, four writes');
    assert.equal(h.writes[1], droppedMarker(120 * 1024) + 'f'.repeat(16 * 1024), 'the marker where the dropped output was, then the newest');
    assert.ok(h.writes.slice(2).every((w) => w === 'f'.repeat(16 * 1024)));
    assert.equal(h.feed.dropped, 120 * 1024);
    await h.ack();
    assert.equal(h.tick(), false, 'nothing left to write');
    // That write dropped output, so the next one keeps the flood pace; one that drops nothing ends the flood.
    h.feed.push(enc('tail'));
    assert.equal(h.delays.at(-1), 100, 'the flood pace once more');
    h.tick();
    assert.equal(h.writes.at(-1), 'tail');
    await h.ack();
    h.feed.push(enc('more'));
    assert.equal(h.delays.at(-1), WRITE_DELAY_MS, 'caught up: back to the normal delay');
    h.tick();
    assert.equal(h.writes.at(-1), 'more');
  });

  it('while flooding, each write shows the newest output; a burst that fits one flood write is shown whole', async () => {
    const h = harness({ maxPendingBytes: 1024 * 1024, batchBytes: 1024, flood: { delayMs: 100, batches: 2 } });
    // A burst of 3 KiB: a batch now, the other 2 KiB (one flood write's worth) whole after the flood delay.
    h.feed.push(enc('a'.repeat(3 * 1024)));
    h.tick();
    await h.ack();
    assert.equal(h.delays.at(-1), 100);
    h.tick();
    assert.equal(h.writes.join(''), 'a'.repeat(3 * 1024), 'nothing dropped');
    await h.ack();
    assert.equal(h.tick(), false, 'caught up');
    // A flood: 9 KiB at once. A batch, then after the flood delay the newest two batches, the 6 KiB before them marked.
    h.feed.push(enc('c'.repeat(9 * 1024)));
    assert.equal(h.delays.at(-1), WRITE_DELAY_MS, 'not behind yet: the normal delay');
    h.tick();
    await h.ack();
    h.tick();
    assert.equal(h.writes.slice(-2).join(''), droppedMarker(6 * 1024) + 'c'.repeat(2 * 1024), 'the newest two batches');
    // It dropped output: the next write keeps the flood pace though nothing waits now, and shows one batch.
    h.feed.push(enc('d'.repeat(4 * 1024) + 'the end'));
    h.feed.note('[process exited with code 0]\r\n');
    await h.ack();
    assert.equal(h.delays.at(-1), 100, 'still flooding: the flood pace');
    const before = h.writes.length;
    h.tick();
    const dropped = 4 * 1024 + 'the end'.length - 1024;
    assert.equal(h.writes.length, before + 1, 'one write');
    assert.equal(
      h.writes.at(-1),
      droppedMarker(dropped) + 'd'.repeat(1024 - 'the end'.length) + 'the end' + '[process exited with code 0]\r\n',
      'the end of the flood, and the exit line in the same write (a note takes no batch of its own)',
    );
    await h.ack();
    assert.equal(h.tick(), false, 'nothing left');
    assert.equal(h.feed.dropped, 6 * 1024 + dropped);
  });

  it('without a flood pace, a backlog is written a batch at a time after the normal delay', async () => {
    const h = harness({ maxPendingBytes: 1024 * 1024, batchBytes: 1024 });
    h.feed.push(enc('g'.repeat(4096)));
    h.tick();
    while (h.waiting) {
      await h.ack();
      h.tick();
    }
    assert.equal(h.writes.length, 4);
    assert.ok(h.delays.every((d) => d === WRITE_DELAY_MS));
  });

  it('never splits a character between writes, however the batches cut its bytes', () => {
    const h = harness({ batchBytes: 5, flowControl: false });
    h.feed.push(enc('abcd😀ef'));
    while (h.tick()) {
      // drain
    }
    assert.deepEqual(h.writes, ['abcd', '😀ef']);
  });

  it('drops nothing and writes nothing after dispose', () => {
    const h = harness();
    h.feed.push(enc('abc'));
    h.feed.dispose();
    h.feed.push(enc('def'));
    assert.equal(h.tick(), false);
    assert.deepEqual(h.writes, []);
  });

  it('keeps a copy of what it holds: the caller may reuse its buffer at once', () => {
    const h = harness({ flowControl: false });
    const reused = enc('first ');
    h.feed.push(reused);
    reused.set(enc('XXXXXX'));
    h.feed.push(enc('second'));
    h.tick();
    assert.deepEqual(h.writes, ['first second']);
  });

  it('decodes a character whose bytes arrive in separate pieces, and a cut one at the end as U+FFFD before what follows', () => {
    const h = harness({ flowControl: false });
    const bytes = enc('é😀');
    for (const b of bytes) h.feed.push(new Uint8Array([b]));
    h.feed.push(enc('x').subarray(0, 1));
    h.feed.push(enc('😀').subarray(0, 2));
    h.feed.end();
    h.feed.note('[done]');
    h.tick();
    assert.deepEqual(h.writes, ['é😀x\ufffd[done]']);
  });

  it('starts afresh after a gap: the rest of a character cut by the drop is dropped with it', async () => {
    const h = harness({ maxPendingBytes: 4, batchBytes: 100 });
    h.feed.push(enc('ab'));
    h.feed.push(enc('😀').subarray(0, 2));
    // Does not fit: 'ab' and the first half of the emoji go, and of the new bytes only the last 4 fit, which start
    // inside a character (its last two bytes): those go too.
    h.feed.push(enc('😀ok'));
    h.tick();
    assert.deepEqual(h.writes, [droppedMarker(8) + 'ok']);
    await h.ack();
    h.feed.push(enc('ab'));
    h.feed.push(enc('😀').subarray(0, 2));
    h.feed.push(enc('😀').subarray(2));
    h.feed.push(enc('xyz'));
    h.tick();
    assert.deepEqual(h.writes[1], droppedMarker(6) + 'xyz', 'held bytes ending inside a character: its rest is dropped with them');
  });

  it('tells a note whether the output before it ended a line, once that output is decoded', () => {
    const h = harness({ flowControl: false });
    const seen: boolean[] = [];
    const line = (atLineStart: boolean): string => {
      seen.push(atLineStart);
      return `${atLineStart ? '' : '\r\n'}[note]\r\n`;
    };
    h.feed.note(line);
    h.feed.push(enc('abc'));
    h.feed.note(line);
    h.feed.push(enc('def\n'));
    h.feed.note(line);
    h.tick();
    assert.deepEqual(seen, [true, false, true]);
    assert.deepEqual(h.writes, ['[note]\r\nabc\r\n[note]\r\ndef\n[note]\r\n']);
  });

  it('renders output in order through `render` (pipes: lone \\n to \\r\\n)', () => {
    const pieces: string[] = [];
    const h = harness({
      flowControl: false,
      batchBytes: 4,
      render: (text) => {
        pieces.push(text);
        return text.replace(/\n/g, '\r\n');
      },
    });
    h.feed.push(enc('a\nb\nc\nd'));
    while (h.tick()) {
      // drain
    }
    assert.equal(pieces.join(''), 'a\nb\nc\nd');
    assert.equal(h.writes.join(''), 'a\r\nb\r\nc\r\nd');
  });
});
