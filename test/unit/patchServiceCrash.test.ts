/**
 * THREATS.md "Patches": kill the extension host between the file writes and the ledger's final record. A child
 * Node process (helpers/patchCrashChild.ts) assembles the real services on a storage folder, applies a two-file
 * patch with key K and SIGKILLs itself at a fault seam of the PatchService. The test then assembles the services
 * again on the same storage folder (which reconciles the cut-off operation from disk hashes) and checks, through
 * a real MCP client, what operation_status reports and that a retry with K writes nothing.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { CrashPoint } from './helpers/patchCrashScenario';
import { CRASH_AFTER, CRASH_ARGS, CRASH_EXPECTED_VERSIONS, CRASH_FILES, CRASH_KEY } from './helpers/patchCrashScenario';
import type { ApplyResult, PatchWorld } from './helpers/patchWorld';
import { makeDirs, openPatchWorld, sha256, snapshotTree, writeFiles } from './helpers/patchWorld';
import type { ChildExit } from './helpers/crashChild';
import { runHelperChild } from './helpers/crashChild';

const PATHS = Object.keys(CRASH_FILES) as (keyof typeof CRASH_FILES)[];
const PAST = new Date('2020-01-02T03:04:05Z');

function runChild(storage: string, root: string, point: CrashPoint): Promise<ChildExit> {
  return runHelperChild('patchCrashChild.js', [storage, root, point]);
}

describe('apply_patch: the extension host is killed mid-patch (child process, SIGKILL)', function () {
  this.timeout(60_000);
  let world: PatchWorld | undefined;
  let dirs: { tmp: string; root: string; storage: string };

  beforeEach(async () => {
    dirs = await makeDirs();
    await writeFiles(dirs.root, CRASH_FILES);
  });
  afterEach(async () => {
    await world?.close();
    world = undefined;
    await fsp.rm(dirs.tmp, { recursive: true, force: true });
  });

  /** Runs the child to its death, ages the files' mtimes, and restarts: assembleServices reconciles. */
  async function crashAndRestart(point: CrashPoint): Promise<PatchWorld> {
    const exit = await runChild(dirs.storage, dirs.root, point);
    if (process.platform === 'win32') assert.notEqual(exit.code, 0, exit.stderr);
    else assert.equal(exit.signal, 'SIGKILL', `the child exited with ${exit.code} instead of being killed: ${exit.stderr}`);
    const journal = await fsp.readFile(path.join(dirs.storage, 'operations.jsonl'), 'utf8');
    const lines = journal.trim().split('\n').map((l) => JSON.parse(l) as { record: { operation_key: string; status: string } });
    assert.deepEqual(lines.map((l) => [l.record.operation_key, l.record.status]), [[CRASH_KEY, 'pending']], 'the child died with the operation minted and not finished');
    for (const rel of PATHS) await fsp.utimes(path.join(dirs.root, rel), PAST, PAST);
    world = await openPatchWorld({}, { dirs });
    return world;
  }

  /** A retry with K and the same arguments: the stored result, nothing written, mtimes unchanged. */
  async function retryWritesNothing(w: PatchWorld, expectedStatus: string): Promise<ApplyResult> {
    const before = await snapshotTree(w.root);
    const retry = await w.apply({ ...CRASH_ARGS });
    assert.equal(retry.status, expectedStatus);
    assert.deepEqual(w.writes(), [], 'the retry wrote nothing');
    assert.deepEqual(await snapshotTree(w.root), before, 'bytes and mtimes unchanged');
    const again = await w.apply({ ...CRASH_ARGS });
    assert.deepEqual(again, retry, 'every retry gets the same stored answer');
    return retry;
  }

  it('killed after every write, before the final record → reconciled as applied; a retry with K does not apply twice', async () => {
    const w = await crashAndRestart('before-finish');
    for (const rel of PATHS) assert.equal(await fsp.readFile(w.abs(rel), 'utf8'), CRASH_AFTER[rel], `${rel} was written before the kill`);

    const st = await w.status({ operation_key: CRASH_KEY });
    assert.equal(st.status, 'applied');
    assert.ok(st.finished_at);
    assert.deepEqual(st.events.map((e) => e.type), ['minted', 'reconciled']);
    const reconciled = st.events[1];
    assert.equal(reconciled?.status, 'applied');
    assert.deepEqual(
      reconciled?.evidence,
      PATHS.map((rel) => ({ path: rel, expected_before: sha256(CRASH_FILES[rel]), expected_after: sha256(CRASH_AFTER[rel]), found: sha256(CRASH_AFTER[rel]) })),
    );
    assert.deepEqual(await w.status({ operation_id: st.operation_id }), st);

    const retry = await retryWritesNothing(w, 'applied');
    assert.equal(retry.operation_id, st.operation_id);
    assert.deepEqual(retry.files.map((f) => [f.path, f.before_version, f.after_version]), PATHS.map((rel) => [rel, CRASH_EXPECTED_VERSIONS[rel], sha256(CRASH_AFTER[rel])]));

    // The same patch under a new key is refused (its hunks and versions no longer match), so it cannot apply
    // twice either.
    const e = await w.applyError({ ...CRASH_ARGS, operation_key: 'crash-key-2' });
    assert.ok(['PATCH_CONTEXT_NOT_FOUND', 'VERSION_CONFLICT'].includes(e.code), e.code);
    assert.deepEqual(w.writes(), []);
  });

  it('killed between the first and the second write → unknown, with evidence naming each file', async () => {
    const w = await crashAndRestart('after-first-write');
    const [first, second] = PATHS as [keyof typeof CRASH_FILES, keyof typeof CRASH_FILES];
    assert.equal(await fsp.readFile(w.abs(first), 'utf8'), CRASH_AFTER[first]);
    assert.equal(await fsp.readFile(w.abs(second), 'utf8'), CRASH_FILES[second]);

    const st = await w.status({ operation_key: CRASH_KEY });
    assert.equal(st.status, 'unknown');
    const reconciled = st.events.find((e) => e.type === 'reconciled');
    assert.equal(reconciled?.status, 'unknown');
    assert.deepEqual(reconciled?.evidence, [
      { path: first, expected_before: sha256(CRASH_FILES[first]), expected_after: sha256(CRASH_AFTER[first]), found: sha256(CRASH_AFTER[first]) },
      { path: second, expected_before: sha256(CRASH_FILES[second]), expected_after: sha256(CRASH_AFTER[second]), found: sha256(CRASH_FILES[second]) },
    ]);

    const retry = await retryWritesNothing(w, 'unknown');
    assert.match(retry.reason ?? '', /neither/);
    assert.match(retry.hint ?? '', /new operation_key/);
  });

  it('killed before any write → not_applied; the key keeps that answer and a new key applies once', async () => {
    const w = await crashAndRestart('before-write');
    const st = await w.status({ operation_key: CRASH_KEY });
    assert.equal(st.status, 'not_applied');
    const reconciled = st.events.find((e) => e.type === 'reconciled');
    assert.deepEqual(reconciled?.evidence?.map((e) => [e.path, e.found === e.expected_before]), PATHS.map((rel) => [rel, true]));

    const retry = await retryWritesNothing(w, 'not_applied');
    assert.match(retry.hint ?? '', /new operation_key/);
    for (const rel of PATHS) assert.equal(await fsp.readFile(w.abs(rel), 'utf8'), CRASH_FILES[rel]);

    const fresh = await w.apply({ ...CRASH_ARGS, operation_key: 'crash-key-fresh' });
    assert.equal(fresh.status, 'applied');
    for (const rel of PATHS) assert.equal(await fsp.readFile(w.abs(rel), 'utf8'), CRASH_AFTER[rel]);
  });
});
