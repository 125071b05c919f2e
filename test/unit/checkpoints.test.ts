/**
 * Checkpoints of a work (src/features/review/common): an agent patches through the real tools (an SDK client on the
 * assembled services); the developer rewinds two checkpoints back and redoes it. The files on disk, the ledger and
 * what the agent claims from its steering queue agree; a file changed outside the work refuses the rewind without a
 * byte written; a write failing half-way leaves every file as it was; content no longer kept refuses too.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import { parsePageMessage } from '../../src/shared/panelProtocol';
import { buildPanelState } from '../../src/vscode/panel/panelModel';
import type { PatchFaults } from '../../src/features/patches/common/patchService';
import { contentVersion } from '../../src/features/patches/common/version';
import { occupancyScope } from '../../src/kernel/workspaces';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { FileBlobStore } from '../../src/features/review/node/fileBlobStore';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree } from './helpers/workspaceFixture';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const version = (s: string): string => contentVersion(utf8(s));

describe('checkpoints: rewind a work to one of its operations, and redo', function () {
  this.timeout(30_000);
  let root: string;
  let storage: string;
  let assembled: AssembledServices;
  let agent: Harness;
  let workId: string;
  let failAt: ((index: number, p: string) => boolean) | undefined;
  const read = (rel: string): Promise<string> => fsp.readFile(path.join(root, rel), 'utf8');
  const exists = (rel: string): Promise<boolean> => fsp.stat(path.join(root, rel)).then(() => true, () => false);

  async function open(store?: { maxBytes?: number; maxBlobBytes?: number }): Promise<void> {
    const folders = [{ root, name: 'proj', profile: 'write' as const }];
    const faults: PatchFaults = { failWrite: (i, p) => failAt?.(i, p) ?? false };
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource(folders)), storage, {
        faults,
        ...(store ? { checkpointStore: store } : {}),
      }),
    );
    agent = await connectHarness(folders, { assembled });
  }

  /** The agent's three operations: a.txt one→two; add c.txt; a.txt two→three and b.txt B→BB. */
  async function threeOperations(): Promise<void> {
    workId = ok<{ work_id: string }>(await agent.call('work_open', { workspace_id: 'proj', title: 'checkpoints' })).work_id;
    const patch = async (key: string, text: string, expected: Record<string, string>): Promise<void> => {
      const r = ok<{ status: string }>(await agent.call('apply_patch', { workspace_id: 'proj', patch: text, expected_versions: expected, operation_key: key, work_id: workId }));
      assert.equal(r.status, 'applied');
    };
    await patch('op-1', '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch', { 'a.txt': version('one\n') });
    await patch('op-2', '*** Begin Patch\n*** Add File: c.txt\n+new file\n*** End Patch', {});
    await patch('op-3', '*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+three\n*** Update File: b.txt\n@@\n-B\n+BB\n*** End Patch', { 'a.txt': version('two\n'), 'b.txt': version('B\n') });
  }

  beforeEach(async () => {
    root = await makeTree({ 'a.txt': 'one\n', 'b.txt': 'B\n' });
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-checkpoints-'));
    failAt = undefined;
  });
  afterEach(async () => {
    await agent.close();
    await assembled.shutdown();
    await removeTree(root);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('lists every applied operation of the work, rewinds two back, tells the agent, and redoes it', async () => {
    await open();
    await threeOperations();
    const list = assembled.checkpoints.list(workId);
    assert.deepEqual(list.map((c) => [c.index, c.operation_key, c.kind, c.files]), [
      [1, 'op-1', 'patch', ['a.txt']],
      [2, 'op-2', 'patch', ['c.txt']],
      [3, 'op-3', 'patch', ['a.txt', 'b.txt']],
    ]);
    assert.equal(list[2]?.summary, 'update a.txt, update b.txt');
    assert.equal(assembled.checkpoints.canRedo(workId), false);

    const back = await assembled.checkpoints.rewind(workId, 1);
    assert.equal(await read('a.txt'), 'two\n');
    assert.equal(await read('b.txt'), 'B\n');
    assert.equal(await exists('c.txt'), false);
    assert.equal(back.told, true);
    assert.deepEqual(back.notice, {
      action: 'rewind',
      checkpoint: 1,
      operation_id: list[0]?.operation_id,
      files: [
        { path: 'a.txt', version: version('two\n') },
        { path: 'b.txt', version: version('B\n') },
        { path: 'c.txt', version: null },
      ],
    });
    // The rewind is an operation of the work in the ledger, and a checkpoint of its own.
    const record = assembled.ledger.get({ operation_id: back.operation_id });
    assert.equal(record.status, 'applied');
    assert.equal(record.work_id, workId);
    const after = assembled.checkpoints.list(workId);
    assert.equal(after.length, 4);
    assert.equal(after[3]?.kind, 'rewind');
    assert.equal(after[3]?.summary, 'Rewind to checkpoint 1');
    assert.equal(assembled.checkpoints.canRedo(workId), true);

    // The agent claims what happened, structured, from its queue.
    const claimed = ok<{ instruction: { kind: string; text: string; rewind: unknown } }>(await agent.call('steer_claim_next', { work_id: workId }));
    assert.equal(claimed.instruction.kind, 'rewind');
    assert.deepEqual(claimed.instruction.rewind, back.notice);
    assert.match(claimed.instruction.text, /rewound this work's files to checkpoint 1 .*\n- a\.txt\n- b\.txt\n- c\.txt \(no file\)$/);

    const redo = await assembled.checkpoints.redo(workId);
    assert.equal(await read('a.txt'), 'three\n');
    assert.equal(await read('b.txt'), 'BB\n');
    assert.equal(await read('c.txt'), 'new file\n');
    assert.equal(redo.notice.action, 'redo');
    assert.equal(redo.notice.checkpoint, 3);
    assert.equal(assembled.checkpoints.canRedo(workId), false);
    await assert.rejects(assembled.checkpoints.redo(workId), (e: unknown) => ToolError.is(e, 'INVALID_ARGUMENTS') && /not a rewind/.test(e.message));
    const second = ok<{ instruction: { kind: string; rewind: { action: string } } }>(await agent.call('steer_claim_next', { work_id: workId }));
    assert.equal(second.instruction.rewind.action, 'redo');

    // After the redo the files are as at checkpoint 3 again: rewinding there has nothing to write, and records nothing.
    const count = assembled.ledger.list().length;
    await assert.rejects(assembled.checkpoints.rewind(workId, 3), (e: unknown) => ToolError.is(e, 'INVALID_ARGUMENTS') && /already as at checkpoint 3: nothing to write/.test(e.message));
    assert.equal(assembled.ledger.list().length, count);
    // Back to before the first operation, then the agent writes on from there with the versions it is told.
    const start = await assembled.checkpoints.rewind(workId, 0);
    assert.equal(await read('a.txt'), 'one\n');
    assert.equal(await exists('c.txt'), false);
    assert.equal(start.notice.operation_id, undefined);
  });

  it('refuses, naming the files and writing nothing, when a file changed outside the work since its last operation', async () => {
    await open();
    await threeOperations();
    await fsp.writeFile(path.join(root, 'b.txt'), 'my own edit\n');
    const before = assembled.ledger.list().length;
    await assert.rejects(assembled.checkpoints.rewind(workId, 1), (e: unknown) => {
      assert.ok(ToolError.is(e, 'VERSION_CONFLICT'), String(e));
      assert.match(e.message, /^Refused: b\.txt changed outside the work since its last operation on it; nothing was written\.$/);
      assert.deepEqual(e.details?.files, [{ path: 'b.txt', expected: version('BB\n'), found: version('my own edit\n') }]);
      return true;
    });
    assert.equal(await read('b.txt'), 'my own edit\n');
    assert.equal(await read('a.txt'), 'three\n');
    assert.equal(await exists('c.txt'), true);
    assert.equal(assembled.ledger.list().length, before, 'nothing recorded');
    // Only the files a rewind writes count: the developer's edit of c.txt does not stop a rewind that leaves it alone.
    await fsp.writeFile(path.join(root, 'b.txt'), 'BB\n');
    await fsp.writeFile(path.join(root, 'c.txt'), 'kept\n');
    await assembled.checkpoints.rewind(workId, 2);
    assert.equal(await read('a.txt'), 'two\n');
    assert.equal(await read('b.txt'), 'B\n');
    assert.equal(await read('c.txt'), 'kept\n');
  });

  it('is all-or-nothing: a write failing half-way leaves every file as it was and the ledger says failed', async () => {
    await open();
    await threeOperations();
    failAt = (i) => i === 1;
    await assert.rejects(assembled.checkpoints.rewind(workId, 0), (e: unknown) => ToolError.is(e, 'INTERNAL') && /restored and verified/.test(e.message));
    failAt = undefined;
    assert.equal(await read('a.txt'), 'three\n');
    assert.equal(await read('b.txt'), 'BB\n');
    assert.equal(await read('c.txt'), 'new file\n');
    const last = assembled.ledger.list().at(-1);
    assert.equal(last?.status, 'failed');
    assert.equal(last?.work_id, workId);
    assert.equal(assembled.checkpoints.list(workId).length, 3, 'a failed rewind is no checkpoint');
    assert.equal(assembled.checkpoints.canRedo(workId), false);
    const claimed = ok<{ instruction?: unknown }>(await agent.call('steer_claim_next', { work_id: workId }));
    assert.equal(claimed.instruction, undefined, 'the agent is told nothing');
  });

  it('refuses when the work wrote again while the rewind waited for its turn of the folder (the plan is stale)', async () => {
    await open();
    await threeOperations();
    const ws = assembled.workspaces.get('proj', workId);
    const release = await assembled.patches.lock(occupancyScope(ws));
    // The agent's patch waits first, then the rewind (planned from three operations) behind it.
    // (apply takes its place in the folder's queue as it is called, so the order is certain.)
    const patched = assembled.patches.apply(ws, { workspace_id: 'proj', patch: '*** Begin Patch\n*** Update File: b.txt\n@@\n-BB\n+BBB\n*** End Patch', expected_versions: { 'b.txt': version('BB\n') }, operation_key: 'op-4', work_id: workId });
    const rewinding = assembled.checkpoints.rewind(workId, 0);
    release();
    assert.equal((await patched).status, 'applied');
    await assert.rejects(rewinding, (e: unknown) => ToolError.is(e, 'VERSION_CONFLICT') && /wrote again while the rewind waited for its turn; nothing was written/.test(e.message));
    assert.equal(await read('b.txt'), 'BBB\n');
    assert.equal(await read('a.txt'), 'three\n');
    assert.equal(assembled.checkpoints.list(workId).length, 4);
  });

  it('refuses with UNAVAILABLE, naming the file, when content it needs was not kept (over the per-file bound)', async () => {
    await open({ maxBlobBytes: 3 });
    await threeOperations();
    await assert.rejects(assembled.checkpoints.rewind(workId, 0), (e: unknown) => {
      assert.ok(ToolError.is(e, 'UNAVAILABLE'), String(e));
      assert.match(e.message, /the content of a\.txt at that point is not kept; nothing was written/);
      return true;
    });
    assert.equal(await read('a.txt'), 'three\n');
  });

  it('keeps redo across a reload: the checkpoints come from the ledger and the kept content', async () => {
    await open();
    await threeOperations();
    await assembled.checkpoints.rewind(workId, 2);
    assert.equal(await read('a.txt'), 'two\n');
    await agent.close();
    await assembled.shutdown();
    await open();
    assert.equal(assembled.checkpoints.canRedo(workId), true);
    // What the agent is told survives the reload too, with its structure.
    const told = ok<{ instruction: { kind: string; rewind: { action: string; checkpoint: number; files: { path: string }[] } } }>(await agent.call('steer_claim_next', { work_id: workId }));
    assert.equal(told.instruction.kind, 'rewind');
    assert.deepEqual([told.instruction.rewind.action, told.instruction.rewind.checkpoint, told.instruction.rewind.files.map((f) => f.path)], ['rewind', 2, ['a.txt', 'b.txt']]);
    await assembled.checkpoints.redo(workId);
    assert.equal(await read('a.txt'), 'three\n');
    assert.equal(await read('b.txt'), 'BB\n');
  });
});

describe('FileBlobStore: bounded, content-addressed checkpoint content', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-blobs-'));
  });
  afterEach(async () => {
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('keeps bytes under their version, refuses wrong names, skips blobs over the bound and evicts the oldest past the total', async () => {
    const store = new FileBlobStore({ directory: dir, maxBytes: 10, maxBlobBytes: 6 });
    assert.equal(await store.put(version('abcd'), utf8('abcd')), true);
    assert.deepEqual(Buffer.from((await store.get(version('abcd'))) ?? []).toString(), 'abcd');
    await assert.rejects(store.put(version('zzzz'), utf8('abcd')), /does not match/);
    assert.equal(await store.put(version('1234567'), utf8('1234567')), false, 'over the per-blob bound');
    assert.equal(await store.has(version('1234567')), false);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await store.put(version('efgh'), utf8('efgh')), true);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await store.put(version('ijkl'), utf8('ijkl')), true);
    assert.equal(await store.has(version('abcd')), false, 'the oldest went');
    assert.equal(await store.has(version('efgh')), true);
    assert.equal(await store.size(), 8);
    // A damaged blob reads as missing, never as other content.
    const hex = version('efgh').slice('sha256:'.length);
    await fsp.writeFile(path.join(dir, hex), 'EFGH');
    assert.equal(await store.get(version('efgh')), undefined);
    // A new store finds what is on disk.
    const again = new FileBlobStore({ directory: dir, maxBytes: 10, maxBlobBytes: 6 });
    assert.equal(await again.has(version('ijkl')), true);
  });

  it('takes many puts at once (the same content among them): each kept once, the total exact, no temp file left', async () => {
    // A stale temp file of an earlier run: the first scan removes it, before any put writes its own.
    await fsp.writeFile(path.join(dir, `${'0'.repeat(64)}.dead.tmp`), 'x');
    const store = new FileBlobStore({ directory: dir, maxBytes: 1_000_000, maxBlobBytes: 1_000 });
    const texts = Array.from({ length: 60 }, (_, i) => `blob ${i % 40}`);
    const kept = await Promise.all(texts.map((t) => store.put(version(t), utf8(t))));
    assert.ok(kept.every((k) => k === true));
    const distinct = [...new Set(texts)];
    assert.equal(await store.size(), distinct.reduce((n, t) => n + utf8(t).length, 0));
    const names = await fsp.readdir(dir);
    assert.deepEqual(names.filter((n) => n.endsWith('.tmp')), []);
    assert.equal(names.length, distinct.length);
    for (const t of distinct) assert.equal(Buffer.from((await store.get(version(t))) ?? []).toString(), t);
  });
});

