/**
 * The one JournalStore every durable store is built on: the last line of an id wins, tombstones remove, unreadable
 * and unrecognised lines are skipped (or kept verbatim), writes land in the order made, and the one compaction
 * policy (COMPACT_AFTER_APPENDS appends, or past maxBytes) rewrites the journal only when no write waits.
 */
import * as assert from 'node:assert/strict';
import type { JournalRecord } from '../../src/base/journal';
import { InMemoryJournal } from '../../src/base/journal';
import type { JournalStoreOptions } from '../../src/base/journalStore';
import { COMPACT_AFTER_APPENDS, JournalStore } from '../../src/base/journalStore';

interface Item {
  readonly id: string;
  readonly n: number;
  readonly gone?: boolean;
  readonly big?: boolean;
}

const line = (item: Item): string => `${JSON.stringify({ type: 'item', v: 1, item })}\n`;

function store(journal: InMemoryJournal, options: Partial<JournalStoreOptions<Item>> = {}): { s: JournalStore<Item>; warnings: string[] } {
  const warnings: string[] = [];
  const s = new JournalStore<Item>({
    journal,
    codec: {
      decode: (l: JournalRecord) => (l.type === 'item' && l.v === 1 ? (l.item as Item) : undefined),
      encode: (item) => ({ type: 'item', v: 1, item }),
      id: (item) => item.id,
      isTombstone: (item) => item.gone === true,
      durable: (item) => item.big !== true,
    },
    unrecognized: 'drop',
    warn: (m) => warnings.push(m),
    ...options,
  });
  return { s, warnings };
}

/** A journal whose next appends or rewrites fail, on demand. */
class FlakyJournal extends InMemoryJournal {
  failAppends = false;
  failRewrites = false;
  override append(record: JournalRecord): Promise<void> {
    return this.failAppends ? Promise.reject(new Error('disk full')) : super.append(record);
  }
  override rewrite(records: readonly JournalRecord[]): Promise<void> {
    return this.failRewrites ? Promise.reject(new Error('cannot rename')) : super.rewrite(records);
  }
}

