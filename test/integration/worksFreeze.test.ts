import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, callError, connectClient, connectToFirstFolder, connectionFromCommand, folder } from './helpers';

// Freeze, developer review and reviewed commit in the real editor, on the two-folder window whose folders are git
// repositories (made so here when no earlier suite did): an agent session patches both repositories in a worktree
// work and freezes it; edits are refused; the developer opens the review (one multi-file diff over both
// repositories), a change behind the freeze makes the approval stale, the developer approves the digest and commits:
// one commit per repository with the digest's trailer, the folders' own branches untouched, a repeat commits nothing
// new. Another agent session cannot approve what it did not see, and the author session cannot approve at all.
// (Named to run after works.test.ts, which leaves both folders repositories.)

/** A gh that is authenticated, finds a pull request once it has opened one (per repository folder), and logs its calls. */
const FAKE_GH = `#!/bin/sh
echo "$*" >> "$FAKE_GH_LOG"
state="$(git rev-parse --git-common-dir)/fake-gh-pr"
case "$1 $2" in
  "auth status") exit 0;;
  "pr list") if [ -f "$state" ]; then printf '[{"url":"%s"}]\\n' "$(cat "$state")"; else echo '[]'; fi;;
  "pr create") n=$(wc -l < "$FAKE_GH_LOG"); echo "https://github.example/o/r/pull/$n" > "$state"; cat "$state";;
  *) exit 2;;
esac
`;

interface FrozenReviewResult {
  ok: boolean;
  code?: string;
  digest?: string;
  files?: { workspace_id: string; path: string; kind: string }[];
  commits?: { workspace_id: string; commit: string }[];
}

