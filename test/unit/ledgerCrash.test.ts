import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { OperationLedger } from '../../src/kernel/ledger/operationLedger';
import { FileJournal } from '../../src/base/node/fileJournal';
import { ADDED, EXISTING, SCENARIO_KEY, diskHashes, prepareWorkspace, runScenario, sha256 } from './helpers/ledgerScenario';
import type { LedgerTempDir } from './helpers/ledgerTempDir';
import { makeLedgerTempDir } from './helpers/ledgerTempDir';
import type { ChildExit } from './helpers/crashChild';
import { runHelperChild } from './helpers/crashChild';

type CrashPoint = 'before-write' | 'between-writes' | 'after-writes';

/** Runs the scenario in a child Node process that SIGKILLs itself at `point`, before the ledger's finish. */
function runChild(storage: string, workspace: string, point: CrashPoint): Promise<ChildExit> {
  return runHelperChild('ledgerCrashChild.js', [storage, workspace, point]);
}

describe('ledger: crash of the process between mint and finish', function () {
  this.timeout(30000);
  let tmp: LedgerTempDir;
  let storage: string;
  let workspace: string;
  const journals: FileJournal[] = [];

  beforeEach(async () => {
    tmp = await makeLedgerTempDir();
    storage = path.join(tmp.path, 'storage');
    workspace = path.join(tmp.path, 'workspace');
    await fs.mkdir(workspace);
    await prepareWorkspace(workspace);
  });
  afterEach(async () => {
    for (const j of journals.splice(0)) await j.close();
    await tmp.remove();
  });

  async function crashThenRestart(point: CrashPoint): Promise<OperationLedger> {
    const exit = await runChild(storage, workspace, point);
    if (process.platform === 'win32') {
      assert.notEqual(exit.code, 0, exit.stderr);
    } else {
      assert.equal(exit.signal, 'SIGKILL', `child exited with ${exit.code}: ${exit.stderr}`);
    }
    const journal = new FileJournal({ directory: storage, fileName: 'operations.jsonl' });
    journals.push(journal);
    const ledger = new OperationLedger({ journal });
    const summary = await ledger.open();
    assert.equal(summary.pending, 1, 'the killed child left its operation pending');
    return ledger;
  }

  it('killed after writing: reconciled as applied, and a retry with the same key writes nothing', async () => {
    const ledger = await crashThenRestart('after-writes');
    const [outcome] = await ledger.reconcile(diskHashes(workspace));
    assert.ok(outcome);
    assert.equal(outcome.status, 'applied');
    assert.equal(ledger.get({ operation_key: SCENARIO_KEY }).status, 'applied');

    const mtime = (await fs.stat(path.join(workspace, EXISTING.path))).mtimeMs;
    const retry = await runScenario(ledger, workspace);
    assert.deepEqual({ replayed: retry.replayed, writes: retry.writes }, { replayed: true, writes: 0 });
    assert.deepEqual(retry.result, ledger.get({ operation_key: SCENARIO_KEY }).result);
    assert.equal((await fs.stat(path.join(workspace, EXISTING.path))).mtimeMs, mtime, 'the file was not written again');
    assert.equal(sha256(await fs.readFile(path.join(workspace, EXISTING.path))), sha256(EXISTING.after));
  });

  it('killed before writing: reconciled as not_applied, workspace untouched, the key keeps that answer', async () => {
    const ledger = await crashThenRestart('before-write');
    const [outcome] = await ledger.reconcile(diskHashes(workspace));
    assert.ok(outcome);
    assert.equal(outcome.status, 'not_applied');
    await assert.rejects(fs.stat(path.join(workspace, ADDED.path)), /ENOENT/);

    const retry = await runScenario(ledger, workspace);
    assert.deepEqual({ replayed: retry.replayed, writes: retry.writes }, { replayed: true, writes: 0 });
    assert.equal((retry.result as { status: string }).status, 'not_applied');
    assert.equal(await fs.readFile(path.join(workspace, EXISTING.path), 'utf8'), EXISTING.before);
  });

  it('killed between two writes: reconciled as unknown with evidence', async () => {
    const ledger = await crashThenRestart('between-writes');
    const [outcome] = await ledger.reconcile(diskHashes(workspace));
    assert.ok(outcome);
    assert.equal(outcome.status, 'unknown');
    assert.deepEqual(
      outcome.evidence.map((e) => [e.path, e.found === e.expected_after, e.found === e.expected_before]),
      [
        [ADDED.path, true, false],
        [EXISTING.path, false, true],
      ],
    );
  });
});
