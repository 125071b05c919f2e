import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { InMemoryLogger } from '../../src/base/logger';
import { InMemoryJournal, decodeJournalText } from '../../src/base/journal';
import { FileJournal } from '../../src/base/node/fileJournal';
import type { LedgerTempDir } from './helpers/ledgerTempDir';
import { makeLedgerTempDir } from './helpers/ledgerTempDir';

describe('ledger journal: FileJournal', () => {
  let tmp: LedgerTempDir;
  let journals: FileJournal[];

  beforeEach(async () => {
    tmp = await makeLedgerTempDir();
    journals = [];
  });
  afterEach(async () => {
    for (const j of journals) await j.close();
    await tmp.remove();
  });

  function journal(directory = tmp.path, logger = new InMemoryLogger()): FileJournal {
    const j = new FileJournal({ directory, fileName: 'test.jsonl', logger });
    journals.push(j);
    return j;
  }

  it('round-trips appended records through a new instance', async () => {
    const a = journal();
    await a.append({ n: 1, text: 'line\nbreak' });
    await a.append({ n: 2, nested: { ok: true } });
    assert.deepEqual(await journal().load(), [{ n: 1, text: 'line\nbreak' }, { n: 2, nested: { ok: true } }]);
    const raw = await fs.readFile(a.path, 'utf8');
    assert.equal(raw.split('\n').length, 3, 'two lines, each terminated');
  });

  it('loads nothing from a missing file and creates the folder on the first append', async () => {
    const dir = path.join(tmp.path, 'deep', 'storage');
    const j = journal(dir);
    assert.deepEqual(await j.load(), []);
    await j.append({ first: true });
    assert.deepEqual(await journal(dir).load(), [{ first: true }]);
  });

  it('answers a load from what it read and wrote: the same records a fresh instance reads from the file', async () => {
    const file = path.join(tmp.path, 'test.jsonl');
    await fs.writeFile(file, '{"n":1}\n{"n":2,"half":"wr');
    const j = journal();
    assert.deepEqual(await j.load(), [{ n: 1 }]);
    await j.append({ n: 3 });
    assert.deepEqual(await j.load(), await journal().load(), 'after an append behind a torn line');
    await j.rewrite([{ n: 3 }, { n: 5 }]);
    await j.append({ n: 6 });
    const fresh = await journal().load();
    assert.deepEqual(fresh, [{ n: 3 }, { n: 5 }, { n: 6 }]);
    assert.deepEqual(await j.load(), fresh, 'after a rewrite and an append');
    // Read once: only this instance writes its file, so a change behind its back is not read again.
    await fs.writeFile(file, '{"n":99}\n');
    assert.deepEqual(await j.load(), fresh);

    // A missing file: what the first appends create.
    const dir = path.join(tmp.path, 'fresh');
    const k = journal(dir);
    assert.deepEqual(await k.load(), []);
    await k.append({ a: 1 });
    await k.append({ a: 2 });
    assert.deepEqual(await k.load(), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await journal(dir).load(), [{ a: 1 }, { a: 2 }]);
  });

  it('does not keep a large file in memory: above 1 MiB each load reads the file', async () => {
    const file = path.join(tmp.path, 'test.jsonl');
    const big = `{"pad":"${'x'.repeat(1024 * 1024)}"}\n`;
    await fs.writeFile(file, big);
    const j = journal();
    assert.equal((await j.load()).length, 1);
    await fs.writeFile(file, `${big}{"n":2}\n`);
    assert.equal((await j.load()).length, 2, 'read again, not kept');
  });

  it('rejects a relative folder', () => {
    assert.throws(() => new FileJournal({ directory: 'relative/dir', fileName: 'x.jsonl' }), /absolute/);
  });

  it('tolerates a torn last line, reports it, and starts the next append on a fresh line', async () => {
    const logger = new InMemoryLogger();
    const file = path.join(tmp.path, 'test.jsonl');
    await fs.writeFile(file, '{"n":1}\n{"n":2}\n{"n":3,"half":"writ');
    const j = journal(tmp.path, logger);
    assert.deepEqual(await j.load(), [{ n: 1 }, { n: 2 }]);
    assert.equal(j.lastLoadIssues.length, 1);
    assert.equal(j.lastLoadIssues[0]?.kind, 'torn_tail');
    assert.equal(j.lastLoadIssues[0]?.line, 3);
    assert.ok(logger.lines.some((l) => l.startsWith('[warn]') && l.includes('torn')), logger.lines.join('\n'));

    await j.append({ n: 4 });
    const reloaded = journal();
    assert.deepEqual(await reloaded.load(), [{ n: 1 }, { n: 2 }, { n: 4 }]);
    // The torn fragment is now a terminated middle line: still skipped, never glued to record 4.
    assert.equal(reloaded.lastLoadIssues[0]?.kind, 'corrupt');
  });

  it('accepts an unterminated last line that is complete JSON', async () => {
    await fs.writeFile(path.join(tmp.path, 'test.jsonl'), '{"n":1}\n{"n":2}');
    const j = journal();
    assert.deepEqual(await j.load(), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(j.lastLoadIssues, []);
    await j.append({ n: 3 });
    assert.deepEqual(await journal().load(), [{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('skips and logs a corrupt line in the middle, keeping everything around it', async () => {
    const logger = new InMemoryLogger();
    await fs.writeFile(path.join(tmp.path, 'test.jsonl'), '{"n":1}\n{not json at all\n[1,2]\n\n{"n":2}\n');
    const j = journal(tmp.path, logger);
    assert.deepEqual(await j.load(), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(
      j.lastLoadIssues.map((i) => [i.line, i.kind]),
      [
        [2, 'corrupt'],
        [3, 'corrupt'],
      ],
    );
    assert.equal(logger.lines.filter((l) => l.startsWith('[error]')).length, 2);
  });

  it('rewrite replaces the file atomically and leaves no temporary file', async () => {
    const j = journal();
    for (let n = 0; n < 10; n++) await j.append({ n });
    await j.rewrite([{ n: 'only' }]);
    assert.deepEqual(await journal().load(), [{ n: 'only' }]);
    assert.deepEqual(await fs.readdir(tmp.path), ['test.jsonl']);
    // Appends after a rewrite go to the new file, not the replaced one.
    await j.append({ n: 'after' });
    assert.deepEqual(await journal().load(), [{ n: 'only' }, { n: 'after' }]);
  });

  it('serializes concurrent appends: every line whole, none lost', async () => {
    const j = journal();
    const big = 'x'.repeat(64 * 1024);
    await Promise.all(Array.from({ length: 50 }, (_, n) => j.append({ n, big })));
    const records = await journal().load();
    assert.equal(records.length, 50);
    assert.deepEqual(records.map((r) => r.n).sort((a, b) => Number(a) - Number(b)), Array.from({ length: 50 }, (_, n) => n));
  });

  it('rejects a record that is not JSON without touching the file', async () => {
    const j = journal();
    await j.append({ ok: 1 });
    await assert.rejects(j.append({ bad: BigInt(1) }));
    await j.append({ ok: 2 });
    assert.deepEqual(await journal().load(), [{ ok: 1 }, { ok: 2 }]);
  });

  it('refuses appends after close', async () => {
    const j = journal();
    await j.close();
    await assert.rejects(j.append({ n: 1 }), /closed/);
  });
});

describe('ledger journal: InMemoryJournal and the codec', () => {
  it('behaves like the file journal for torn and corrupt lines', async () => {
    const j = new InMemoryJournal();
    j.text = '{"n":1}\ngarbage\n{"n":2}\n{"n":3';
    assert.deepEqual(await j.load(), [{ n: 1 }, { n: 2 }]);
    assert.deepEqual(
      j.lastLoadIssues.map((i) => i.kind),
      ['corrupt', 'torn_tail'],
    );
    await j.append({ n: 4 });
    assert.deepEqual(await j.load(), [{ n: 1 }, { n: 2 }, { n: 4 }]);
    await j.rewrite([{ n: 9 }]);
    assert.equal(j.text, '{"n":9}\n');
  });

  it('decodes empty text and blank lines to nothing', () => {
    assert.deepEqual(decodeJournalText(''), { records: [], issues: [] });
    assert.deepEqual(decodeJournalText('\n\n  \n'), { records: [], issues: [] });
  });
});
