import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { hashArguments } from '../../src/base/canonicalJson';
import type { MintRequest, OperationLedgerOptions } from '../../src/kernel/ledger/operationLedger';
import { OperationLedger } from '../../src/kernel/ledger/operationLedger';
import type { OperationRecord } from '../../src/kernel/ledger/operationRecord';
import type { JournalRecord } from '../../src/base/journal';
import { InMemoryJournal } from '../../src/base/journal';
import { InMemoryLogger } from '../../src/base/logger';
import { FileJournal } from '../../src/base/node/fileJournal';
import { ADDED, EXISTING, SCENARIO_ARGS, SCENARIO_KEY, diskHashes, prepareWorkspace, runScenario, sha256 } from './helpers/ledgerScenario';
import type { LedgerTempDir } from './helpers/ledgerTempDir';
import { makeLedgerTempDir } from './helpers/ledgerTempDir';

const HOUR = 60 * 60 * 1000;

function mintRequest(key: string, args: unknown = { key }): MintRequest {
  return {
    operation_key: key,
    args_hash: hashArguments(args),
    workspace_id: 'ws',
    files: [{ path: `${key}.txt`, kind: 'add', after_version: sha256(key) }],
    changes: [{ path: `${key}.txt`, kind: 'add', before_hash: null, after_hash: sha256(key) }],
  };
}

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-01-01T00:00:00Z')): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

async function openLedger(options: OperationLedgerOptions): Promise<OperationLedger> {
  const ledger = new OperationLedger(options);
  await ledger.open();
  return ledger;
}

function lineCount(text: string): number {
  return text.split('\n').filter((l) => l.trim() !== '').length;
}

