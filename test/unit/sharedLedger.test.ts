/**
 * One ledger file for patch operations, approval holds and commands: each owner sees only its section, a
 * section's compaction keeps every other line (also kinds nobody claims), concurrent appends and rewrites of
 * different sections never lose a line, and the records are checked by schema when read back.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExecLog } from '../../src/kernel/ledger/execLog';
import { SharedJournal } from '../../src/kernel/ledger/sharedJournal';
import { isOperationRecord } from '../../src/kernel/ledger/operationRecord';
import { InMemoryJournal } from '../../src/base/journal';
import { silentLogger } from '../../src/base/logger';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld } from './helpers/patchWorld';
import { toolError } from './helpers/workspaceFixture';

describe('the shared ledger file', () => {
  it('gives each owner its own section and keeps the others on a rewrite', async () => {
    const file = new InMemoryJournal();
    file.text = '{"type":"from_the_future","v":9,"x":1}\n';
    const shared = new SharedJournal(file);
    const a = shared.section(['a']);
    const b = shared.section(['b']);
    await a.append({ type: 'a', n: 1 });
    await b.append({ type: 'b', n: 1 });
    await a.append({ type: 'a', n: 2 });
    assert.deepEqual(await a.load(), [{ type: 'a', n: 1 }, { type: 'a', n: 2 }]);
    assert.deepEqual(await b.load(), [{ type: 'b', n: 1 }]);
    await a.rewrite([{ type: 'a', n: 3 }]);
    assert.deepEqual(await a.load(), [{ type: 'a', n: 3 }]);
    assert.deepEqual(await b.load(), [{ type: 'b', n: 1 }]);
    assert.match(file.text, /from_the_future/, 'a kind no section claims is kept verbatim');
  });

  it('leaves the file alone when a section is rewritten with the lines it already holds, unless a line was torn', async () => {
    const file = new InMemoryJournal();
    let rewrites = 0;
    const rewrite = file.rewrite.bind(file);
    file.rewrite = async (records) => {
      rewrites++;
      await rewrite(records);
    };
    file.text = '{"type":"a","n":1}\n{"type":"b","n":1}\n{"type":"a","n":2}\n';
    const shared = new SharedJournal(file);
    const a = shared.section(['a']);
    // An owner compacting at open with nothing to drop: the same lines, in the same order.
    await a.rewrite(await a.load());
    assert.equal(rewrites, 0);
    assert.equal(file.text, '{"type":"a","n":1}\n{"type":"b","n":1}\n{"type":"a","n":2}\n');
    // A changed section is written.
    await a.rewrite([{ type: 'a', n: 2 }]);
    assert.equal(rewrites, 1);
    assert.deepEqual(await shared.section(['b']).load(), [{ type: 'b', n: 1 }]);
    assert.deepEqual(await a.load(), [{ type: 'a', n: 2 }]);
    // A torn line elsewhere in the file: the rewrite cleans it, although the section's lines are the same.
    file.text += '{"type":"b","n":2,"half';
    await a.rewrite(await a.load());
    assert.equal(rewrites, 2);
    assert.doesNotMatch(file.text, /half/);
  });

  it('never loses another section\'s line while one section compacts', async () => {
    const file = new InMemoryJournal();
    const shared = new SharedJournal(file);
    const a = shared.section(['a']);
    const b = shared.section(['b']);
    const work: Promise<void>[] = [];
    for (let i = 0; i < 200; i++) {
      work.push(b.append({ type: 'b', n: i }));
      if (i % 10 === 0) work.push(a.rewrite([{ type: 'a', n: i }]));
    }
    await Promise.all(work);
    assert.deepEqual((await b.load()).map((r) => r.n), Array.from({ length: 200 }, (_, i) => i));
    assert.deepEqual(await a.load(), [{ type: 'a', n: 190 }]);
  });

  it('checks patch records by schema: a wrong field type is not trusted', () => {
    const good = {
      operation_id: 'op_1',
      operation_key: 'k',
      args_hash: 'h',
      kind: 'patch',
      workspace_id: 'w',
      created_at: 'now',
      status: 'applied',
      files: [{ path: 'a', kind: 'update' }],
      changes: [{ path: 'a', kind: 'update', before_hash: null, after_hash: 'sha256:x' }],
      events: [{ type: 'minted', at: 'now' }],
    };
    assert.equal(isOperationRecord(good), true);
    assert.equal(isOperationRecord({ ...good, status: 'half-done' }), false);
    assert.equal(isOperationRecord({ ...good, files: [{ path: 7, kind: 'update' }] }), false);
    assert.equal(isOperationRecord({ ...good, changes: [{ path: 'a', kind: 'update', before_hash: 1, after_hash: null }] }), false);
  });

  it('the exec log records a command and its end, and reads one cut off by a reload as interrupted', async () => {
    const file = new InMemoryJournal();
    const log = new ExecLog({ journal: new SharedJournal(file).section(['exec_operation']), logger: silentLogger });
    await log.open();
    const operation = { run_id: 'run_1', tool: 'exec_command' as const, workspace_id: 'w', title: 't', at: '2026-01-01T00:00:00.000Z' };
    const command = { argv: ['npm', 'test'], cwd: 'pkg', tty: false, occupancy: 'exclusive' as const, env_changes: {} };
    log.observe({ type: 'operation.committed', operation, status: 'confirmed', process_id: 'p_1', command });
    log.observe({ type: 'operation.committed', operation, status: 'confirmed', process_id: 'p_2', command, approval_id: 'ap_1' });
    log.observe({ type: 'process.exited', process_id: 'p_1', workspace_id: 'w', termination: 'exited', exit_code: 3, ended_at: '2026-01-01T00:00:01.000Z' });
    await log.flush();
    assert.deepEqual([log.byProcessId('p_1')?.state, log.byProcessId('p_1')?.exit_code], ['exited', 3]);
    const again = new ExecLog({ journal: new SharedJournal(file).section(['exec_operation']), logger: silentLogger });
    assert.deepEqual(await again.open(), { loaded: 2, interrupted: 1 });
    assert.equal(again.byProcessId('p_2')?.state, 'interrupted');
    assert.equal(again.byProcessId('p_2')?.approval_id, 'ap_1');
    assert.deepEqual(again.byProcessId('p_2')?.command, ['npm', 'test']);
  });
});

describe('one ledger across a restart', function () {
  this.timeout(30_000);
  let w: PatchWorld;
  afterEach(async () => {
    await w?.dispose();
  });

  it('keeps patches, holds and commands in one file; process_status answers for a process from before the reload', async () => {
    w = await openPatchWorld({ 'a.txt': 'a\n' }, { profile: 'exec', approvals: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: false }) });
    const dirs = { tmp: w.tmp, root: w.root, storage: w.storage };
    const started = (await w.call('exec_command', { workspace_id: WS_ID, command: ['sh', '-c', 'exit 4'] })).structuredContent as { process_id: string };
    for (let i = 0; i < 200 && w.assembled.supervisor.status(started.process_id).state !== 'exited'; i++) await new Promise((r) => setTimeout(r, 20));
    const sleeper = (await w.call('exec_command', { workspace_id: WS_ID, command: ['sleep', '30'], occupancy: 'shared' })).structuredContent as { process_id: string };
    const held = toolError(await w.call('apply_patch', { workspace_id: WS_ID, patch: '*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch', expected_versions: {}, operation_key: 'k' }));
    assert.equal(held.code, 'APPROVAL_REQUIRED');
    await w.close();

    const text = await fsp.readFile(path.join(dirs.storage, 'operations.jsonl'), 'utf8');
    const types = new Set(text.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type));
    assert.deepEqual([...types].sort(), ['approval_hold', 'exec_operation']);

    w = await openPatchWorld({}, { profile: 'exec', dirs });
    assert.equal(w.assembled.approvals.get(held.details?.approval_id as string)?.state, 'pending');
    const done = (await w.call('process_status', { process_id: started.process_id })).structuredContent as { state: string; termination: string; exit_code?: number; command: string[] };
    assert.deepEqual([done.state, done.termination, done.exit_code, done.command], ['exited', 'exited', 4, ['sh', '-c', 'exit 4']]);
    const cut = (await w.call('process_status', { process_id: sleeper.process_id })).structuredContent as { state: string; termination: string; output_complete: boolean };
    assert.deepEqual([cut.state, cut.termination, cut.output_complete], ['exited', 'terminated', false]);
    assert.equal(toolError(await w.call('process_status', { process_id: 'p_0000000000000000' })).code, 'PROCESS_NOT_FOUND');
  });

  it('keeps works and instructions next to patches in the one file; a torn last steering line is skipped', async () => {
    w = await openPatchWorld({ 'a.txt': 'a\n' }, { profile: 'exec' });
    const dirs = { tmp: w.tmp, root: w.root, storage: w.storage };
    const steering = w.assembled.steering;
    const work = await steering.openWork(WS_ID, 'across a restart');
    const v = (await w.read('a.txt')).version;
    await w.apply({ patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch', expected_versions: { 'a.txt': v }, operation_key: 'steer-k', work_id: work.id });
    const claimed = await steering.createDraft(work.id, 'claimed before the reload', { queue: true });
    assert.equal((await steering.claimNext(work.id, 'old-session'))?.id, claimed.id);
    const queued = await steering.createDraft(work.id, 'queued before the reload', { queue: true });
    await w.close();
    // A crash while appending the next change: half a line at the end of the shared file.
    const file = path.join(dirs.storage, 'operations.jsonl');
    await fsp.appendFile(file, `{"type":"steer_instruction","v":1,"record":{"id":"${queued.id}","status":"cla`);

    w = await openPatchWorld({}, { profile: 'exec', dirs });
    const again = w.assembled.steering;
    assert.equal(again.work(work.id)?.status, 'open');
    assert.deepEqual(again.instructions(work.id).map((i) => [i.id, i.status]), [[claimed.id, 'claimed'], [queued.id, 'queued']]);
    assert.deepEqual(again.operations(work.id).patches, ['steer-k'], 'the patch ledger kept its record and its work_id');
    assert.equal((await w.status({ operation_key: 'steer-k' })).status, 'applied');
    assert.equal((await again.finishWork(work.id)).closed, false, 'still pending after the reload');
    const text = await fsp.readFile(file, 'utf8');
    assert.ok(text.endsWith('\n'), 'the start compacted the torn line away');
    assert.deepEqual([...new Set(text.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type))].sort(), ['patch_operation', 'steer_instruction', 'steer_work']);
  });
});