describe('checkpoints in the panel: Rewind to Here on a work\'s applied patch', () => {
  const at = '2026-12-01T12:00:00.000Z';
  const committed = (run_id: string, status: string, work_id: string | undefined, operation_id: string | undefined): RunnerEvent => ({
    type: 'operation.committed',
    operation: { run_id, tool: 'apply_patch', workspace_id: 'ws', title: `apply_patch ${run_id}`, at, reviewable: true, ...(work_id ? { work_id } : {}) },
    status,
    ...(operation_id ? { operation_id } : {}),
  });

  it('offers it on a patch applied under a work only (not a preview, a failure, or a patch without a work)', () => {
    const s = buildPanelState({
      pending: [],
      holds: [],
      events: [committed('r1', 'applied', 'work_1', 'op_1'), committed('r2', 'checked', 'work_1', 'op_2'), committed('r3', 'failed', 'work_1', 'op_3'), committed('r4', 'applied', undefined, 'op_4')],
    });
    const byRun = new Map(s.activity.map((a) => [a.runId, a.checkpoint]));
    assert.deepEqual(byRun.get('r1'), { workId: 'work_1', operationId: 'op_1' });
    for (const r of ['r2', 'r3', 'r4']) assert.equal(byRun.get(r), undefined, r);
  });

  it('the page\'s rewindWork message is checked like every other: ids, and nothing else', () => {
    const good = parsePageMessage({ type: 'rewindWork', requestId: 'q1', workId: 'work_1', operationId: 'op_1' });
    assert.deepEqual(good, { ok: true, message: { type: 'rewindWork', requestId: 'q1', workId: 'work_1', operationId: 'op_1' } });
    const missing = parsePageMessage({ type: 'rewindWork', requestId: 'q2', workId: 'work_1' });
    assert.equal(missing.ok, false);
    const extra = parsePageMessage({ type: 'rewindWork', requestId: 'q3', workId: 'work_1', operationId: 'op_1', checkpoint: 0 });
    assert.equal(extra.ok, false);
  });
});