describe('JournalStore', () => {
  it('loads the last line of each id, applies tombstones, skips torn and corrupt lines, and reports them', async () => {
    const journal = new InMemoryJournal();
    journal.text =
      line({ id: 'a', n: 1 }) + line({ id: 'b', n: 1 }) + 'not json\n' + line({ id: 'a', n: 2 }) + '{"type":"other","v":3}\n' + line({ id: 'b', n: 2, gone: true }) + '{"type":"item","v":1,"it';
    const { s } = store(journal);
    const load = await s.open();
    assert.deepEqual(load, { lines: 5, skipped: 2, unrecognized: 1 });
    assert.deepEqual([...s.values()], [{ id: 'a', n: 2 }]);
    assert.equal(await s.compact(), true, 'a journal with skipped lines is rewritten');
    assert.equal(journal.text, line({ id: 'a', n: 2 }), 'the unrecognised line is dropped, the tombstone does not stay');
  });

  it('keeps unrecognised lines verbatim when asked, and does not rewrite a journal that is already compact', async () => {
    const journal = new InMemoryJournal();
    journal.text = line({ id: 'a', n: 1 }) + '{"type":"from_the_future","v":9}\n';
    const { s } = store(journal, { unrecognized: 'keep' });
    await s.open();
    assert.equal(await s.compact(), false);
    assert.equal(journal.rewrites, 0);
    await s.put({ id: 'a', n: 2 });
    assert.equal(await s.compact(), true, 'a second compaction (after an append) rewrites');
    assert.equal(journal.text, line({ id: 'a', n: 2 }) + '{"type":"from_the_future","v":9}\n');
  });

  it('writes changes in the order made; a removal appends a tombstone that wins on the next load', async () => {
    const journal = new InMemoryJournal();
    const { s } = store(journal);
    await s.open();
    const writes = [s.put({ id: 'a', n: 1 }), s.put({ id: 'b', n: 1 }), s.put({ id: 'a', n: 2 }), s.remove({ id: 'b', n: 2, gone: true })];
    assert.deepEqual([...s.values()], [{ id: 'a', n: 2 }], 'memory changes at once');
    await Promise.all(writes);
    assert.equal(journal.text.split('\n').filter(Boolean).length, 4);
    const again = store(journal).s;
    await again.open();
    assert.deepEqual([...again.values()], [{ id: 'a', n: 2 }]);
  });

  it("'updated' order moves a changed record to the end; 'created' keeps its first place; set() changes in place", async () => {
    for (const order of ['created', 'updated'] as const) {
      const journal = new InMemoryJournal();
      journal.text = line({ id: 'a', n: 1 }) + line({ id: 'b', n: 1 }) + line({ id: 'a', n: 2 });
      const { s } = store(journal, { order });
      await s.open();
      assert.deepEqual([...s.values()].map((i) => i.id), order === 'created' ? ['a', 'b'] : ['b', 'a'], order);
      s.set({ id: 'b', n: 5 });
      assert.deepEqual([...s.values()].map((i) => i.id), order === 'created' ? ['a', 'b'] : ['b', 'a'], `${order}: set is in place`);
      await s.put({ id: order === 'created' ? 'a' : 'b', n: 9 });
      assert.deepEqual([...s.values()].map((i) => i.id), order === 'created' ? ['a', 'b'] : ['a', 'b'], `${order}: after put`);
    }
  });

  it("a failed write rejects; 'now' keeps the change in memory, 'when-durable' leaves memory as it was", async () => {
    const journal = new FlakyJournal();
    const { s } = store(journal);
    await s.open();
    await s.put({ id: 'a', n: 1 });
    journal.failAppends = true;
    await assert.rejects(s.put({ id: 'a', n: 2 }, { memory: 'when-durable' }), /disk full/);
    assert.deepEqual(s.get('a'), { id: 'a', n: 1 });
    await assert.rejects(s.put({ id: 'a', n: 3 }), /disk full/);
    assert.deepEqual(s.get('a'), { id: 'a', n: 3 });
    journal.failAppends = false;
    await s.put({ id: 'b', n: 1 }, { memory: 'when-durable' });
    assert.deepEqual(s.get('b'), { id: 'b', n: 1 }, 'the next write goes through');
  });

  it('keeps a record that is not durable in memory only, never in the journal', async () => {
    const journal = new InMemoryJournal();
    const { s } = store(journal);
    await s.open();
    await s.put({ id: 'big', n: 1, big: true });
    await s.put({ id: 'a', n: 1 });
    assert.equal(s.size, 2);
    assert.ok(!journal.text.includes('big'));
    await s.compact();
    assert.ok(!journal.text.includes('big'), 'nor after a compaction');
  });

  it(`compacts after ${COMPACT_AFTER_APPENDS} appends, once no write waits, running retention first`, async () => {
    const journal = new InMemoryJournal();
    let retained = 0;
    const { s } = store(journal, {
      beforeCompact: () => {
        retained++;
        s.forget('old');
      },
    });
    await s.open();
    await s.put({ id: 'old', n: 0 });
    const writes: Promise<void>[] = [];
    for (let i = 1; i < COMPACT_AFTER_APPENDS + 10; i++) writes.push(s.put({ id: `k${i % 5}`, n: i }));
    await Promise.all(writes);
    await s.flush();
    assert.equal(journal.rewrites, 1, 'one compaction, after the queued writes');
    assert.equal(retained, 1);
    const lines = journal.text.split('\n').filter(Boolean);
    assert.equal(lines.length, 5, 'the latest state of each kept record');
    assert.ok(!journal.text.includes('"old"'), 'retention ran before the rewrite');
    assert.ok(journal.text.includes(`"n":${COMPACT_AFTER_APPENDS + 9}`));
  });

  it('compacts past maxBytes; a compaction that fails is reported and the appends stay durable', async () => {
    const journal = new FlakyJournal();
    const { s, warnings } = store(journal, { maxBytes: 400 });
    await s.open();
    journal.failRewrites = true;
    for (let i = 0; i < 20; i++) await s.put({ id: 'a', n: i });
    assert.ok(warnings.some((w) => w.includes('could not compact') && w.includes('cannot rename')), warnings.join('\n'));
    assert.ok(s.journalBytes > 400);
    journal.failRewrites = false;
    await s.put({ id: 'a', n: 99 });
    assert.equal(journal.text, line({ id: 'a', n: 99 }));
    assert.equal(s.journalBytes, Buffer.byteLength(line({ id: 'a', n: 99 })));
  });
});
