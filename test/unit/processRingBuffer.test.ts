import * as assert from 'node:assert/strict';
import { RingBuffer } from '../../src/features/processes/common/ringBuffer';

const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = (s: string): Uint8Array => enc.encode(s);
const text = (b: Uint8Array): string => dec.decode(b);

/** Reads everything from `cursor` in steps of `step`, returning the text and the final cursor. */
function drain(buf: RingBuffer, cursor: number, step: number, final = false): { all: string; cursor: number } {
  let all = '';
  for (let guard = 0; guard < 100_000; guard++) {
    const r = buf.read(cursor, step, { final });
    if (r.chunk.length === 0) break;
    all += text(r.chunk);
    cursor = r.cursor;
  }
  return { all, cursor };
}

describe('process ring buffer', () => {
  it('reads what was written with absolute cursors', () => {
    const buf = new RingBuffer(64);
    buf.write(bytes('hello '));
    buf.write(bytes('world'));
    const r = buf.read(0, 100);
    assert.equal(text(r.chunk), 'hello world');
    assert.equal(r.cursor, 11);
    assert.equal(r.output_lost, false);
    assert.equal(r.retained_from, 0);
    const r2 = buf.read(6, 100);
    assert.equal(text(r2.chunk), 'world');
    const empty = buf.read(11, 100);
    assert.equal(empty.chunk.length, 0);
    assert.equal(empty.cursor, 11);
  });

  it('honours max_bytes and continues from the returned cursor', () => {
    const buf = new RingBuffer(64);
    buf.write(bytes('abcdefghij'));
    const a = buf.read(0, 4);
    assert.equal(text(a.chunk), 'abcd');
    assert.equal(a.cursor, 4);
    const b = buf.read(a.cursor, 4);
    assert.equal(text(b.chunk), 'efgh');
    const c = buf.read(b.cursor, 4);
    assert.equal(text(c.chunk), 'ij');
    assert.equal(c.cursor, 10);
  });

  it('wraps around, keeps the newest bytes and reports what was lost', () => {
    const buf = new RingBuffer(10);
    buf.write(bytes('0123456789'));
    buf.write(bytes('abcd'));
    assert.equal(buf.end, 14);
    assert.equal(buf.retainedFrom, 4);
    assert.equal(buf.size, 10);
    const old = buf.read(0, 100);
    assert.equal(old.output_lost, true);
    assert.equal(old.retained_from, 4);
    assert.equal(text(old.chunk), '456789abcd');
    assert.equal(old.cursor, 14);
    assert.deepEqual(old.lost, { from: 0, to: 4 }, 'exactly the bytes between the cursor and the chunk are reported lost');
    assert.deepEqual(buf.read(2, 100).lost, { from: 2, to: 4 });
    const inside = buf.read(8, 100);
    assert.equal(inside.output_lost, false);
    assert.equal(inside.lost, undefined);
    assert.equal(text(inside.chunk), '89abcd');
    // A read that spans the physical end of the storage.
    const span = buf.read(7, 5);
    assert.equal(text(span.chunk), '789ab');
  });

  it('keeps only the tail of a write larger than the capacity', () => {
    const buf = new RingBuffer(8);
    buf.write(bytes('xy'));
    buf.write(bytes('ABCDEFGHIJKLMNOP'));
    assert.equal(buf.end, 18);
    assert.equal(buf.retainedFrom, 10);
    assert.equal(text(buf.read(10, 100).chunk), 'IJKLMNOP');
  });

  it('stays correct over many wraps with odd sizes (against a reference string)', () => {
    const buf = new RingBuffer(37);
    let all = '';
    let n = 0;
    for (let i = 0; i < 500; i++) {
      const piece = String.fromCharCode(97 + (i % 26)).repeat((i * 7) % 23);
      all += piece;
      buf.write(bytes(piece));
      n += piece.length;
      assert.equal(buf.end, n);
      const r = buf.read(0, 1000);
      assert.equal(text(r.chunk), all.slice(Math.max(0, n - 37)));
      assert.equal(r.retained_from, Math.max(0, n - 37));
    }
  });

  it('treats a cursor past the end as the end', () => {
    const buf = new RingBuffer(16);
    buf.write(bytes('abc'));
    const r = buf.read(99, 10);
    assert.equal(r.chunk.length, 0);
    assert.equal(r.cursor, 3);
  });

  it('grows its storage gradually and never beyond the capacity', () => {
    const buf = new RingBuffer(256 * 1024);
    assert.ok(buf.allocated <= 4096);
    buf.write(new Uint8Array(10_000));
    assert.ok(buf.allocated >= 10_000 && buf.allocated <= 256 * 1024);
    for (let i = 0; i < 100; i++) buf.write(new Uint8Array(64 * 1024).fill(i));
    assert.equal(buf.allocated, 256 * 1024);
    assert.equal(buf.size, 256 * 1024);
    const r = buf.read(buf.end - 1, 10);
    assert.deepEqual([...r.chunk], [99]);
  });

  describe('UTF-8 boundaries', () => {
    const euro = bytes('€'); // e2 82 ac
    const smile = bytes('😀'); // f0 9f 98 80

    it('holds back an incomplete character at the end until it completes', () => {
      const buf = new RingBuffer(64);
      buf.write(bytes('ab'));
      buf.write(euro.subarray(0, 2));
      const r = buf.read(0, 100);
      assert.equal(text(r.chunk), 'ab');
      assert.equal(r.cursor, 2);
      const wait = buf.read(2, 100);
      assert.equal(wait.chunk.length, 0);
      assert.equal(wait.cursor, 2);
      buf.write(euro.subarray(2));
      const rest = buf.read(2, 100);
      assert.equal(text(rest.chunk), '€');
      assert.equal(rest.cursor, 5);
    });

    it('cuts at max_bytes on a character boundary', () => {
      const buf = new RingBuffer(64);
      buf.write(bytes('a€€b'));
      const r = buf.read(0, 3); // a + 2 bytes of €
      assert.equal(text(r.chunk), 'a');
      assert.equal(r.cursor, 1);
      const { all } = drain(buf, 0, 4);
      assert.equal(all, 'a€€b');
    });

    it('returns a whole character when max_bytes is smaller than it', () => {
      const buf = new RingBuffer(64);
      buf.write(smile);
      buf.write(bytes('x'));
      const r = buf.read(0, 1);
      assert.equal(text(r.chunk), '😀');
      assert.equal(r.cursor, 4);
      const { all } = drain(buf, 0, 1);
      assert.equal(all, '😀x');
    });

    it('returns a truncated tail once the stream is final', () => {
      const buf = new RingBuffer(64);
      buf.write(bytes('z'));
      buf.write(smile.subarray(0, 3));
      assert.equal(buf.read(0, 100).cursor, 1);
      const r = buf.read(0, 100, { final: true });
      assert.equal(r.cursor, 4);
      assert.equal(text(r.chunk), 'z\uFFFD');
    });

    it('skips the orphaned continuation bytes when the window starts mid-character', () => {
      const buf = new RingBuffer(8);
      buf.write(bytes('€€€')); // 9 bytes: the first byte is dropped
      assert.equal(buf.retainedFrom, 1);
      const r = buf.read(0, 100);
      assert.equal(r.output_lost, true);
      assert.equal(text(r.chunk), '€€');
      assert.equal(r.cursor, 9);
      // The two orphaned continuation bytes are lost too: the chunk starts at offset 3.
      assert.deepEqual(r.lost, { from: 0, to: 3 });
    });

    it('never splits characters while reading in small steps across wraps', () => {
      const buf = new RingBuffer(50);
      const sample = 'aé€😀'.repeat(40);
      for (const ch of sample) buf.write(bytes(ch));
      const start = buf.read(0, 1).cursor; // first whole character after the lost prefix
      for (const step of [1, 2, 3, 5, 7]) {
        const { all } = drain(buf, start, step);
        assert.ok(!all.includes('\uFFFD'), `step ${step}`);
        assert.ok(sample.endsWith(all), `step ${step}`);
      }
    });

    it('passes invalid UTF-8 through instead of stalling', () => {
      const buf = new RingBuffer(64);
      buf.write(Uint8Array.from([0x61, 0xff, 0x80, 0x62]));
      const r = buf.read(0, 100);
      assert.equal(r.cursor, 4);
    });
  });
});