describe('frozen works: freeze, review in the editor, reviewed commit (two git folders)', function () {
  this.timeout(180_000);
  let author: Client;
  let reviewer: Client;
  const roots: string[] = [];
  const ids: string[] = [];
  const git = (root: string, ...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  const worktreeOf = (root: string, branch: string): string => {
    const blocks = git(root, 'worktree', 'list', '--porcelain').split('\n\n');
    const block = blocks.find((b) => b.includes(`branch refs/heads/${branch}`));
    assert.ok(block, `a worktree on ${branch}`);
    return (/^worktree (.*)$/m.exec(block)?.[1] ?? '').trim();
  };

  before(async () => {
    const { client } = await connectToFirstFolder();
    author = client;
    const { url, token } = await connectionFromCommand();
    reviewer = await connectClient(url, token);
    const info = await call<{ workspaces: { id: string; name: string }[] }>(author, 'workspace_info', {});
    for (const i of [0, 1]) {
      const f = folder(i);
      const ws = info.workspaces.find((w) => w.name === f.name);
      assert.ok(ws, `folder ${i} is served`);
      ids.push(ws.id);
      const root = f.uri.fsPath;
      roots.push(root);
      let top = '';
      try {
        top = git(root, 'rev-parse', '--show-toplevel').trim();
      } catch {
        top = '';
      }
      if (top !== fs.realpathSync(root)) {
        const dotGit = path.join(root, '.git');
        if (fs.existsSync(dotGit)) fs.renameSync(dotGit, `${dotGit}-before-freeze`);
        git(root, 'init', '-q', '-b', 'main');
      }
      git(root, 'config', 'user.email', 'dev@example.invalid');
      git(root, 'config', 'user.name', 'Dev');
      git(root, 'config', 'commit.gpgsign', 'false');
      fs.mkdirSync(path.join(root, 'frozen'), { recursive: true });
      fs.writeFileSync(path.join(root, 'frozen', 'value.txt'), `value ${i}\n`);
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--no-verify', '-m', 'freeze fixture');
    }
  });

  after(async () => {
    await author?.close();
    await reviewer?.close();
  });

  it('the developer reviews a frozen two-repository work in the editor and commits exactly it, once', async () => {
    const heads = roots.map((r) => git(r, 'rev-parse', 'HEAD').trim());
    const w = await call<{ work_id: string; branch: string }>(author, 'work_open', { workspace_id: ids[0], title: 'Frozen values', isolation: 'worktree' });
    for (const i of [0, 1]) {
      const file = await call<{ version: string }>(author, 'read', { workspace_id: ids[i], path: 'frozen/value.txt', work_id: w.work_id });
      await call(author, 'apply_patch', {
        workspace_id: ids[i],
        work_id: w.work_id,
        operation_key: `frozen-${i}`,
        expected_versions: { 'frozen/value.txt': file.version },
        patch: `*** Begin Patch\n*** Update File: frozen/value.txt\n@@\n-value ${i}\n+value ${i} reviewed\n*** End Patch`,
      });
    }
    const { digest } = await call<{ digest: string }>(author, 'work_review', { work_id: w.work_id, action: 'freeze' });
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await callError(author, 'exec_command', { workspace_id: ids[1], work_id: w.work_id, command: ['true'] })).code, 'WORK_FROZEN');
    assert.equal((await callError(author, 'work_review', { work_id: w.work_id, action: 'approve', digest })).code, 'PERMISSION_DENIED', 'the author cannot approve');

    // The developer's review: one diff over both repositories, bound to the digest.
    const review = await vscode.commands.executeCommand<FrozenReviewResult>('codespace.reviewFrozenWork', w.work_id);
    assert.ok(review.ok, JSON.stringify(review));
    assert.equal(review.digest, digest);
    assert.deepEqual(review.files?.map((f) => [f.workspace_id, f.path, f.kind]), [[ids[0], 'frozen/value.txt', 'update'], [ids[1], 'frozen/value.txt', 'update']]);
    const tab = vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.label.startsWith('CodeSpace frozen work: Frozen values'));
    assert.ok(tab, `the review is open: ${vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.label).join(', ')}`);
    const left = await vscode.workspace.fs.readFile(vscode.Uri.from({ scheme: 'codespace-review', authority: `frozen.base.${heads[0] as string}`, path: vscode.Uri.file(path.join(worktreeOf(roots[0] as string, w.branch), 'frozen', 'value.txt')).path }));
    assert.equal(Buffer.from(left).toString('utf8'), 'value 0\n', 'the left side is the file before the work');

    // A change behind the freeze makes the approval stale; undone, the same digest is approved.
    const tree1 = worktreeOf(roots[1] as string, w.branch);
    fs.writeFileSync(path.join(tree1, 'frozen', 'value.txt'), 'changed behind the freeze\n');
    const stale = await vscode.commands.executeCommand<FrozenReviewResult>('codespace.approveFrozenWork', w.work_id);
    assert.equal(stale.code, 'REVIEW_STALE');
    fs.writeFileSync(path.join(tree1, 'frozen', 'value.txt'), 'value 1 reviewed\n');
    const approved = await vscode.commands.executeCommand<FrozenReviewResult>('codespace.approveFrozenWork', w.work_id, 'both values read right');
    assert.ok(approved.ok, JSON.stringify(approved));

    const committed = await vscode.commands.executeCommand<FrozenReviewResult>('codespace.commitFrozenWork', w.work_id);
    assert.ok(committed.ok, JSON.stringify(committed));
    assert.deepEqual(committed.commits?.map((c) => c.workspace_id).sort(), [...ids].sort());
    for (const [i, root] of roots.entries()) {
      const tree = worktreeOf(root, w.branch);
      assert.equal(git(tree, 'show', 'HEAD:frozen/value.txt'), `value ${i} reviewed\n`);
      assert.equal(git(tree, 'log', '-1', '--format=%(trailers:key=CodeSpace-Review,valueonly)').trim(), digest);
      assert.equal(git(root, 'rev-parse', 'HEAD').trim(), heads[i], 'the folder\'s own branch did not move');
      assert.equal(fs.readFileSync(path.join(root, 'frozen', 'value.txt'), 'utf8'), `value ${i}\n`, 'the folder is unchanged');
    }
    const again = await vscode.commands.executeCommand<FrozenReviewResult>('codespace.commitFrozenWork', w.work_id);
    assert.deepEqual(again.commits, committed.commits, 'a repeat finds the same commits');
    for (const root of roots) assert.equal(git(worktreeOf(root, w.branch), 'rev-list', '--count', `${heads[roots.indexOf(root)]}..HEAD`).trim(), '1');

    // Another session's review of the committed work: its checkpoint is no longer what is on disk.
    assert.equal((await callError(reviewer, 'work_review', { work_id: w.work_id, action: 'approve', digest })).code, 'REVIEW_STALE');

    // Delivery: a local bare remote per repository and a fake gh on PATH (this test runs in the extension host's
    // process, whose environment the delivery's git and gh inherit).
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-deliver-'));
    const bin = path.join(scratch, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'gh'), FAKE_GH, { mode: 0o755 });
    const saved = { PATH: process.env.PATH, FAKE_GH_LOG: process.env.FAKE_GH_LOG };
    const bares = roots.map((_, i) => path.join(scratch, `remote-${i}.git`));
    try {
      for (const [i, root] of roots.entries()) {
        git(scratch, 'init', '-q', '--bare', '-b', 'main', bares[i] as string);
        if (git(root, 'remote').split('\n').includes('origin')) git(root, 'remote', 'set-url', 'origin', bares[i] as string);
        else git(root, 'remote', 'add', 'origin', bares[i] as string);
      }
      Object.assign(process.env, { PATH: `${bin}:${process.env.PATH ?? ''}`, FAKE_GH_LOG: path.join(scratch, 'gh.log') });
      const delivered = await vscode.commands.executeCommand<FrozenReviewResult & { delivered?: { workspace_id: string; branch: string; push: string; pr_url?: string }[] }>('codespace.deliverWork', w.work_id);
      assert.ok(delivered.ok, JSON.stringify(delivered));
      assert.deepEqual(delivered.delivered?.map((d) => [d.branch, d.push]), [[w.branch, 'pushed'], [w.branch, 'pushed']]);
      for (const [i, bare] of bares.entries()) {
        const c: { commit: string } | undefined = committed.commits?.find((x) => x.workspace_id === ids[i]);
        assert.equal(git(bare, 'rev-parse', `refs/heads/${w.branch}`).trim(), c?.commit, 'the reviewed commit is on the remote task branch');
        assert.equal(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads').trim().split('\n').length, 1, 'only the task branch');
      }
      assert.ok(delivered.delivered?.every((d) => d.pr_url?.startsWith('https://github.example/')), JSON.stringify(delivered.delivered));
      const again = await vscode.commands.executeCommand<FrozenReviewResult & { delivered?: { push: string; pr_url?: string }[] }>('codespace.deliverWork', w.work_id);
      assert.deepEqual(again.delivered?.map((d) => d.push), ['already', 'already'], 'a repeat pushes nothing');
      assert.equal(fs.readFileSync(path.join(scratch, 'gh.log'), 'utf8').split('\n').filter((l) => l.startsWith('pr create')).length, 2, 'one pull request per repository, not opened again');
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      for (const root of roots) git(root, 'remote', 'remove', 'origin');
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
