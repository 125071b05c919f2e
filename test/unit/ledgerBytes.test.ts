import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { hashArguments } from '../../src/base/canonicalJson';
import type { MintRequest } from '../../src/kernel/ledger/operationLedger';
import { DEFAULT_LEDGER_MAX_RECORD_BYTES, OperationLedger } from '../../src/kernel/ledger/operationLedger';
import { InMemoryJournal } from '../../src/base/journal';
import { openPatchWorld, sha256, v4a } from './helpers/patchWorld';

function mintRequest(key: string, paths = 1, pathLength = 8): MintRequest {
  const names = Array.from({ length: paths }, (_, i) => `${key}-${String(i).padStart(pathLength, '0')}.txt`);
  return {
    operation_key: key,
    args_hash: hashArguments({ key }),
    workspace_id: 'ws',
    files: names.map((p) => ({ path: p, kind: 'add' as const, after_version: sha256(p) })),
    changes: names.map((p) => ({ path: p, kind: 'add' as const, before_hash: null, after_hash: sha256(p) })),
  };
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');

describe('ledger: bounded by bytes as well as records', () => {
  it('keeps a preview result without its diffs when the record would exceed maxRecordBytes', async () => {
    const journal = new InMemoryJournal();
    const ledger = new OperationLedger({ journal, maxRecordBytes: 64 * 1024 });
    await ledger.open();
    const minted = await ledger.mint(mintRequest('preview', 4));
    const files = minted.files.map((f) => ({ ...f, diff: `+${'x'.repeat(40_000)}\n` }));
    await ledger.finish(minted.operation_id, { status: 'checked', result: { status: 'checked', operation_id: minted.operation_id, files } });
    const stored = ledger.get({ operation_key: 'preview' }).result as { files: Record<string, unknown>[]; reason: string };
    assert.deepEqual(stored.files.map((f) => Object.keys(f).sort()), minted.files.map(() => ['after_version', 'kind', 'path']));
    assert.match(stored.reason, /diffs were not kept.*ledger_record_bytes/);
    for (const line of lines(journal.text)) assert.ok(bytes(line) <= 64 * 1024, `a journal line of ${bytes(line)} bytes`);

    // A small result keeps its diffs.
    const small = await ledger.mint(mintRequest('small', 1));
    await ledger.finish(small.operation_id, { status: 'checked', result: { status: 'checked', files: [{ path: 'a', diff: '+a\n' }] } });
    assert.deepEqual((ledger.get({ operation_key: 'small' }).result as { files: unknown[] }).files, [{ path: 'a', diff: '+a\n' }]);
  });

  it('refuses to mint a record over maxRecordBytes, naming the limit, and writes nothing', async () => {
    const journal = new InMemoryJournal();
    const ledger = new OperationLedger({ journal, maxRecordBytes: 16 * 1024 });
    await ledger.open();
    await assert.rejects(ledger.mint(mintRequest('huge', 200)), (e: unknown) => {
      assert.ok(ToolError.is(e, 'TOO_LARGE'), String(e));
      assert.equal(e.details?.limit, 'ledger_record_bytes');
      assert.equal(e.details?.max, 16 * 1024);
      return true;
    });
    assert.equal(journal.text, '');
    assert.ok(await ledger.mint(mintRequest('huge', 1)), 'the key is still free');
  });

  it('compacts while open once the journal passes maxBytes: the oldest finished go, pending ones stay', async () => {
    const journal = new InMemoryJournal();
    const maxBytes = 200 * 1024;
    const ledger = new OperationLedger({ journal, maxBytes });
    await ledger.open();
    const pending = await ledger.mint(mintRequest('still-running', 20));
    for (let i = 0; i < 60; i++) {
      const r = await ledger.mint(mintRequest(`k${i}`, 20));
      await ledger.finish(r.operation_id, { status: 'applied', result: { status: 'applied', files: r.files } });
      assert.ok(bytes(journal.text) <= maxBytes + 64 * 1024, `journal at ${bytes(journal.text)} bytes after ${i + 1} operations`);
    }
    assert.ok(journal.rewrites >= 1, 'it compacted');
    assert.equal(ledger.get({ operation_id: pending.operation_id }).status, 'pending');
    assert.equal(ledger.get({ operation_key: 'k59' }).status, 'applied');
    assert.throws(() => ledger.get({ operation_key: 'k0' }), (e: unknown) => ToolError.is(e, 'OPERATION_NOT_FOUND'));
    assert.equal(ledger.lookupKey('k0', hashArguments({ key: 'k0' })), undefined, 'a rolled-off key is free again');

    // What is on disk is what a restart sees.
    const again = new OperationLedger({ journal, maxBytes });
    await again.open();
    assert.deepEqual(again.list().map((r) => r.operation_id), ledger.list().map((r) => r.operation_id));
  });

  it('applies the byte budget at open too', async () => {
    const journal = new InMemoryJournal();
    const first = new OperationLedger({ journal });
    await first.open();
    for (let i = 0; i < 40; i++) {
      const r = await first.mint(mintRequest(`k${i}`, 20));
      await first.finish(r.operation_id, { status: 'applied', result: { status: 'applied', files: r.files } });
    }
    const maxBytes = 100 * 1024;
    const second = new OperationLedger({ journal, maxBytes });
    const summary = await second.open();
    assert.ok(summary.rolled_off > 0);
    assert.ok(bytes(journal.text) <= maxBytes, `${bytes(journal.text)} bytes after open`);
    assert.equal(second.get({ operation_key: 'k39' }).status, 'applied', 'the newest stay');
  });

  it('a preview of the largest allowed patch adds far less to the journal than its text', async function () {
    this.timeout(60_000);
    const world = await openPatchWorld();
    try {
      const content = Array.from({ length: 256 }, () => `+${'y'.repeat(60)}`).join('\n');
      const sections = Array.from({ length: 1000 }, (_, i) => `*** Add File: p/d${i % 20}/f${i}.txt\n${content}`);
      const patch = v4a(...sections);
      const r = await world.apply<{ status: string; files: { diff?: string }[] }>({ patch, expected_versions: {}, operation_key: 'big-preview', check_only: true });
      assert.equal(r.status, 'checked');
      assert.ok(r.files.every((f) => (f.diff ?? '').length > 15_000), 'the caller gets every diff');
      const size = (await fsp.stat(path.join(world.storage, 'operations.jsonl'))).size;
      assert.ok(size < 2 * DEFAULT_LEDGER_MAX_RECORD_BYTES + 1024 * 1024, `the journal holds ${size} bytes for a ${patch.length}-character patch`);
      // A retry with the same key gets the stored result back, which says why the diffs are missing.
      const again = await world.apply<{ status: string; reason?: string; files: { diff?: string }[] }>({ patch, expected_versions: {}, operation_key: 'big-preview', check_only: true });
      assert.equal(again.status, 'checked');
      assert.match(again.reason ?? '', /diffs were not kept/);
    } finally {
      await world.dispose();
    }
  });
});