describe('ledger: OperationLedger', () => {
  it('mints durably before resolving, finishes, and finds the record by key and by id', async () => {
    const journal = new InMemoryJournal();
    const clock = manualClock();
    const ledger = await openLedger({ journal, now: clock.now });
    const minted = await ledger.mint(mintRequest('k1'));
    assert.match(minted.operation_id, /^op_[0-9a-f]{16}$/);
    assert.equal(minted.status, 'pending');
    assert.equal(minted.kind, 'patch');
    assert.equal(minted.created_at, '2026-01-01T00:00:00.000Z');
    assert.equal(minted.finished_at, undefined);
    assert.deepEqual(minted.events, [{ type: 'minted', at: '2026-01-01T00:00:00.000Z' }]);
    assert.ok(journal.text.includes(minted.operation_id) && journal.text.includes('"pending"'), 'minted state is in the journal');

    clock.advance(1500);
    const result = { status: 'applied', operation_id: minted.operation_id, files: minted.files };
    const finished = await ledger.finish(minted.operation_id, { status: 'applied', result, reason: 'all files written' });
    assert.equal(finished.status, 'applied');
    assert.equal(finished.finished_at, '2026-01-01T00:00:01.500Z');
    assert.deepEqual(finished.events[1], { type: 'finished', at: '2026-01-01T00:00:01.500Z', status: 'applied', reason: 'all files written' });
    assert.deepEqual(finished.result, result);

    assert.deepEqual(ledger.get({ operation_key: 'k1' }), finished);
    assert.deepEqual(ledger.get({ operation_id: minted.operation_id }), finished);
    assert.throws(
      () => ledger.get({ operation_id: 'op_0000000000000000' }),
      (err: unknown) => ToolError.is(err, 'OPERATION_NOT_FOUND') && typeof err.hint === 'string',
    );
    assert.throws(() => ledger.get({ operation_key: 'nope' }), (err: unknown) => ToolError.is(err, 'OPERATION_NOT_FOUND'));
  });

  it('returns copies: changing a returned record does not change the ledger', async () => {
    const ledger = await openLedger({ journal: new InMemoryJournal() });
    const minted = await ledger.mint(mintRequest('k1'));
    (minted.files as unknown[]).length = 0;
    assert.equal(ledger.get({ operation_key: 'k1' }).files.length, 1);
  });

  it('looks up a key: same arguments → the record, other arguments → OPERATION_KEY_CONFLICT, unknown → undefined', async () => {
    const ledger = await openLedger({ journal: new InMemoryJournal() });
    const args = { workspace_id: 'ws', patch: 'P', expected_versions: { a: 'v1' } };
    const minted = await ledger.mint(mintRequest('k1', args));
    await ledger.finish(minted.operation_id, { status: 'applied', result: { status: 'applied' } });

    assert.equal(ledger.lookupKey('unknown', hashArguments(args)), undefined);
    const same = ledger.lookupKey('k1', hashArguments({ expected_versions: { a: 'v1' }, patch: 'P', workspace_id: 'ws' }));
    assert.equal(same?.operation_id, minted.operation_id);
    assert.deepEqual(same?.result, { status: 'applied' });

    assert.throws(
      () => ledger.lookupKey('k1', hashArguments({ ...args, patch: 'other' })),
      (err: unknown) =>
        ToolError.is(err, 'OPERATION_KEY_CONFLICT') &&
        err.details?.operation_key === 'k1' &&
        err.details.operation_id === minted.operation_id &&
        /new operation_key/.test(err.hint ?? ''),
    );
  });

  it('lets only one of two racing mints with the same key through', async () => {
    const journal = new InMemoryJournal();
    const ledger = await openLedger({ journal });
    const [first, second] = await Promise.allSettled([ledger.mint(mintRequest('k1')), ledger.mint(mintRequest('k1'))]);
    assert.equal(first.status, 'fulfilled');
    assert.equal(second.status, 'rejected');
    assert.ok(second.status === 'rejected' && ToolError.is(second.reason, 'OPERATION_KEY_CONFLICT'));
    assert.ok(second.status === 'rejected' && (second.reason as ToolError).details?.in_flight === true);
    assert.equal(ledger.list().length, 1);
    assert.equal(lineCount(journal.text), 1);
  });

  it('releases the key when the minted record cannot be written', async () => {
    class FailingJournal extends InMemoryJournal {
      fail = true;
      override append(record: JournalRecord): Promise<void> {
        return this.fail ? Promise.reject(new Error('ENOSPC')) : super.append(record);
      }
    }
    const journal = new FailingJournal();
    const ledger = await openLedger({ journal });
    await assert.rejects(ledger.mint(mintRequest('k1')), (err: unknown) => ToolError.is(err, 'INTERNAL') && /nothing was written/.test((err as Error).message));
    assert.equal(ledger.lookupKey('k1', hashArguments({ key: 'k1' })), undefined);
    journal.fail = false;
    assert.equal((await ledger.mint(mintRequest('k1'))).status, 'pending');
  });

  it('refuses to finish twice or to finish an unknown operation', async () => {
    const ledger = await openLedger({ journal: new InMemoryJournal() });
    const minted = await ledger.mint(mintRequest('k1'));
    await ledger.finish(minted.operation_id, { status: 'failed', result: { status: 'failed' } });
    await assert.rejects(ledger.finish(minted.operation_id, { status: 'applied', result: {} }), (err: unknown) => ToolError.is(err, 'INTERNAL'));
    await assert.rejects(ledger.finish('op_ffffffffffffffff', { status: 'applied', result: {} }), (err: unknown) => ToolError.is(err, 'OPERATION_NOT_FOUND'));
  });

  it('refuses calls before open', () => {
    const ledger = new OperationLedger({ journal: new InMemoryJournal() });
    assert.throws(() => ledger.lookupKey('k', 'h'), (err: unknown) => ToolError.is(err, 'INTERNAL'));
  });

  it('tells listeners about each durable change until disposed', async () => {
    const ledger = await openLedger({ journal: new InMemoryJournal() });
    const seen: string[] = [];
    const subscription = ledger.onDidChange((r) => seen.push(`${r.operation_key}:${r.status}`));
    const minted = await ledger.mint(mintRequest('k1'));
    await ledger.finish(minted.operation_id, { status: 'applied', result: {} });
    subscription.dispose();
    await ledger.mint(mintRequest('k2'));
    assert.deepEqual(seen, ['k1:pending', 'k1:applied']);
  });

  describe('compaction and retention', () => {
    it('compacts on open to one line per operation in its latest state, shrinking the file', async () => {
      const journal = new InMemoryJournal();
      const first = await openLedger({ journal });
      for (let i = 0; i < 20; i++) {
        const minted = await first.mint(mintRequest(`k${i}`));
        await first.finish(minted.operation_id, { status: 'applied', result: { i } });
      }
      const pending = await first.mint(mintRequest('still-pending'));
      assert.equal(lineCount(journal.text), 41);
      const before = journal.text.length;

      const second = new OperationLedger({ journal });
      const summary = await second.open();
      assert.deepEqual(summary, { loaded: 21, pending: 1, rolled_off: 0, unrecognized: 0, skipped_lines: 0, compacted: true });
      assert.equal(lineCount(journal.text), 21);
      assert.ok(journal.text.length < before);
      assert.equal(second.get({ operation_key: 'k7' }).status, 'applied');
      assert.deepEqual(second.get({ operation_key: 'k7' }).result, { i: 7 });
      assert.equal(second.get({ operation_id: pending.operation_id }).status, 'pending');
      assert.deepEqual(
        second.list().map((r) => r.operation_key).slice(0, 3),
        ['k0', 'k1', 'k2'],
        'mint order is kept',
      );

      const rewrites = journal.rewrites;
      await new OperationLedger({ journal }).open();
      assert.equal(journal.rewrites, rewrites, 'an already compact journal is not rewritten');
    });

    it('drops torn and corrupt lines during compaction but keeps unrecognised records verbatim', async () => {
      const journal = new InMemoryJournal();
      const first = await openLedger({ journal });
      await first.mint(mintRequest('k1'));
      journal.text += '{"type":"from_the_future","v":9}\nnot json\n{"type":"patch_operation","v":1,"record":{"oops":';
      const logger = new InMemoryLogger();
      const summary = await new OperationLedger({ journal, logger }).open();
      assert.equal(summary.unrecognized, 1);
      assert.equal(summary.skipped_lines, 2);
      assert.ok(journal.text.includes('{"type":"from_the_future","v":9}'));
      assert.ok(!journal.text.includes('not json'));
      assert.equal(lineCount(journal.text), 2);
      assert.ok(logger.lines.some((l) => l.includes('does not understand')));
    });

    it('keeps only the newest maxRecords finished operations, and every pending one', async () => {
      const journal = new InMemoryJournal();
      const clock = manualClock();
      const first = await openLedger({ journal, now: clock.now });
      await first.mint(mintRequest('pending-old'));
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        const minted = await first.mint(mintRequest(`k${i}`));
        await first.finish(minted.operation_id, { status: 'applied', result: {} });
      }
      const logger = new InMemoryLogger();
      const second = new OperationLedger({ journal, now: clock.now, maxRecords: 3, logger });
      const summary = await second.open();
      assert.equal(summary.rolled_off, 2);
      assert.deepEqual(second.list().map((r) => r.operation_key), ['pending-old', 'k2', 'k3', 'k4']);
      assert.equal(second.lookupKey('k0', hashArguments({ key: 'k0' })), undefined, 'a rolled-off key is free again');
      assert.ok(logger.lines.some((l) => l.includes('rolled off 2')));
      assert.equal(lineCount(journal.text), 4);
    });

    it('rolls off finished operations older than maxAgeMs, counted from finished_at', async () => {
      const journal = new InMemoryJournal();
      const clock = manualClock();
      const first = await openLedger({ journal, now: clock.now });
      const old = await first.mint(mintRequest('old'));
      await first.finish(old.operation_id, { status: 'applied', result: {} });
      const longRunning = await first.mint(mintRequest('finished-late'));
      await first.mint(mintRequest('never-finished'));
      clock.advance(20 * HOUR);
      await first.finish(longRunning.operation_id, { status: 'failed', result: {} });
      clock.advance(10 * HOUR);

      const second = await openLedger({ journal, now: clock.now, maxAgeMs: 24 * HOUR });
      assert.deepEqual(second.list().map((r) => r.operation_key), ['finished-late', 'never-finished']);
    });
  });

  describe('reconcile and restart (real files)', () => {
    let tmp: LedgerTempDir;
    let workspace: string;
    let storage: string;
    const open: FileJournal[] = [];

    beforeEach(async () => {
      tmp = await makeLedgerTempDir();
      workspace = path.join(tmp.path, 'workspace');
      storage = path.join(tmp.path, 'storage');
      await fs.mkdir(workspace);
      await prepareWorkspace(workspace);
    });
    afterEach(async () => {
      for (const j of open.splice(0)) await j.close();
      await tmp.remove();
    });

    /** A new journal and ledger over the same file: what the next extension start does. */
    async function restart(options: Partial<OperationLedgerOptions> = {}): Promise<OperationLedger> {
      const journal = new FileJournal({ directory: storage, fileName: 'operations.jsonl' });
      open.push(journal);
      return openLedger({ journal, ...options });
    }

    /** Runs the scenario but "crashes" (throws) at a point, leaving the record pending. */
    async function crashAt(point: 'afterMint' | 'betweenWrites' | 'afterWrites'): Promise<OperationRecord> {
      const ledger = await restart();
      let minted: OperationRecord | undefined;
      const crash = (): never => {
        throw new Error('crash');
      };
      await assert.rejects(
        runScenario(ledger, workspace, {
          afterMint: (r) => {
            minted = r;
            if (point === 'afterMint') crash();
          },
          betweenWrites: point === 'betweenWrites' ? crash : undefined,
          afterWrites: point === 'afterWrites' ? crash : undefined,
        }),
        /crash/,
      );
      assert.ok(minted);
      return minted;
    }

    it('keeps finished records across a restart', async () => {
      const first = await restart();
      const outcome = await runScenario(first, workspace);
      assert.equal(outcome.writes, 2);
      const second = await restart();
      const record = second.get({ operation_key: SCENARIO_KEY });
      assert.equal(record.status, 'applied');
      assert.deepEqual(record.result, outcome.result);
      assert.deepEqual(await second.reconcile(diskHashes(workspace)), [], 'nothing to reconcile');
    });

    it('reconciles an operation cut off after its writes as applied; a retry does not write again', async () => {
      const minted = await crashAt('afterWrites');
      const ledger = await restart();
      assert.equal(ledger.get({ operation_id: minted.operation_id }).status, 'pending');
      const outcomes = await ledger.reconcile(diskHashes(workspace));
      assert.equal(outcomes.length, 1);
      assert.equal(outcomes[0]?.status, 'applied');

      const record = ledger.get({ operation_key: SCENARIO_KEY });
      assert.equal(record.status, 'applied');
      assert.ok(record.finished_at);
      const event = record.events[record.events.length - 1];
      assert.ok(event);
      assert.equal(event.type, 'reconciled');
      assert.equal(event.status, 'applied');
      assert.deepEqual(record.result, { status: 'applied', operation_id: minted.operation_id, files: minted.files, reason: event.reason });

      const retry = await runScenario(ledger, workspace);
      assert.equal(retry.replayed, true);
      assert.equal(retry.writes, 0);
      assert.deepEqual(retry.result, record.result);
    });

    it('reconciles an operation cut off before any write as not_applied, and keeps that answer for the key', async () => {
      const minted = await crashAt('afterMint');
      const ledger = await restart();
      const [outcome] = await ledger.reconcile(diskHashes(workspace));
      assert.ok(outcome);
      assert.equal(outcome.status, 'not_applied');
      const record = ledger.get({ operation_id: minted.operation_id });
      assert.equal(record.status, 'not_applied');
      const result = record.result as { status: string; hint: string };
      assert.equal(result.status, 'not_applied');
      assert.match(result.hint, /new operation_key/);

      const retry = await runScenario(ledger, workspace);
      assert.equal(retry.replayed, true);
      assert.equal(retry.writes, 0);
      assert.equal(await fs.readFile(path.join(workspace, EXISTING.path), 'utf8'), EXISTING.before);
    });

    it('reconciles a half-written operation as unknown, with evidence per path', async () => {
      await crashAt('betweenWrites');
      const ledger = await restart();
      const [outcome] = await ledger.reconcile(diskHashes(workspace));
      assert.ok(outcome);
      assert.equal(outcome.status, 'unknown');
      assert.deepEqual(outcome.evidence, [
        { path: ADDED.path, expected_before: null, expected_after: sha256(ADDED.content), found: sha256(ADDED.content) },
        { path: EXISTING.path, expected_before: sha256(EXISTING.before), expected_after: sha256(EXISTING.after), found: sha256(EXISTING.before) },
      ]);
      const record = ledger.get({ operation_key: SCENARIO_KEY });
      assert.equal(record.status, 'unknown');
      assert.deepEqual(record.events[record.events.length - 1]?.evidence, outcome.evidence);
    });

    it('counts a folder or an unreadable path as unknown', async () => {
      await crashAt('afterMint');
      await fs.mkdir(path.join(workspace, ADDED.path));
      const ledger = await restart();
      const [outcome] = await ledger.reconcile(async (p) => {
        if (p === EXISTING.path) throw new Error('EACCES');
        return diskHashes(workspace)(p);
      });
      assert.ok(outcome);
      assert.equal(outcome.status, 'unknown');
      assert.deepEqual(
        outcome.evidence.map((e) => e.found),
        ['directory', 'unreadable'],
      );
    });

    it('stores the reconciled outcome durably: the next start sees it and has nothing to reconcile', async () => {
      await crashAt('afterWrites');
      const second = await restart();
      await second.reconcile(diskHashes(workspace));
      const third = await restart();
      assert.equal(third.get({ operation_key: SCENARIO_KEY }).status, 'applied');
      assert.deepEqual(await third.reconcile(diskHashes(workspace)), []);
      assert.deepEqual(
        third.get({ operation_key: SCENARIO_KEY }).events.map((e) => e.type),
        ['minted', 'reconciled'],
      );
    });

    it('never reconciles an operation minted in this session (it is in flight)', async () => {
      const ledger = await restart();
      await ledger.mint(mintRequest('in-flight'));
      assert.deepEqual(await ledger.reconcile(diskHashes(workspace)), []);
      assert.equal(ledger.get({ operation_key: 'in-flight' }).status, 'pending');
      // A retry of an in-flight key gets the pending record back, so the caller does not run it twice.
      assert.equal(ledger.lookupKey('in-flight', hashArguments({ key: 'in-flight' }))?.status, 'pending');
    });

    it('keeps the same arguments hash for the scenario across processes', () => {
      assert.equal(hashArguments(SCENARIO_ARGS), hashArguments(JSON.parse(JSON.stringify(SCENARIO_ARGS))));
    });
  });
});
