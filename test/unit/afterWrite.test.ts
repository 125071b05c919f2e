/**
 * Review after the write: the hunks, their reversal (exact bytes, through the patch engine) and what the agent is
 * told (`review_update` on its next answer), on the real stack (assembleServices on a temp workspace, a real MCP
 * client).
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_APPROVAL_POLICY } from '../../src/kernel/approvals/approvalService';
import type { ReviewMode } from '../../src/kernel/approvals/holdPolicy';
import { hunkAtLine, hunksOf, keepHunk, undoHunk, undoPatch } from '../../src/features/review/common/afterWriteHunks';
import type { ReviewUndone } from '../../src/features/review/common/afterWriteReviews';
import { reviewIdOf } from '../../src/features/review/common/afterWriteReviews';
import { ToolError } from '../../src/base/errors';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';

const BASE = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'].map((l) => `${l}\n`).join('');

function structured(r: CallToolResult): Record<string, unknown> {
  assert.equal(r.isError, undefined, JSON.stringify(r.content));
  return r.structuredContent as Record<string, unknown>;
}

describe('review after the write', function () {
  this.timeout(60_000);

  describe('hunks', () => {
    const now = BASE.replace('two\n', 'TWO\n').replace('seven\n', '').replace('ten\n', 'ten\neleven\n');

    it('finds each changed block, by a line of the file now', () => {
      const hunks = hunksOf(BASE, now);
      assert.deepEqual(
        hunks.map((h) => [h.base, h.current, h.removed, h.added]),
        [
          [{ start: 1, end: 2 }, { start: 1, end: 2 }, 'two\n', 'TWO\n'],
          [{ start: 6, end: 7 }, { start: 6, end: 6 }, 'seven\n', ''],
          [{ start: 10, end: 10 }, { start: 9, end: 10 }, '', 'eleven\n'],
        ],
      );
      assert.equal(hunkAtLine(hunks, 1)?.index, 0);
      assert.equal(hunkAtLine(hunks, 6)?.index, 1, 'a deletion is found from the line after it');
      assert.equal(hunkAtLine(hunks, 5)?.index, 1, 'and from the line before it');
      assert.equal(hunkAtLine(hunks, 9)?.index, 2);
      assert.equal(hunkAtLine(hunks, 3), undefined);
      // The same hunks from the accepted text (the left side): its lines, and an insertion from the lines around it.
      assert.equal(hunkAtLine(hunks, 1, 'old')?.index, 0);
      assert.equal(hunkAtLine(hunks, 6, 'old')?.index, 1, 'a deleted line is found on the old side');
      assert.equal(hunkAtLine(hunks, 10, 'old')?.index, 2, 'an insertion is found from the line after it');
      assert.equal(hunkAtLine(hunks, 9, 'old')?.index, 2, 'and from the line before it');
      assert.equal(hunkAtLine(hunks, 3, 'old'), undefined);
      // A deleted file: one hunk, every line of the old side in it; the empty new side finds it at its only line.
      const gone = hunksOf(BASE, '');
      assert.equal(gone.length, 1);
      assert.equal(hunkAtLine(gone, 4, 'old')?.index, 0);
      assert.equal(hunkAtLine(gone, 0, 'new')?.index, 0);
    });

    it('keeps a hunk into the accepted text and undoes one in the file, leaving the other hunks', () => {
      const hunks = hunksOf(BASE, now);
      const kept = keepHunk(BASE, hunks[0]!);
      assert.deepEqual(hunksOf(kept, now).map((h) => h.added), ['', 'eleven\n']);
      const undone = undoHunk(now, hunks[1]!);
      assert.equal(undone, BASE.replace('two\n', 'TWO\n').replace('ten\n', 'ten\neleven\n'));
      assert.deepEqual(hunksOf(BASE, undone).map((h) => h.removed), ['two\n', '']);
    });

    it('keeps CRLF, a BOM and a missing final newline byte for byte', () => {
      const base = '\uFEFFa\r\nb\r\nc';
      const cur = '\uFEFFa\r\nB\r\nc\r\nd';
      const hunks = hunksOf(base, cur);
      assert.equal(hunks.length, 1);
      assert.equal(undoHunk(cur, hunks[0]!), base);
      assert.equal(keepHunk(base, hunks[0]!), cur);
    });

    it('writes a V4A patch with enough context to find the one place', () => {
      const text = 'x\ny\nx\ny\nx\ny\nx\ny\nz\n';
      const cur = 'x\ny\nx\ny\nx\nY\nx\ny\nz\n';
      const [hunk] = hunksOf(text, cur);
      const patch = undoPatch('f.txt', cur, hunk!);
      assert.match(patch, /^\*\*\* Begin Patch\n\*\*\* Update File: f\.txt\n@@\n/);
      assert.match(patch, /\n-Y\n\+y\n/);
      // Three lines either side repeat elsewhere (x y x / x y z is unique only with the end): the context grew.
      assert.ok(patch.split('\n').filter((l) => l.startsWith(' ')).length >= 6, patch);
    });
  });

  describe('through the stack', () => {
    let w: PatchWorld;
    let mode: ReviewMode;
    beforeEach(async () => {
      mode = 'after';
      w = await openPatchWorld({ 'a.txt': BASE, 'b.txt': 'keep me\n' }, { profile: 'exec', approvals: () => ({ ...DEFAULT_APPROVAL_POLICY, patches: 'confirm' }), reviewMode: () => mode });
    });
    afterEach(async () => {
      await w?.dispose();
    });

    const agentPatch = (): Record<string, unknown> => ({
      workspace_id: WS_ID,
      patch: v4a('*** Update File: a.txt', '@@', ' one', '-two', '+TWO', '@@', ' six', '-seven', '+SEVEN', '+seven and a half', '*** Add File: c.txt', '+new file'),
      expected_versions: { 'a.txt': sha256(BASE) },
      operation_key: 'agent-1',
    });

    /** A call as the MCP adapter makes it for a session. */
    const call = async (session: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const outcome = await w.assembled.dispatcher.call(name, args, new AbortController().signal, { session });
      assert.equal(outcome.kind, 'result', JSON.stringify(outcome));
      return (outcome as { value: Record<string, unknown> }).value;
    };

    it('a patch applies at once and joins the review; undoing one hunk writes through the ledger and the agent is told once', async () => {
      const applied = await call('s1', 'apply_patch', agentPatch());
      assert.equal(applied.status, 'applied');
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      const files = await reviews.files(id);
      assert.deepEqual(files.map((f) => [f.path, f.hunks.length]), [['a.txt', 2], ['c.txt', 1]]);

      // Undo the second hunk of a.txt (lines 7-8 of the agent's version), by a line inside it.
      const agentText = await fsp.readFile(w.abs('a.txt'), 'utf8');
      const { notice, result } = await reviews.undo(id, 'a.txt', 7);
      const disk = await fsp.readFile(w.abs('a.txt'));
      assert.equal(disk.toString('utf8'), BASE.replace('two\n', 'TWO\n'));
      assert.equal(result.status, 'applied');
      assert.equal(result.files[0]?.before_version, sha256(agentText));
      assert.equal(result.files[0]?.after_version, sha256(disk), 'the ledger records what is on disk');
      const status = await w.status({ operation_id: result.operation_id });
      assert.equal(status.status, 'applied');
      assert.deepEqual(status.files.map((f) => [f.path, f.after_version]), [['a.txt', sha256(disk)]]);
      assert.deepEqual(notice, {
        action: 'undone',
        workspace_id: WS_ID,
        path: 'a.txt',
        range: { start_line: 7, end_line: 8 },
        undone: 'SEVEN\nseven and a half\n',
        restored: 'seven\n',
        version: sha256(disk),
        operation_id: result.operation_id,
      });
      assert.deepEqual((await reviews.file(id, 'a.txt')).hunks.map((h) => h.added), ['TWO\n'], 'the undone hunk left the review');

      // The agent's next answer, whatever the tool, carries it, once; another session's does not.
      assert.equal((await call('s2', 'workspace_info', {})).review_update, undefined, 'another session wrote nothing of it');
      const next = await call('s1', 'workspace_info', {});
      assert.deepEqual(next.review_update as ReviewUndone[], [notice]);
      const after = await call('s1', 'workspace_info', {});
      assert.equal(after.review_update, undefined, 'delivered once');
    });

    it('undoes an added file by deleting it; keep and mark reviewed take hunks and files out of the review', async () => {
      await w.apply(agentPatch());
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      const { notice } = await reviews.undo(id, 'c.txt', 0);
      await assert.rejects(fsp.stat(w.abs('c.txt')));
      assert.equal(notice.version, undefined);
      assert.equal(notice.undone, 'new file\n');
      assert.equal((await reviews.file(id, 'c.txt')).hunks.length, 0);

      const kept = await reviews.keep(id, 'a.txt', 1);
      assert.equal(kept?.added, 'TWO\n');
      assert.deepEqual((await reviews.file(id, 'a.txt')).hunks.map((h) => h.added), ['SEVEN\nseven and a half\n']);
      assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), BASE.replace('two\n', 'TWO\n').replace('seven\n', 'SEVEN\nseven and a half\n'), 'keep writes nothing');

      const marked = await reviews.markReviewed(id, 'a.txt');
      assert.equal(marked.reviewed, true);
      assert.equal((await reviews.file(id, 'a.txt')).reviewed, true);
      // The file changes again: the mark is gone.
      const v = sha256(await fsp.readFile(w.abs('a.txt')));
      await w.apply({ workspace_id: WS_ID, patch: v4a('*** Update File: a.txt', '@@', ' nine', '-ten', '+TEN'), expected_versions: { 'a.txt': v }, operation_key: 'agent-2' });
      const now = await reviews.file(id, 'a.txt');
      assert.equal(now.reviewed, false);
      assert.equal(now.hunks.length, 2);

      // The review survives a snapshot (a window reload).
      const snap = JSON.parse(JSON.stringify(reviews.snapshot())) as unknown;
      reviews.clear(id);
      await assert.rejects(reviews.files(id), (e: unknown) => ToolError.is(e, 'NOT_FOUND'));
      reviews.restore(snap);
      assert.equal((await reviews.file(id, 'a.txt')).hunks.length, 2);
    });

    it('every kind of change, from either side: a deleted, a moved, a CRLF file without a final newline come back byte for byte', async () => {
      const CRLF = 'uno\r\ndos\r\ntres';
      await w.dispose();
      w = await openPatchWorld({ 'a.txt': BASE, 'crlf.txt': CRLF, 'gone.txt': CRLF, 'from.txt': 'moved\n' }, { profile: 'exec', approvals: () => ({ ...DEFAULT_APPROVAL_POLICY, patches: 'confirm' }), reviewMode: () => mode });
      await w.apply({
        workspace_id: WS_ID,
        patch: v4a('*** Delete File: gone.txt', '*** Update File: from.txt', '*** Move to: to.txt', '@@', '-moved', '+MOVED', '*** Update File: crlf.txt', '@@', ' uno', '-dos', '+DOS'),
        expected_versions: { 'gone.txt': sha256(CRLF), 'from.txt': sha256('moved\n'), 'crlf.txt': sha256(CRLF) },
        operation_key: 'kinds-1',
      });
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      assert.deepEqual((await reviews.files(id)).map((f) => [f.path, f.current === null, f.hunks.length]), [['crlf.txt', false, 1], ['from.txt', true, 1], ['gone.txt', true, 1], ['to.txt', false, 1]]);
      // The deleted file, from its only side with lines (the old one), and from the empty new side.
      await reviews.undo(id, 'gone.txt', 2, 'old');
      assert.equal(await fsp.readFile(w.abs('gone.txt'), 'utf8'), CRLF, 'the deleted file is back, CRLF and no final newline');
      // The CRLF file, from the old side's changed line.
      await reviews.undo(id, 'crlf.txt', 1, 'old');
      assert.equal(await fsp.readFile(w.abs('crlf.txt'), 'utf8'), CRLF);
      // The move: its source comes back from the new (empty) side, its destination is kept from the new side.
      await reviews.undo(id, 'from.txt', 0, 'new');
      assert.equal(await fsp.readFile(w.abs('from.txt'), 'utf8'), 'moved\n');
      await reviews.keep(id, 'to.txt', 0, 'new');
      assert.deepEqual((await reviews.files(id)).map((f) => [f.path, f.hunks.length]), [['crlf.txt', 0], ['from.txt', 0], ['gone.txt', 0], ['to.txt', 0]]);
      // A line on the old side that is in no change says which side it looked at.
      await fsp.writeFile(w.abs('crlf.txt'), 'uno\r\nDOS\r\ntres');
      await assert.rejects(reviews.keep(id, 'crlf.txt', 2, 'old'), (e: unknown) => ToolError.is(e, 'INVALID_ARGUMENTS') && /Line 3 of the accepted text \(the left side\) of crlf\.txt is in no change of the review \(changes: lines 2-2\)/.test(e.message));
    });

    it('a binary file (deleted, moved, or turned binary by a process) is one whole-file change: Undo puts back its bytes and mode, Keep accepts them', async () => {
      const BIN = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x0a, 0x00]);
      const BIN2 = new Uint8Array([0x00, 0x00, 0x07, 0x80, 0x81]);
      await w.dispose();
      w = await openPatchWorld({ 'old.bin': BIN, 'img.bin': BIN2, 't.txt': 'text\n' }, { profile: 'exec', reviewMode: () => mode });
      await fsp.chmod(w.abs('old.bin'), 0o640);
      await w.apply({
        workspace_id: WS_ID,
        patch: v4a('*** Delete File: old.bin', '*** Update File: img.bin', '*** Move to: moved.bin', '*** Update File: t.txt', '@@', '-text', '+TEXT'),
        expected_versions: { 'old.bin': sha256(BIN), 'img.bin': sha256(BIN2), 't.txt': sha256('text\n') },
        operation_key: 'bin-1',
      });
      // A process turns the text file binary and executable.
      const PROC = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x02]);
      await fsp.writeFile(w.abs('t.txt'), PROC);
      await fsp.chmod(w.abs('t.txt'), 0o755);
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      const files = await reviews.files(id);
      assert.deepEqual(
        files.map((f) => [f.path, f.binary, f.whole, f.changed, f.hunks.length, f.sides.base?.sha256 ?? null, f.sides.current?.sha256 ?? null]),
        [
          ['img.bin', true, 'binary', true, 0, sha256(BIN2), null],
          ['moved.bin', true, 'binary', true, 0, null, sha256(BIN2)],
          ['old.bin', true, 'binary', true, 0, sha256(BIN), null],
          ['t.txt', true, 'binary', true, 0, sha256('text\n'), sha256(PROC)],
        ],
      );
      assert.deepEqual(files.find((f) => f.path === 't.txt')?.mode, { base: '100644', current: '100755' });

      // Undo the deleted binary file, from any line: the exact bytes and its mode are back.
      const { notice } = await reviews.undo(id, 'old.bin', 0, 'old');
      assert.deepEqual(new Uint8Array(await fsp.readFile(w.abs('old.bin'))), BIN);
      assert.equal((await fsp.stat(w.abs('old.bin'))).mode & 0o777, 0o640);
      assert.equal(notice.change, 'binary');
      assert.deepEqual(notice.content, { undone: null, restored: { size: BIN.byteLength, sha256: sha256(BIN), text: false } });
      assert.equal(notice.version, sha256(BIN));
      assert.equal(notice.range, undefined);
      assert.equal((await w.status({ operation_id: notice.operation_id })).status, 'applied', 'recorded in the ledger');
      assert.equal((await reviews.file(id, 'old.bin')).changed, false);

      // The file a process turned binary: Undo puts the accepted text back, and the mode.
      const t = await reviews.undo(id, 't.txt', -1);
      assert.equal(await fsp.readFile(w.abs('t.txt'), 'utf8'), 'text\n', 'the accepted text: the file before the review first wrote it');
      assert.equal((await fsp.stat(w.abs('t.txt'))).mode & 0o777, 0o644);
      assert.deepEqual(t.notice.mode, { undone: '100755', restored: '100644' });
      assert.equal((await reviews.file(id, 't.txt')).changed, false);

      // Keep the moved binary file: nothing is written, it leaves the review; Mark Reviewed on the other side.
      assert.equal(await reviews.keep(id, 'moved.bin', 3), undefined);
      assert.equal((await reviews.file(id, 'moved.bin')).changed, false);
      assert.deepEqual(new Uint8Array(await fsp.readFile(w.abs('moved.bin'))), BIN2);
      assert.equal((await reviews.markReviewed(id, 'img.bin')).reviewed, true);
      // A binary file changed again after a Keep is a change again.
      await fsp.writeFile(w.abs('moved.bin'), BIN);
      assert.equal((await reviews.file(id, 'moved.bin')).whole, 'binary');

      // The accepted bytes survive a reload, base64.
      const snap = JSON.parse(JSON.stringify(reviews.snapshot())) as unknown;
      reviews.clear(id);
      reviews.restore(snap);
      assert.equal((await reviews.file(id, 'img.bin')).reviewed, true);
      await reviews.undo(id, 'moved.bin', 0);
      assert.deepEqual(new Uint8Array(await fsp.readFile(w.abs('moved.bin'))), BIN2, 'the kept bytes, restored from the snapshot');
    });

    it('a change of mode alone is a whole-file change once no hunk is left: Undo puts the mode back, Keep accepts it, a mark is bound to it', async () => {
      await w.apply(agentPatch());
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      await fsp.chmod(w.abs('a.txt'), 0o755);
      let a = await reviews.file(id, 'a.txt');
      assert.deepEqual([a.hunks.length, a.whole, a.mode], [2, undefined, { base: '100644', current: '100755' }]);
      await reviews.keep(id, 'a.txt', 1);
      await reviews.keep(id, 'a.txt', 6);
      a = await reviews.file(id, 'a.txt');
      assert.deepEqual([a.hunks.length, a.whole, a.changed], [0, 'mode', true]);
      const text = await fsp.readFile(w.abs('a.txt'));
      const { notice } = await reviews.undo(id, 'a.txt', 0);
      assert.equal((await fsp.stat(w.abs('a.txt'))).mode & 0o777, 0o644);
      assert.deepEqual(await fsp.readFile(w.abs('a.txt')), text, 'the content is left as it is');
      assert.deepEqual([notice.change, notice.mode, notice.content], ['mode', { undone: '100755', restored: '100644' }, undefined]);
      assert.equal((await reviews.file(id, 'a.txt')).changed, false);
      // Marked reviewed with the mode changed: the mark holds for that mode only.
      await fsp.chmod(w.abs('a.txt'), 0o755);
      assert.equal((await reviews.markReviewed(id, 'a.txt')).reviewed, true);
      await fsp.chmod(w.abs('a.txt'), 0o700);
      assert.equal((await reviews.file(id, 'a.txt')).reviewed, false);
      await reviews.keep(id, 'a.txt', 0);
      assert.equal((await reviews.file(id, 'a.txt')).changed, false, 'kept: the mode now is the accepted one');
    });

    it('refuses an undo when the file changed since in a way the hunk no longer applies, and writes nothing', async () => {
      await w.apply(agentPatch());
      const reviews = w.assembled.afterWrite;
      const id = reviewIdOf(WS_ID, undefined);
      await assert.rejects(reviews.undo(id, 'a.txt', 3), (e: unknown) => ToolError.is(e, 'INVALID_ARGUMENTS') && /Line 4 of a\.txt is in no change/.test(e.message));
      // A race: the patch engine binds the version it reads; a change under the lock is refused by it, not guessed at.
      const before = await fsp.readFile(w.abs('a.txt'), 'utf8');
      const patches = w.assembled.patches;
      const prepare = patches.prepare.bind(patches);
      patches.prepare = async (ws, request) => {
        await fsp.writeFile(w.abs('a.txt'), `${before}changed by hand\n`);
        return prepare(ws, request);
      };
      try {
        await assert.rejects(reviews.undo(id, 'a.txt', 1), (e: unknown) => ToolError.is(e, 'VERSION_CONFLICT'));
      } finally {
        patches.prepare = prepare;
      }
      assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), `${before}changed by hand\n`, 'nothing written');
      assert.equal(structured(await w.call('workspace_info', {})).review_update, undefined, 'nothing to tell');
    });

    it("a work's patches form the work's review; its undo reaches any answer to a call naming the work", async () => {
      const opened = await call('s1', 'work_open', { workspace_id: WS_ID, title: 'rename things' });
      const workId = opened.work_id as string;
      await call('s1', 'apply_patch', { ...agentPatch(), work_id: workId });
      const reviews = w.assembled.afterWrite;
      assert.deepEqual(reviews.list().map((r) => [r.id, r.work_id]), [[`work:${workId}`, workId]]);
      const { notice } = await reviews.undo(`work:${workId}`, 'a.txt', 1);
      assert.equal(notice.work_id, workId);
      const status = await w.assembled.dispatcher.call('steer_status', { work_id: workId }, new AbortController().signal, {});
      assert.equal(status.kind, 'result');
      assert.deepEqual((status as { value: Record<string, unknown> }).value.review_update, [notice], 'a call without a session that names the work');
      const ledger = w.assembled.ledger.list().find((r) => r.operation_id === notice.operation_id);
      assert.equal(ledger?.work_id, workId, 'the undo is recorded with the work');
    });

    it("a work's file starts from the work's baseline: a change made after work_open is in the review too", async () => {
      await w.dispose();
      const baselineOf: Record<string, string> = { 'a.txt': BASE };
      w = await openPatchWorld(
        { 'a.txt': BASE },
        {
          profile: 'exec',
          reviewMode: () => 'after',
          reviewBaseline: {
            readable: () => true,
            baselineContent: (_root, _ref, rel) => Promise.resolve(baselineOf[rel] === undefined ? undefined : new TextEncoder().encode(baselineOf[rel])),
          },
        },
      );
      const opened = await call('s1', 'work_open', { workspace_id: WS_ID, title: 'from the baseline' });
      const workId = opened.work_id as string;
      // Changed after work_open, before the agent's first write.
      const edited = BASE.replace('ten\n', 'ten (by hand)\n');
      await fsp.writeFile(w.abs('a.txt'), edited);
      await call('s1', 'apply_patch', { ...agentPatch(), expected_versions: { 'a.txt': sha256(edited) }, work_id: workId });
      const file = await w.assembled.afterWrite.file(`work:${workId}`, 'a.txt');
      assert.equal(file.base, BASE);
      assert.deepEqual(file.hunks.map((h) => h.added), ['TWO\n', 'SEVEN\nseven and a half\n', 'ten (by hand)\n']);
      const added = await w.assembled.afterWrite.file(`work:${workId}`, 'c.txt');
      assert.equal(added.base, null, 'not in the baseline: added by the work');
    });

    it('review before the write: nothing is followed', async () => {
      mode = 'before';
      await w.call('apply_patch', agentPatch());
      assert.deepEqual(w.assembled.afterWrite.list(), []);
    });
  });
});
