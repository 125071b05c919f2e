import * as assert from 'node:assert/strict';
import { TerminalFeed, droppedMarker } from '../../src/core/process/terminalFeed';

/** A feed whose timer and terminal the test drives by hand. */
function harness(options: { maxPendingChars?: number; batchChars?: number; flowControl?: boolean } = {}) {
  const writes: string[] = [];
  let scheduled: (() => void) | undefined;
  let release: (() => void) | undefined;
  const feed = new TerminalFeed({
    maxPendingChars: options.maxPendingChars ?? 1000,
    batchChars: options.batchChars ?? 100,
    write: (text) => writes.push(text),
    ...(options.flowControl === false
      ? {}
      : {
          barrier: () =>
            new Promise<void>((resolve) => {
              release = resolve;
            }),
        }),
    schedule: (fn) => {
      scheduled = fn;
      return () => (scheduled = undefined);
    },
  });
  return {
    feed,
    writes,
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
    const h = harness({ batchChars: 1000 });
    for (let i = 0; i < 50; i++) h.feed.push(`${i},`, 3);
    assert.equal(h.writes.length, 0, 'nothing before the coalescing delay');
    assert.equal(h.tick(), true);
    assert.equal(h.writes.length, 1);
    assert.equal(h.writes[0], Array.from({ length: 50 }, (_, i) => `${i},`).join(''));
  });

  it('waits for the terminal to take a write before the next, and delivers everything in order', async () => {
    const h = harness({ batchChars: 10, maxPendingChars: 1000 });
    const text = 'abcdefghijklmnopqrstuvwxyz0123456789';
    h.feed.push(text, text.length);
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

  it('keeps at most maxPendingChars of a flood when the terminal is stuck, and says how many bytes it dropped', async () => {
    const h = harness({ maxPendingChars: 64 * 1024, batchChars: 16 * 1024 });
    const chunk = 'x'.repeat(4096);
    // 1 GiB of output in 4 KiB chunks, with the terminal never taking the first write meanwhile.
    const chunks = (1024 * 1024 * 1024) / 4096;
    let maxPending = 0;
    h.feed.push(chunk, 4096);
    h.tick();
    for (let i = 1; i < chunks; i++) {
      h.feed.push(chunk, 4096);
      maxPending = Math.max(maxPending, h.feed.pending);
    }
    assert.ok(maxPending <= 64 * 1024, `pending stayed bounded (${maxPending})`);
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

  it('shows the marker where output was dropped, and takes output again once the terminal catches up', async () => {
    const h = harness({ maxPendingChars: 10, batchChars: 100 });
    h.feed.push('0123456789', 10);
    h.feed.push('dropped!', 8);
    h.tick();
    assert.deepEqual(h.writes, ['0123456789' + droppedMarker(8)]);
    await h.ack();
    h.feed.push('after', 5);
    h.tick();
    assert.equal(h.writes[1], 'after');
  });

  it('never splits a surrogate pair between writes', () => {
    const h = harness({ batchChars: 5, flowControl: false });
    h.feed.push('abcd😀ef', 10);
    while (h.tick()) {
      // drain
    }
    assert.deepEqual(h.writes, ['abcd', '😀ef']);
  });

  it('drops nothing and writes nothing after dispose', () => {
    const h = harness();
    h.feed.push('abc', 3);
    h.feed.dispose();
    h.feed.push('def', 3);
    assert.equal(h.tick(), false);
    assert.deepEqual(h.writes, []);
  });
});
