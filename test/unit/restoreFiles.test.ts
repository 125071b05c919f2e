/**
 * Restoring files, not bytes: every path that puts a file back (a checkpoint's rewind and redo, a review's undo, the
 * patch engine's rollback of a failed write) goes through one restore step that carries the mode, and removes
 * exactly the folders the undone change had created that are empty again. Real services on a temp workspace.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { DEFAULT_APPROVAL_POLICY } from '../../src/kernel/approvals/approvalService';
import { reviewIdOf } from '../../src/features/review/common/afterWriteReviews';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { ok } from './helpers/workspaceFixture';

const BINARY = Uint8Array.from([0, 1, 2, 255, 254, 13, 10, 0, 128]);

describe('restoring files: content, mode and the folders a change made', function () {
  this.timeout(60_000);
  let w: PatchWorld;
  let failAt: ((index: number, p: string) => boolean) | undefined;
  let workId: string;

  const modeOf = async (rel: string): Promise<number> => (await fsp.stat(w.abs(rel))).mode & 0o777;
  const exists = (rel: string): Promise<boolean> => fsp.lstat(w.abs(rel)).then(() => true, () => false);
  const bytes = async (rel: string): Promise<Buffer> => fsp.readFile(w.abs(rel));

  async function openWork(): Promise<void> {
    workId = ok<{ work_id: string }>(await w.call('work_open', { workspace_id: WS_ID, title: 'restore' })).work_id;
  }
  async function patch(key: string, expected: Record<string, string>, ...lines: string[]): Promise<void> {
    const r = await w.apply<{ status: string; reason?: string }>({ patch: v4a(...lines), expected_versions: expected, operation_key: key, work_id: workId });
    assert.equal(r.status, 'applied', r.reason);
  }

  afterEach(async () => {
    await w?.dispose();
  });

  describe('checkpoints', () => {
    beforeEach(async () => {
      failAt = undefined;
      w = await openPatchWorld(
        { 'run.sh': '#!/bin/sh\r\necho hi\r\n', 'data.bin': BINARY, 'tool.sh': '#!/bin/sh\necho tool\n', 'plain.txt': 'plain\n' },
        { faults: { failWrite: (i, p) => failAt?.(i, p) ?? false } },
      );
      await fsp.chmod(w.abs('run.sh'), 0o755);
      await fsp.chmod(w.abs('tool.sh'), 0o755);
      await fsp.chmod(w.abs('data.bin'), 0o640);
      await openWork();
    });

    it('a deleted 0755 script (CRLF) and a binary file come back with their bytes and modes; redo deletes them again', async () => {
      const script = await bytes('run.sh');
      await patch('del', { 'run.sh': sha256(script), 'data.bin': sha256(BINARY) }, '*** Delete File: run.sh', '*** Delete File: data.bin');
      assert.equal(await exists('run.sh'), false);
      const status = await w.status({ operation_key: 'del' });
      assert.deepEqual(
        status.changes.map((c) => [c.path, (c as { before_mode?: number }).before_mode]),
        [['run.sh', 0o755], ['data.bin', 0o640]],
        'the ledger keeps the mode of what it deleted',
      );
      await w.assembled.checkpoints.rewind(workId, 0);
      assert.deepEqual(await bytes('run.sh'), script);
      assert.equal(await modeOf('run.sh'), 0o755);
      assert.deepEqual(new Uint8Array(await bytes('data.bin')), BINARY);
      assert.equal(await modeOf('data.bin'), 0o640);
      await w.assembled.checkpoints.redo(workId);
      assert.equal(await exists('run.sh'), false);
      assert.equal(await exists('data.bin'), false);
      // And back once more, to the state the rewind made (checkpoint 2): the modes come back the same way.
      await w.assembled.checkpoints.rewind(workId, 2);
      assert.equal(await modeOf('run.sh'), 0o755);
      assert.equal(await modeOf('data.bin'), 0o640);
    });

    it('a move into new folders rewinds with its mode and removes exactly the folders it created', async () => {
      await fsp.mkdir(w.abs('keep'));
      const tool = await bytes('tool.sh');
      await patch('move', { 'tool.sh': sha256(tool) }, '*** Update File: tool.sh', '*** Move to: new/deep/tool.sh', '*** Add File: keep/k.txt', '+k', '*** Add File: other/sub/a.txt', '+a');
      assert.equal(await modeOf('new/deep/tool.sh'), 0o755, 'a move keeps the mode');
      // Meanwhile someone puts a file of their own in one of the folders the work created.
      await fsp.writeFile(w.abs('other/mine.txt'), 'mine\n');

      await w.assembled.checkpoints.rewind(workId, 0);
      assert.deepEqual(await bytes('tool.sh'), tool);
      assert.equal(await modeOf('tool.sh'), 0o755);
      assert.equal(await exists('new'), false, 'the folders the move created are gone');
      assert.equal(await exists('other/sub'), false, 'an emptied folder the add created is gone');
      assert.equal(await fsp.readFile(w.abs('other/mine.txt'), 'utf8'), 'mine\n', 'a folder someone put a file in stays, with the file');
      assert.deepEqual(await fsp.readdir(w.abs('keep')), [], 'a folder that was there before stays, empty');

      await w.assembled.checkpoints.redo(workId);
      assert.equal(await modeOf('new/deep/tool.sh'), 0o755);
      assert.equal(await exists('tool.sh'), false);
      assert.deepEqual((await fsp.readdir(w.root)).filter((n) => n.includes('codespace')), [], 'no temp file left');
    });

    it('a change of mode alone is a checkpoint of its own: rewound and redone', async () => {
      const ws = w.assembled.workspaces.get(WS_ID, workId);
      const plain = await bytes('plain.txt');
      assert.equal(await modeOf('plain.txt'), 0o644);
      const result = await w.assembled.patches.restoreFiles(ws, { workspace_id: WS_ID, operation_key: 'chmod', work_id: workId, files: [{ path: 'plain.txt', expected: sha256(plain), content: plain, mode: 0o755 }] });
      assert.equal(result.status, 'applied');
      assert.equal(await modeOf('plain.txt'), 0o755);
      assert.equal(w.assembled.checkpoints.list(workId).length, 1);

      await w.assembled.checkpoints.rewind(workId, 0);
      assert.equal(await modeOf('plain.txt'), 0o644);
      assert.deepEqual(await bytes('plain.txt'), plain);
      await w.assembled.checkpoints.redo(workId);
      assert.equal(await modeOf('plain.txt'), 0o755);
    });

    it('a failed apply puts a deleted 0755 script back with its mode, removes the folders it made, and leaves no temp file', async () => {
      const before = (await fsp.readdir(w.root)).sort();
      const script = await bytes('run.sh');
      failAt = (_i, p) => p === 'z/new.txt';
      const r = await w.apply<{ status: string }>({
        patch: v4a('*** Delete File: run.sh', '*** Add File: y/deep/a.txt', '+a', '*** Add File: z/new.txt', '+z'),
        expected_versions: { 'run.sh': sha256(script) },
        operation_key: 'fails',
        work_id: workId,
      });
      assert.equal(r.status, 'failed');
      assert.deepEqual(await bytes('run.sh'), script);
      assert.equal(await modeOf('run.sh'), 0o755);
      assert.deepEqual((await fsp.readdir(w.root)).sort(), before, 'nothing left behind: no folder, no temp file');
    });
  });

  describe("a review's undo", () => {
    beforeEach(async () => {
      w = await openPatchWorld({ 'run.sh': '#!/bin/sh\r\necho hi\r\n' }, { profile: 'exec', approvals: () => ({ ...DEFAULT_APPROVAL_POLICY, patches: 'confirm' }), reviewMode: () => 'after' });
      await fsp.chmod(w.abs('run.sh'), 0o755);
    });

    const call = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const outcome = await w.assembled.dispatcher.call(name, args, new AbortController().signal, { session: 's1' });
      assert.equal(outcome.kind, 'result', JSON.stringify(outcome));
      return (outcome as { value: Record<string, unknown> }).value;
    };

    it('puts a deleted 0755 script back byte for byte (CRLF) with its mode', async () => {
      const script = await bytes('run.sh');
      const r = await call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Delete File: run.sh'), expected_versions: { 'run.sh': sha256(script) }, operation_key: 'del' });
      assert.equal(r.status, 'applied');
      const { result } = await w.assembled.afterWrite.undo(reviewIdOf(WS_ID, undefined), 'run.sh', 0);
      assert.equal(result.status, 'applied');
      assert.deepEqual(await bytes('run.sh'), script);
      assert.equal(await modeOf('run.sh'), 0o755);
    });

    it('deletes an added file and the folders its add created, and keeps a folder that was there', async () => {
      await fsp.mkdir(w.abs('was'));
      const r = await call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Add File: made/deep/f.txt', '+f', '*** Add File: was/g.txt', '+g'), expected_versions: {}, operation_key: 'add' });
      assert.equal(r.status, 'applied');
      const reviews = w.assembled.afterWrite;
      await reviews.undo(reviewIdOf(WS_ID, undefined), 'made/deep/f.txt', 0);
      await reviews.undo(reviewIdOf(WS_ID, undefined), 'was/g.txt', 0);
      assert.equal(await exists('made'), false);
      assert.deepEqual(await fsp.readdir(w.abs('was')), []);
    });
  });
});
