import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { AfterWriteResult } from '../../src/features/review/vscode/afterWriteReview';
import { toAfterUri } from '../../src/features/review/vscode/afterWriteReview';
import type { ReviewCommentsForTests } from '../../src/features/review/vscode/reviewComments';
import { activateExtension, call, connectToFirstFolder, folder, pollFor } from './helpers';

// Review after the write in the real editor: with codespace.review.mode "after" on the first folder (and patches
// under "confirm", which would hold them before the write), an agent's patch applies at once without opening or
// focusing anything; the developer opens the review (one multi-file diff: accepted text left, file right), undoes one
// hunk (disk and ledger agree, the agent's next result says exactly what was undone), keeps the other from the
// cursor of an editor, and marks a file reviewed until it changes again. The state survives in workspaceState.

const sha = (b: Uint8Array | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const LINES = Array.from({ length: 12 }, (_, i) => `line ${i + 1}\n`).join('');

function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

describe('review after the write', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let root: string;
  const rel = 'after-write/review.txt';
  const file = (): string => path.join(root, ...rel.split('/'));
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codespace', folder(0).uri);
  const reviewId = (): string => `workspace:${wsId}`;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    root = folder(0).uri.fsPath;
    fs.mkdirSync(path.dirname(file()), { recursive: true });
    fs.writeFileSync(file(), LINES);
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    await config().update('review.mode', 'after', vscode.ConfigurationTarget.WorkspaceFolder);
  });
  after(async () => {
    await vscode.commands.executeCommand('codespace.clearAfterWriteReview', `workspace:${wsId}`);
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await config().update('review.mode', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(path.dirname(file()), { recursive: true, force: true });
    await client?.close();
  });

  it('applies at once, opens nothing; undo of one hunk writes through the ledger and the agent is told; keep and mark reviewed', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const hello = vscode.Uri.file(path.join(root, 'after-write', 'focus.txt'));
    fs.writeFileSync(hello.fsPath, 'the developer works here\n');
    await vscode.window.showTextDocument(hello);
    const activeBefore = hello.toString();
    const applied = await call<{ status: string }>(client, 'apply_patch', {
      workspace_id: wsId,
      patch: ['*** Begin Patch', `*** Update File: ${rel}`, '@@', ' line 1', '-line 2', '+LINE TWO', '@@', ' line 8', '-line 9', '+LINE NINE', '+line nine and a half', '*** End Patch'].join('\n'),
      expected_versions: { [rel]: sha(LINES) },
      operation_key: `after-write-${Date.now()}`,
    });
    assert.equal(applied.status, 'applied', 'confirm would hold it; the review after the write lets it apply');
    const agentText = fs.readFileSync(file(), 'utf8');
    assert.equal(agentText, LINES.replace('line 2\n', 'LINE TWO\n').replace('line 9\n', 'LINE NINE\nline nine and a half\n'));
    // Nothing opened by itself (no review tab, no focus taken).
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(allTabs().filter((t) => t.label.startsWith('CodeSpace review')).length, 0, 'a patch opens no review');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), activeBefore, 'a patch takes no focus');

    // The developer opens the review: one multi-file diff with the file's two hunks.
    const opened = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
    assert.equal(opened.ok, true, opened.message);
    const entry = opened.files?.find((f) => f.path === rel);
    assert.deepEqual(entry?.hunks, [{ start_line: 2, end_line: 2 }, { start_line: 9, end_line: 10 }]);
    assert.equal(entry?.right, vscode.Uri.file(file()).toString());
    const tab = await pollFor('the review tab', () => allTabs().find((t) => t.label.startsWith('CodeSpace review after the write')));
    const left = await vscode.workspace.openTextDocument(vscode.Uri.parse(entry?.left as string));
    assert.equal(left.getText(), LINES, 'the left side is the file before the agent wrote it');

    // Undo the second hunk (cursor on line 10 of the file, 0-based 9).
    const undone = await vscode.commands.executeCommand<AfterWriteResult>('codespace.undoChange', vscode.Uri.file(file()), 9);
    assert.equal(undone.ok, true, undone.message);
    const disk = fs.readFileSync(file());
    assert.equal(disk.toString('utf8'), LINES.replace('line 2\n', 'LINE TWO\n'), 'the hunk is undone on disk, the other kept');
    const notice = undone.notice;
    assert.ok(notice);
    assert.deepEqual({ ...notice, operation_id: undefined }, {
      action: 'undone',
      workspace_id: wsId,
      path: rel,
      range: { start_line: 9, end_line: 10 },
      undone: 'LINE NINE\nline nine and a half\n',
      restored: 'line 9\n',
      version: sha(disk),
      operation_id: undefined,
    });
    // The ledger agrees with the disk.
    const statusCall = (await client.callTool({ name: 'operation_status', arguments: { operation_id: notice.operation_id } })) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    assert.equal(statusCall.isError, undefined);
    const status = statusCall.structuredContent as { status: string; files: { path: string; before_version?: string; after_version?: string }[]; review_update?: unknown };
    assert.equal(status.status, 'applied');
    assert.deepEqual(status.files.map((f) => [f.path, f.before_version, f.after_version]), [[rel, sha(agentText), sha(disk)]]);
    // operation_status was the agent's next call: it carried the notice, and only that call.
    assert.deepEqual(status.review_update, [notice]);
    const raw = (await client.callTool({ name: 'workspace_info', arguments: {} })) as { structuredContent?: Record<string, unknown> };
    assert.equal(raw.structuredContent?.review_update, undefined, 'delivered once');

    // Keep the first hunk from the cursor of an editor on the file.
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file()));
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    editor.selection = new vscode.Selection(1, 3, 1, 3);
    const kept = await vscode.commands.executeCommand<AfterWriteResult>('codespace.keepChange');
    assert.equal(kept.ok, true, kept.message);
    assert.equal(fs.readFileSync(file(), 'utf8'), LINES.replace('line 2\n', 'LINE TWO\n'), 'keep writes nothing');
    await pollFor('the left side to take the kept hunk', () => (left.getText() === LINES.replace('line 2\n', 'LINE TWO\n') ? true : undefined));
    const none = await vscode.commands.executeCommand<AfterWriteResult>('codespace.undoChange', vscode.Uri.file(file()), 1);
    assert.equal(none.ok, false);
    assert.equal(none.code, 'NO_HUNK');

    // A new change to the file, marked reviewed, leaves the review until the file changes again.
    fs.writeFileSync(file(), `${fs.readFileSync(file(), 'utf8')}appended by hand\n`);
    const again = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
    assert.deepEqual(again.files?.find((f) => f.path === rel)?.hunks, [{ start_line: 13, end_line: 13 }]);
    const marked = await vscode.commands.executeCommand<AfterWriteResult>('codespace.markFileReviewed', { review: reviewId(), path: rel });
    assert.equal(marked.ok, true, marked.message);
    const empty = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
    assert.equal(empty.code, 'NO_CHANGES');
    fs.writeFileSync(file(), `${fs.readFileSync(file(), 'utf8')}and more\n`);
    const back = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
    assert.deepEqual(back.files?.find((f) => f.path === rel)?.hunks, [{ start_line: 13, end_line: 14 }], 'changed again: back in the review');
    assert.ok(tab);
  });

  it('a binary file (deleted, moved) and a mode change are listed and said so; Undo puts back the bytes and the mode, Keep and Mark Reviewed take them', async () => {
    const dir = path.join(root, 'after-write', 'kinds');
    const at = (name: string): string => path.join(dir, name);
    const relOf = (name: string): string => `after-write/kinds/${name}`;
    const BIN = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x0a, 0x00]);
    const PIC = Buffer.from([0x00, 0x00, 0x07, 0x80, 0x81]);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(at('logo.bin'), BIN);
    fs.chmodSync(at('logo.bin'), 0o640);
    fs.writeFileSync(at('pic.bin'), PIC);
    fs.writeFileSync(at('run.sh'), '#!/bin/sh\necho one\n');
    fs.chmodSync(at('run.sh'), 0o644);
    try {
      const applied = await call<{ status: string }>(client, 'apply_patch', {
        workspace_id: wsId,
        patch: ['*** Begin Patch', `*** Delete File: ${relOf('logo.bin')}`, `*** Update File: ${relOf('pic.bin')}`, `*** Move to: ${relOf('pic2.bin')}`, `*** Update File: ${relOf('run.sh')}`, '@@', '-echo one', '+echo two', '*** End Patch'].join('\n'),
        expected_versions: { [relOf('logo.bin')]: sha(BIN), [relOf('pic.bin')]: sha(PIC), [relOf('run.sh')]: sha('#!/bin/sh\necho one\n') },
        operation_key: `after-write-kinds-${Date.now()}`,
      });
      assert.equal(applied.status, 'applied');
      // A command of the agent makes the script executable.
      fs.chmodSync(at('run.sh'), 0o755);

      const opened = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
      assert.equal(opened.ok, true, opened.message);
      const entry = (name: string): NonNullable<AfterWriteResult['files']>[number] => {
        const e = opened.files?.find((f) => f.path === relOf(name));
        assert.ok(e, `${name} is in the review: ${JSON.stringify(opened.files?.map((f) => f.path))}`);
        return e;
      };
      assert.deepEqual(['logo.bin', 'pic.bin', 'pic2.bin'].map((n) => [entry(n).binary, entry(n).label]), [
        [true, `${relOf('logo.bin')} (binary)`],
        [true, `${relOf('pic.bin')} (binary)`],
        [true, `${relOf('pic2.bin')} (binary)`],
      ]);
      assert.deepEqual([entry('run.sh').binary, entry('run.sh').mode, entry('run.sh').label, entry('run.sh').hunks], [false, { from: '100644', to: '100755' }, `${relOf('run.sh')} (mode 100644 → 100755)`, [{ start_line: 2, end_line: 2 }]]);
      // Each side of a binary file is a read-only document that says so, with its size and sha256.
      const hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
      const logoLeft = (await vscode.workspace.openTextDocument(vscode.Uri.parse(entry('logo.bin').left))).getText();
      assert.match(logoLeft, /^Binary file, not shown as text: after-write\/kinds\/logo\.bin\nsize: 10 bytes\n/);
      assert.ok(logoLeft.includes(`sha256: ${hex(BIN)}`), logoLeft);
      const picRight = (await vscode.workspace.openTextDocument(vscode.Uri.parse(entry('pic2.bin').right))).getText();
      assert.match(picRight, /^Binary file, not shown as text: after-write\/kinds\/pic2\.bin\nsize: 5 bytes\n/);
      assert.ok(picRight.includes(`sha256: ${hex(PIC)}`), picRight);
      // The diff's title names the mode change.
      await pollFor('the review tab to name the mode change', () => allTabs().find((t) => t.label.startsWith('CodeSpace review after the write') && t.label.includes(`mode 100644 → 100755: ${relOf('run.sh')}`)));

      // Undo the deleted binary file from its left side: the exact bytes and the mode are back; the agent is told.
      const undone = await vscode.commands.executeCommand<AfterWriteResult>('codespace.undoChange', vscode.Uri.parse(entry('logo.bin').left), 0);
      assert.equal(undone.ok, true, undone.message);
      assert.deepEqual(fs.readFileSync(at('logo.bin')), BIN);
      assert.equal(fs.statSync(at('logo.bin')).mode & 0o777, 0o640);
      assert.equal(undone.notice?.change, 'binary');
      assert.deepEqual(undone.notice?.content?.restored, { size: BIN.byteLength, sha256: sha(BIN), text: false });
      const told = (await client.callTool({ name: 'workspace_info', arguments: {} })) as { structuredContent?: { review_update?: unknown[] } };
      assert.deepEqual(told.structuredContent?.review_update, [undone.notice], 'the agent that deleted it is told on its next call');

      // Keep the moved file's destination; Mark Reviewed on the source (its empty right side).
      const kept = await vscode.commands.executeCommand<AfterWriteResult>('codespace.keepChange', { review: reviewId(), path: relOf('pic2.bin') });
      assert.equal(kept.ok, true, kept.message);
      assert.deepEqual(fs.readFileSync(at('pic2.bin')), PIC, 'keep writes nothing');
      const marked = await vscode.commands.executeCommand<AfterWriteResult>('codespace.markFileReviewed', vscode.Uri.parse(entry('pic.bin').right));
      assert.equal(marked.ok, true, marked.message);

      // The script: keep its text hunk, then undo what is left, the mode.
      const keptHunk = await vscode.commands.executeCommand<AfterWriteResult>('codespace.keepChange', { review: reviewId(), path: relOf('run.sh'), line: 1 });
      assert.equal(keptHunk.ok, true, keptHunk.message);
      const again = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
      const script = again.files?.find((f) => f.path === relOf('run.sh'));
      assert.deepEqual([script?.hunks, script?.mode], [[], { from: '100644', to: '100755' }], 'only the mode change is left');
      assert.equal(again.files?.some((f) => f.path.startsWith('after-write/kinds/') && f.path !== relOf('run.sh')), false, 'the binary files left the review');
      const modeUndone = await vscode.commands.executeCommand<AfterWriteResult>('codespace.undoChange', vscode.Uri.file(at('run.sh')), 0);
      assert.equal(modeUndone.ok, true, modeUndone.message);
      assert.equal(fs.statSync(at('run.sh')).mode & 0o777, 0o644, 'the mode is back');
      assert.equal(fs.readFileSync(at('run.sh'), 'utf8'), '#!/bin/sh\necho two\n', 'the kept text stays');
      assert.deepEqual([modeUndone.notice?.change, modeUndone.notice?.mode], ['mode', { undone: '100755', restored: '100644' }]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("line comments on a work's file in its review after the write reach the agent as one review_comments instruction; a folder's review takes none", async () => {
    const comments = ((await activateExtension()) as unknown as { reviewCommentsForTests: ReviewCommentsForTests }).reviewCommentsForTests;
    const workRel = 'after-write/work.txt';
    const workFile = path.join(root, ...workRel.split('/'));
    fs.writeFileSync(workFile, 'one\ntwo\nthree\n');
    const goneRel = 'after-write/work-gone.txt';
    fs.writeFileSync(path.join(root, ...goneRel.split('/')), 'kept\r\nstill used');
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'after-write comments' });
    const applied = await call<{ status: string }>(client, 'apply_patch', {
      workspace_id: wsId,
      work_id: workId,
      patch: ['*** Begin Patch', `*** Update File: ${workRel}`, '@@', ' one', '-two', '+TWO', `*** Delete File: ${goneRel}`, '*** End Patch'].join('\n'),
      expected_versions: { [workRel]: sha('one\ntwo\nthree\n'), [goneRel]: sha('kept\r\nstill used') },
      operation_key: `after-write-comments-${Date.now()}`,
    });
    assert.equal(applied.status, 'applied');
    const opened = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', `work:${workId}`);
    assert.equal(opened.ok, true, opened.message);
    const right = vscode.Uri.file(workFile);
    await comments.add(right, 2, 2, 'Why upper case here?');
    // The left side (the accepted text): the line the change replaced, and a file the work deleted; the empty right
    // side of the deleted file takes none.
    const left = (p: string): vscode.Uri => toAfterUri(`work:${workId}`, 'base', root, p);
    await comments.add(left(workRel), 2, 2, '\tlower case was right\r\n');
    await comments.add(left(goneRel), 2, 2, '  \u{20BB7} still used by main');
    await comments.add(toAfterUri(`work:${workId}`, 'none', root, goneRel), 1, 1, 'not kept');
    // The folder's own review (no work) has no agent queue: its file takes no comment.
    await comments.add(vscode.Uri.file(file()), 1, 1, 'not sent anywhere');
    const target = `work:${workId}` as const;
    const expected = [
      { path: goneRel, side: 'old', range: { start_line: 2, end_line: 2 }, quoted: 'still used', body: '  \u{20BB7} still used by main' },
      { path: workRel, side: 'old', range: { start_line: 2, end_line: 2 }, quoted: 'two', body: '\tlower case was right\r\n' },
      { path: workRel, side: 'new', range: { start_line: 2, end_line: 2 }, quoted: 'TWO', body: 'Why upper case here?' },
    ];
    assert.deepEqual(comments.drafts(target), expected, 'in path, side (old first) and line order');
    assert.equal(comments.threads().filter((t) => t.uri === vscode.Uri.file(file()).toString()).length, 0, 'no thread on a file of a review without a work');

    const sent = await vscode.commands.executeCommand<{ ok: boolean; instruction_id?: string; comments?: number }>('codespace.sendReviewComments', workId);
    assert.equal(sent.ok, true, JSON.stringify(sent));
    const claimed = await call<{ instruction?: { id: string; kind?: string; comments?: unknown } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction?.id, sent.instruction_id);
    assert.equal(claimed.instruction?.kind, 'review_comments');
    assert.deepEqual(claimed.instruction?.comments, expected);
    await call(client, 'steer_complete', { instruction_id: claimed.instruction?.id, status: 'done', note: 'kept lower case' });
    await call(client, 'work_finish', { work_id: workId });
    await vscode.commands.executeCommand('codespace.clearAfterWriteReview', target);
    fs.rmSync(workFile, { force: true });
    fs.rmSync(path.join(root, ...goneRel.split('/')), { force: true });
  });

  // Every action on every kind of change, from either side of the diff: the one lookup of file and side
  // (reviewOfFile) serves them all. Each case writes its own files with one patch, then acts once.
  describe('every kind of change x Keep / Undo / Mark as Reviewed x either side', () => {
    const CRLF = 'a\r\nb\r\nc';
    interface Kind {
      readonly name: string;
      /** Files before the patch. */
      readonly setup: Record<string, string>;
      /** The patch's sections, for file names made from `n`. */
      readonly patch: (n: string) => string[];
      /** The file of the review acted on, whether it is there after the patch, and the line of its change on each side. */
      readonly acted: (n: string) => string;
      readonly present: boolean;
      readonly line: { old: number; new: number };
      /** The files on disk after an Undo (null: no file). */
      readonly undone: (n: string) => Record<string, string | null>;
    }
    const move: Pick<Kind, 'setup' | 'patch'> = { setup: { 'src.txt': 'm\nn\n' }, patch: (n) => [`*** Update File: ${n}/src.txt`, `*** Move to: ${n}/dst.txt`, '@@', ' m', '-n', '+N'] };
    const kinds: Kind[] = [
      {
        name: 'a changed file with CRLF and no final newline',
        setup: { 'upd.txt': CRLF },
        patch: (n) => [`*** Update File: ${n}/upd.txt`, '@@', ' a', '-b', '+B'],
        acted: (n) => `${n}/upd.txt`,
        present: true,
        line: { old: 1, new: 1 },
        undone: (n) => ({ [`${n}/upd.txt`]: CRLF }),
      },
      {
        name: 'an added file',
        setup: {},
        patch: (n) => [`*** Add File: ${n}/add.txt`, '+x', '+y'],
        acted: (n) => `${n}/add.txt`,
        present: true,
        line: { old: 0, new: 1 },
        undone: (n) => ({ [`${n}/add.txt`]: null }),
      },
      {
        name: 'a deleted file (CRLF, no final newline)',
        setup: { 'del.txt': CRLF },
        patch: (n) => [`*** Delete File: ${n}/del.txt`],
        acted: (n) => `${n}/del.txt`,
        present: false,
        line: { old: 2, new: 0 },
        undone: (n) => ({ [`${n}/del.txt`]: CRLF }),
      },
      {
        name: "a moved file's source",
        ...move,
        acted: (n) => `${n}/src.txt`,
        present: false,
        line: { old: 1, new: 0 },
        undone: (n) => ({ [`${n}/src.txt`]: 'm\nn\n', [`${n}/dst.txt`]: 'm\nN\n' }),
      },
      {
        name: "a moved file's destination",
        ...move,
        acted: (n) => `${n}/dst.txt`,
        present: true,
        line: { old: 0, new: 1 },
        undone: (n) => ({ [`${n}/src.txt`]: null, [`${n}/dst.txt`]: null }),
      },
    ];
    const read = (rel: string): string | null => {
      const abs = path.join(root, ...rel.split('/'));
      return fs.existsSync(abs) ? fs.readFileSync(abs, 'utf8') : null;
    };
    let count = 0;

    for (const kind of kinds) {
      for (const action of ['keep', 'undo', 'mark'] as const) {
        for (const side of ['old', 'new'] as const) {
          it(`${action} on ${kind.name}, from the ${side} side`, async () => {
            const n = `after-write/kinds-${Date.now()}-${count++}`;
            fs.mkdirSync(path.join(root, ...n.split('/')), { recursive: true });
            const versions: Record<string, string> = {};
            for (const [name, text] of Object.entries(kind.setup)) {
              fs.writeFileSync(path.join(root, ...n.split('/'), name), text);
              versions[`${n}/${name}`] = sha(text);
            }
            const applied = await call<{ status: string }>(client, 'apply_patch', {
              workspace_id: wsId,
              patch: ['*** Begin Patch', ...kind.patch(n), '*** End Patch'].join('\n'),
              expected_versions: versions,
              operation_key: `kinds-${n}`,
            });
            assert.equal(applied.status, 'applied');
            const rel = kind.acted(n);
            const agentWrote = Object.fromEntries(Object.keys(kind.undone(n)).map((p) => [p, read(p)]));
            // The document under the cursor: the accepted text (left), the file, or the empty side of a file not there.
            const uri = side === 'old' ? toAfterUri(reviewId(), 'base', root, rel) : kind.present ? vscode.Uri.file(path.join(root, ...rel.split('/'))) : toAfterUri(reviewId(), 'none', root, rel);
            const command = { keep: 'codespace.keepChange', undo: 'codespace.undoChange', mark: 'codespace.markFileReviewed' }[action];
            const result = await vscode.commands.executeCommand<AfterWriteResult>(command, uri, kind.line[side]);
            assert.equal(result.ok, true, `${result.code}: ${result.message}`);
            assert.equal(result.path, rel);
            const expected = action === 'undo' ? kind.undone(n) : agentWrote;
            for (const [p, text] of Object.entries(expected)) assert.equal(read(p), text, `${p} after ${action}`);
            if (action !== 'mark') {
              // The change left the review: the same action finds none.
              const again = await vscode.commands.executeCommand<AfterWriteResult>(command, uri, kind.line[side]);
              assert.equal(again.code, 'NO_HUNK', again.message);
            }
            const listed = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
            assert.equal(listed.files?.some((f) => f.path === rel) ?? false, false, `${rel} is out of the review after ${action}`);
            await vscode.commands.executeCommand('workbench.action.closeAllEditors');
            fs.rmSync(path.join(root, ...n.split('/')), { recursive: true, force: true });
          });
        }
      }
    }

    it('Undo Change with the cursor in the accepted text of a deleted file (no argument) brings it back, content and mode', async () => {
      const n = `after-write/kinds-cursor-${Date.now()}`;
      const rel = `${n}/gone.txt`;
      fs.mkdirSync(path.join(root, ...n.split('/')), { recursive: true });
      fs.writeFileSync(path.join(root, ...rel.split('/')), '  indented\r\nlast');
      // An executable file: it comes back with its mode.
      fs.chmodSync(path.join(root, ...rel.split('/')), 0o755);
      const applied = await call<{ status: string }>(client, 'apply_patch', {
        workspace_id: wsId,
        patch: ['*** Begin Patch', `*** Delete File: ${rel}`, '*** End Patch'].join('\n'),
        expected_versions: { [rel]: sha('  indented\r\nlast') },
        operation_key: `kinds-${n}`,
      });
      assert.equal(applied.status, 'applied');
      assert.equal(read(rel), null);
      const opened = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', reviewId());
      const entry = opened.files?.find((f) => f.path === rel);
      assert.equal(entry?.right, toAfterUri(reviewId(), 'none', root, rel).toString(), 'a deleted file shows an empty right side');
      const editor = await vscode.window.showTextDocument(vscode.Uri.parse(entry?.left as string), { preview: false });
      editor.selection = new vscode.Selection(1, 2, 1, 2);
      const undone = await vscode.commands.executeCommand<AfterWriteResult>('codespace.undoChange');
      assert.equal(undone.ok, true, `${undone.code}: ${undone.message}`);
      assert.equal(read(rel), '  indented\r\nlast', 'the file is back, byte for byte');
      assert.equal(undone.notice?.restored, '  indented\r\nlast');
      assert.equal(fs.statSync(path.join(root, ...rel.split('/'))).mode & 0o777, 0o755, 'with its mode');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      fs.rmSync(path.join(root, ...n.split('/')), { recursive: true, force: true });
    });
  });
});
