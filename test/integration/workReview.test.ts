import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { ReviewCommentsForTests } from '../../src/features/review/vscode/reviewComments';
import { activateExtension, call, connectToFirstFolder, folder } from './helpers';

// The review of a whole work and the reviewed commit, in the real editor with the built-in Git extension: the
// first folder becomes a git repository, an agent opens a work over MCP (the baseline is captured then), files
// change by patch and behind the tools' back, Review Work opens them all in one multi-file diff (left: the
// baseline, read-only; right: the file on disk), and Commit Reviewed Work commits exactly the reviewed bytes —
// or refuses when a file changed after the review opened, or the index holds something else.
// (Named to run last: it turns the first folder into a git repository, and removes it again.)

interface ReviewResult {
  ok: boolean;
  code?: string;
  message?: string;
  work_id?: string;
  files?: { path: string; kind: string; binary?: boolean; mode?: { from: string; to: string }; label?: string; left: string; right: string }[];
  commit?: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const sha = (b: Uint8Array | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

/** The (original, modified) pairs of a multi-file diff tab (TabInputTextMultiDiff is proposed API in 1.100; the host hands its textDiffs anyway). */
function multiDiffPairs(tab: vscode.Tab): { original: string; modified: string }[] | undefined {
  const parts = (tab.input as { textDiffs?: vscode.TabInputTextDiff[] } | undefined)?.textDiffs;
  return Array.isArray(parts) ? parts.map((p) => ({ original: p.original.toString(), modified: p.modified.toString() })) : undefined;
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('work review and reviewed commit (git)', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  let root: string;
  let setAside = false;
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  const gitBytes = (...args: string[]): Buffer => execFileSync('git', args, { cwd: root, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  const file = (rel: string): string => path.join(root, ...rel.split('/'));
  const write = (rel: string, text: string | Uint8Array): void => {
    fs.mkdirSync(path.dirname(file(rel)), { recursive: true });
    fs.writeFileSync(file(rel), text);
  };

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    root = folder(0).uri.fsPath;
    // Earlier suites may have patched files under .git/ (a sensitive path) without it being a repository: set that aside.
    const dotGit = path.join(root, '.git');
    if (fs.existsSync(dotGit)) {
      fs.renameSync(dotGit, `${dotGit}-before-work-review`);
      setAside = true;
    }
    git('init', '-q');
    git('config', 'user.email', 'reviewer@example.invalid');
    git('config', 'user.name', 'Reviewer');
    git('config', 'commit.gpgsign', 'false');
    write('review/keep.txt', 'keep\n');
    write('review/edit.txt', 'line 1\nline 2\n');
    write('review/delete-me.txt', 'to be deleted\n');
    git('add', '-A');
    git('commit', '-q', '--no-verify', '-m', 'fixture');
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
    fs.rmSync(path.join(root, '.git'), { recursive: true, force: true });
    if (setAside) fs.renameSync(path.join(root, '.git-before-work-review'), path.join(root, '.git'));
  });

  async function openWork(title: string): Promise<string> {
    const r = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title });
    assert.equal(typeof r.work_id, 'string');
    return r.work_id;
  }

  async function patch(rel: string, before: string, after: string, key: string, workId: string): Promise<void> {
    const p = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', ...before.trimEnd().split('\n').map((l) => `-${l}`), ...after.trimEnd().split('\n').map((l) => `+${l}`), '*** End Patch'].join('\n');
    await call(client, 'apply_patch', { workspace_id: wsId, patch: p, expected_versions: { [rel]: sha(before) }, operation_key: key, work_id: workId });
  }

  it('opens every change since work_open in one diff, left the baseline and right the disk, and commits exactly the reviewed bytes', async () => {
    // An uncommitted change before the work opens is part of the baseline, not of the work.
    write('review/keep.txt', 'keep, edited before the work\n');
    const workId = await openWork('work review e2e');
    await patch('review/edit.txt', 'line 1\nline 2\n', 'line 1\nline 2 patched\n', 'wr-1', workId);
    // Changes made by commands (not by patches) count too: written and removed behind the tools' back.
    write('review/added by command.txt', 'from a command\n');
    fs.rmSync(file('review/delete-me.txt'));

    const r = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(r.ok, true, r.message);
    const files = r.files ?? [];
    assert.deepEqual(files.map((f) => [f.path, f.kind]), [
      ['review/added by command.txt', 'add'],
      ['review/delete-me.txt', 'delete'],
      ['review/edit.txt', 'update'],
    ]);
    const edit = files.find((f) => f.path === 'review/edit.txt');
    assert.ok(edit);
    assert.equal(vscode.Uri.parse(edit.left).scheme, 'codespace-review');
    assert.match(vscode.Uri.parse(edit.left).authority, /^work\.baseline\./);
    assert.equal(vscode.Uri.parse(edit.right).toString(), vscode.Uri.file(file('review/edit.txt')).toString(), 'the right side is the file on disk');
    assert.equal(vscode.Uri.parse(edit.left).path, vscode.Uri.parse(edit.right).path, 'both sides share the path (no rename shown)');
    assert.equal(dec.decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(edit.left))), 'line 1\nline 2\n', 'the left side is the baseline');
    const added = files.find((f) => f.path === 'review/added by command.txt');
    assert.equal((await vscode.workspace.fs.readFile(vscode.Uri.parse(added?.left ?? ''))).byteLength, 0, 'an added file has an empty left side');
    const deleted = files.find((f) => f.path === 'review/delete-me.txt');
    assert.equal(dec.decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(deleted?.left ?? ''))), 'to be deleted\n');
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(vscode.Uri.parse(edit.left), enc.encode('x'))), 'the baseline is read-only');

    // The multi-file diff editor shows those pairs.
    const tab = await waitFor('the work review tab is open', () => allTabs().find((t) => t.label.startsWith('CodeSpace work review: work review e2e')));
    const pairs = multiDiffPairs(tab);
    assert.ok(pairs, 'the review is one multi-file diff tab');
    const shown = new Map(pairs.map((p) => [p.modified, p.original]));
    assert.equal(shown.get(edit.right), edit.left, 'edit.txt: baseline on the left, disk on the right');
    assert.equal(shown.get(added?.right ?? ''), added?.left, 'the added file: empty on the left, disk on the right');
    assert.equal(shown.get(deleted?.right ?? ''), deleted?.left, 'the deleted file: the baseline on the left, empty on the right');

    const before = git('rev-parse', 'HEAD').trim();
    const c = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'Reviewed: work review e2e');
    assert.equal(c.ok, true, c.message);
    const head = git('rev-parse', 'HEAD').trim();
    assert.notEqual(head, before);
    assert.equal(c.commit, head);
    assert.equal(git('rev-parse', 'HEAD~1').trim(), before, 'one new commit');
    assert.equal(git('log', '-1', '--format=%s').trim(), 'Reviewed: work review e2e');
    assert.deepEqual(gitBytes('show', 'HEAD:review/edit.txt'), fs.readFileSync(file('review/edit.txt')), 'the reviewed bytes');
    assert.equal(gitBytes('show', 'HEAD:review/edit.txt').toString(), 'line 1\nline 2 patched\n');
    assert.equal(gitBytes('show', 'HEAD:review/added by command.txt').toString(), 'from a command\n');
    assert.equal(git('ls-tree', 'HEAD', '--', 'review/delete-me.txt').trim(), '', 'the deletion is committed');
    // Only the reviewed files: the change made before the work opened stays uncommitted.
    assert.deepEqual(git('diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD').trim().split('\n').sort(), ['review/added by command.txt', 'review/delete-me.txt', 'review/edit.txt']);
    assert.equal(gitBytes('show', 'HEAD:review/keep.txt').toString(), 'keep\n');
    assert.match(git('status', '--porcelain', '--', 'review/keep.txt'), /^ M review\/keep\.txt/);
    assert.equal(git('diff', '--cached', '--name-only').trim(), '', 'nothing is left staged');
  });

  it('a binary file and a mode change: listed, the binary said to be one (not opened as text), both committed as they are', async () => {
    const binBefore = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x0a]);
    const binAfter = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x02, 0xff, 0xfe, 0x0a, 0x00]);
    fs.writeFileSync(file('review/image.bin'), binBefore);
    write('review/run.sh', '#!/bin/sh\necho run\n');
    fs.chmodSync(file('review/run.sh'), 0o644);
    const workId = await openWork('binary and mode');
    // Commands of the work: a binary file rewritten, a script made executable (its text unchanged).
    fs.writeFileSync(file('review/image.bin'), binAfter);
    fs.chmodSync(file('review/run.sh'), 0o755);

    const r = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(r.ok, true, r.message);
    const files = (r.files ?? []).filter((f) => f.path === 'review/image.bin' || f.path === 'review/run.sh');
    assert.deepEqual(files.map((f) => [f.path, f.kind]), [['review/image.bin', 'update'], ['review/run.sh', 'update']]);
    const [bin, script] = files;
    assert.ok(bin && script);
    assert.deepEqual([bin.binary, bin.mode, bin.label], [true, undefined, 'review/image.bin (binary)']);
    assert.deepEqual([script.binary, script.mode, script.label], [false, { from: '100644', to: '100755' }, 'review/run.sh (mode 100644 → 100755)']);
    // The binary file is said to be one: each side a read-only document with its size and sha256, never its bytes as text.
    const hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
    const left = await vscode.workspace.openTextDocument(vscode.Uri.parse(bin.left));
    const right = await vscode.workspace.openTextDocument(vscode.Uri.parse(bin.right));
    assert.match(left.getText(), /^Binary file, not shown as text: review\/image\.bin\nsize: 9 bytes\n/);
    assert.ok(left.getText().includes(`sha256: ${hex(binBefore)}`), left.getText());
    assert.match(right.getText(), /^Binary file, not shown as text: review\/image\.bin\nsize: 10 bytes\n/);
    assert.ok(right.getText().includes(`sha256: ${hex(binAfter)}`), right.getText());
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(vscode.Uri.parse(bin.right), enc.encode('x'))), 'the description is read-only');
    // The mode change is said in the diff's title (the text of both sides is the same).
    const tab = await waitFor('the review tab names the mode change', () => allTabs().find((t) => t.label.startsWith('CodeSpace work review: binary and mode') && t.label.includes('mode 100644 → 100755: review/run.sh')));
    assert.ok(tab);

    const committed = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'Reviewed binary and mode');
    assert.equal(committed.ok, true, committed.message);
    assert.deepEqual(gitBytes('show', 'HEAD:review/image.bin'), binAfter, 'the binary file is committed byte for byte');
    assert.match(git('ls-tree', 'HEAD', '--', 'review/run.sh'), /^100755 /, 'the mode change is committed');
  });

  it('refuses to commit a file edited after the review opened, and an index holding other staged changes', async () => {
    const workId = await openWork('edited after review');
    write('review/later.txt', 'as reviewed\n');
    const r = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(r.files?.map((f) => f.path), ['review/later.txt']);
    write('review/later.txt', 'changed after the review opened\n');
    const head = git('rev-parse', 'HEAD').trim();
    const refused = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'must not happen');
    assert.equal(refused.ok, false);
    assert.equal(refused.code, 'CHANGED_SINCE_REVIEW');
    assert.match(refused.message ?? '', /review\/later\.txt/);
    assert.equal(git('rev-parse', 'HEAD').trim(), head, 'no commit');
    assert.equal(git('diff', '--cached', '--name-only').trim(), '', 'nothing staged');

    // Reviewed again, it commits; but not while the user's index holds something else.
    const again = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(again.ok, true, again.message);
    write('review/unrelated.txt', 'staged by the user\n');
    git('add', 'review/unrelated.txt');
    const blocked = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'must not happen either');
    assert.equal(blocked.code, 'INDEX_NOT_EMPTY', blocked.message);
    assert.match(blocked.message ?? '', /review\/unrelated\.txt/);
    assert.equal(git('rev-parse', 'HEAD').trim(), head);
    assert.equal(git('diff', '--cached', '--name-only').trim(), 'review/unrelated.txt', 'the user’s staging is left as it was');
    git('reset', '-q', '--', 'review/unrelated.txt');
    fs.rmSync(file('review/unrelated.txt'));

    const ok = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'Reviewed later.txt');
    assert.equal(ok.ok, true, ok.message);
    assert.equal(gitBytes('show', 'HEAD:review/later.txt').toString(), 'changed after the review opened\n');
  });

  it('line comments in a work review reach the agent as one review_comments instruction (steer_claim_next), kept until sent', async () => {
    const comments = ((await activateExtension()) as unknown as { reviewCommentsForTests: ReviewCommentsForTests }).reviewCommentsForTests;
    write('review/commented.txt', 'alpha\nbeta\ngamma\n');
    const workId = await openWork('work review comments');
    await patch('review/commented.txt', 'alpha\nbeta\ngamma\n', 'alpha\nBETA\nGAMMA\n', 'wr-comments', workId);
    const r = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(r.ok, true, r.message);
    const right = vscode.Uri.file(file('review/commented.txt'));
    const baseline = vscode.Uri.parse(r.files?.find((f) => f.path === 'review/commented.txt')?.left ?? '');
    await comments.add(right, 2, 3, 'Why upper case?');
    await comments.add(baseline, 1, 1, '  the baseline (old side) takes comments too ');
    await comments.add(vscode.Uri.file(file('review/keep.txt')), 1, 1, 'not a file of the review');
    const target = `work:${workId}` as const;
    const expected = [
      { path: 'review/commented.txt', side: 'old', range: { start_line: 1, end_line: 1 }, quoted: 'alpha', body: '  the baseline (old side) takes comments too ' },
      { path: 'review/commented.txt', side: 'new', range: { start_line: 2, end_line: 3 }, quoted: 'BETA\nGAMMA', body: 'Why upper case?' },
    ];
    assert.deepEqual(comments.drafts(target), expected);
    comments.reload();
    assert.deepEqual(comments.drafts(target), expected, 'kept across a reload until sent');
    assert.equal(comments.threads().filter((t) => t.uri === right.toString()).length, 1);

    const sent = await vscode.commands.executeCommand<{ ok: boolean; instruction_id?: string; comments?: number }>('codespace.sendReviewComments', workId);
    assert.equal(sent.ok, true, JSON.stringify(sent));
    assert.equal(sent.comments, 2);
    const claimed = await call<{ instruction?: { id: string; kind?: string; comments?: unknown; text: string } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction?.id, sent.instruction_id);
    assert.equal(claimed.instruction?.kind, 'review_comments');
    assert.deepEqual(claimed.instruction?.comments, expected);
    assert.match(claimed.instruction?.text ?? '', /review\/commented\.txt:2-3: Why upper case\?/);
    assert.deepEqual(comments.drafts(target), [], 'sent comments are no longer drafts');
    assert.equal(comments.threads().filter((t) => t.uri === right.toString()).length, 0);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('without git, a work has no baseline: the review lists the files patched under it and offers no diff', async () => {
    const info = await call<{ workspaces: { id: string; name: string }[] }>(client, 'workspace_info', {});
    const second = info.workspaces.find((w) => w.name === folder(1).name);
    assert.ok(second, 'the second folder is served');
    // An earlier sandboxed command in this folder leaves an empty `.git` folder (the read-only mount point that keeps
    // `git init` out, README "Security model"): that is no repository either.
    const dotGit = path.join(folder(1).uri.fsPath, '.git');
    assert.ok(!fs.existsSync(dotGit) || (fs.statSync(dotGit).isDirectory() && fs.readdirSync(dotGit).length === 0), 'the second folder is no git repository');
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: second.id, title: 'no git' });
    const rel = 'docs/no-git.txt';
    fs.mkdirSync(path.join(folder(1).uri.fsPath, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(folder(1).uri.fsPath, rel), 'one\n');
    const p = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', '-one', '+two', '*** End Patch'].join('\n');
    await call(client, 'apply_patch', { workspace_id: second.id, patch: p, expected_versions: { [rel]: sha('one\n') }, operation_key: 'wr-nogit', work_id: workId });
    const r = await vscode.commands.executeCommand<ReviewResult & { patched?: string[] }>('codespace.reviewWork', workId);
    assert.equal(r.ok, false);
    assert.equal(r.code, 'NO_BASELINE');
    assert.deepEqual(r.patched, [rel]);
    const c = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'x');
    assert.equal(c.code, 'NOT_REVIEWED');
    fs.rmSync(path.join(folder(1).uri.fsPath, rel));
  });

  it('says when nothing changed, and refuses a commit without a review', async () => {
    const workId = await openWork('nothing');
    const r = await vscode.commands.executeCommand<ReviewResult>('codespace.reviewWork', workId);
    assert.equal(r.code, 'NO_CHANGES');
    const c = await vscode.commands.executeCommand<ReviewResult>('codespace.commitReviewedWork', workId, 'x');
    assert.equal(c.code, 'NOT_REVIEWED');
  });
});
