import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { PanelForTests } from '../../src/vscode/panel/panelView';
import { EXTENSION_ID, call, connectToFirstFolder, folder, pollFor } from './helpers';

// Delivery through the GitHub Pull Requests extension, in the real editor with its stand-in loaded next to ours
// (test/fixtures/pr-extension-stub: the same id, API members and pr.create command, recording what it is asked). A
// worktree work in the first folder is patched, frozen, reviewed, approved and committed in the editor; Deliver
// pushes its task branch to a local bare remote and opens the extension's Create Pull Request view for that branch
// (the extension has no API that creates one), with an authenticated gh on PATH that is never asked. The developer
// creates the pull request in the view; delivering again records it (the record and the panel show its URL) and
// opens nothing a second time.

/** An authenticated gh that logs its calls: the test checks that the delivery never asks it. */
const FAKE_GH = `#!/bin/sh
echo "$*" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "auth status") exit 0;;
  "pr list") echo '[]';;
  "pr create") echo "https://github.example/o/r/pull/999";;
  *) exit 2;;
esac
`;

interface StubCall {
  readonly name: string;
  readonly args?: Record<string, unknown>;
}
interface PrExtensionStub {
  readonly calls: StubCall[];
  serve(root: string, head: string): void;
  createFromView(root: string, url: string, title: string): void;
  reset(): void;
}
interface Delivered {
  workspace_id: string;
  branch: string;
  push: string;
  pr_url?: string;
  compare_url?: string;
  pr_note?: string;
}
interface CommandResult {
  ok: boolean;
  code?: string;
  digest?: string;
  delivered?: Delivered[];
}

describe('delivery through the GitHub Pull Requests extension (its stand-in, loaded next to ours)', function () {
  this.timeout(180_000);
  let author: Client;
  let wsId: string;
  let root: string;
  let stub: PrExtensionStub;
  let panel: PanelForTests;
  const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  const worktreeOf = (branch: string): string => {
    const block = git(root, 'worktree', 'list', '--porcelain').split('\n\n').find((b) => b.includes(`branch refs/heads/${branch}`));
    assert.ok(block, `a worktree on ${branch}`);
    return (/^worktree (.*)$/m.exec(block)?.[1] ?? '').trim();
  };

  before(async () => {
    ({ client: author, wsId } = await connectToFirstFolder());
    root = folder(0).uri.fsPath;
    let top = '';
    try {
      top = git(root, 'rev-parse', '--show-toplevel').trim();
    } catch {
      top = '';
    }
    if (top !== fs.realpathSync(root)) {
      const dotGit = path.join(root, '.git');
      if (fs.existsSync(dotGit)) fs.renameSync(dotGit, `${dotGit}-before-pr-extension`);
      git(root, 'init', '-q', '-b', 'main');
    }
    git(root, 'config', 'user.email', 'dev@example.invalid');
    git(root, 'config', 'user.name', 'Dev');
    git(root, 'config', 'commit.gpgsign', 'false');
    fs.mkdirSync(path.join(root, 'pr-extension'), { recursive: true });
    fs.writeFileSync(path.join(root, 'pr-extension', 'value.txt'), 'before\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-q', '--no-verify', '-m', 'pr extension fixture');

    const ext = vscode.extensions.getExtension<{ stub: PrExtensionStub }>('GitHub.vscode-pull-request-github');
    assert.ok(ext, 'the stand-in for the GitHub Pull Requests extension is loaded');
    stub = (await ext.activate()).stub;
    stub.reset();
    const api = vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports;
    assert.ok(api?.panelForTests);
    panel = api.panelForTests;
    await vscode.commands.executeCommand('codespace.showPanel');
    await pollFor('the panel page is ready', () => panel.isReady() && panel.lastState() !== undefined);
  });

  after(async () => {
    stub?.reset();
    await author?.close();
  });

  it('opens its Create Pull Request view for the task branch (gh never asked); delivering again records the pull request created there and opens none', async () => {
    const w = await call<{ work_id: string; branch: string }>(author, 'work_open', { workspace_id: wsId, title: 'Delivered through the extension', isolation: 'worktree' });
    const file = await call<{ version: string }>(author, 'read', { workspace_id: wsId, path: 'pr-extension/value.txt', work_id: w.work_id });
    await call(author, 'apply_patch', {
      workspace_id: wsId,
      work_id: w.work_id,
      operation_key: 'pr-extension-1',
      expected_versions: { 'pr-extension/value.txt': file.version },
      patch: '*** Begin Patch\n*** Update File: pr-extension/value.txt\n@@\n-before\n+after\n*** End Patch',
    });
    const { digest } = await call<{ digest: string }>(author, 'work_review', { work_id: w.work_id, action: 'freeze' });
    const review = await vscode.commands.executeCommand<CommandResult>('codespace.reviewFrozenWork', w.work_id);
    assert.equal(review.digest, digest, JSON.stringify(review));
    const approved = await vscode.commands.executeCommand<CommandResult>('codespace.approveFrozenWork', w.work_id, 'reads right');
    assert.ok(approved.ok, JSON.stringify(approved));
    const committed = await vscode.commands.executeCommand<CommandResult>('codespace.commitFrozenWork', w.work_id);
    assert.ok(committed.ok, JSON.stringify(committed));
    const tree = worktreeOf(w.branch);
    stub.serve(tree, w.branch);

    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-pr-extension-'));
    const bin = path.join(scratch, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'gh'), FAKE_GH, { mode: 0o755 });
    const ghLog = path.join(scratch, 'gh.log');
    const bare = path.join(scratch, 'remote.git');
    const saved = { PATH: process.env.PATH, FAKE_GH_LOG: process.env.FAKE_GH_LOG };
    try {
      git(scratch, 'init', '-q', '--bare', '-b', 'main', bare);
      if (git(root, 'remote').split('\n').includes('origin')) git(root, 'remote', 'set-url', 'origin', bare);
      else git(root, 'remote', 'add', 'origin', bare);
      Object.assign(process.env, { PATH: `${bin}:${process.env.PATH ?? ''}`, FAKE_GH_LOG: ghLog });

      const first = await vscode.commands.executeCommand<CommandResult>('codespace.deliverWork', w.work_id);
      assert.ok(first.ok, JSON.stringify(first));
      assert.equal(first.delivered?.length, 1);
      const [d] = first.delivered ?? [];
      assert.equal(d?.branch, w.branch);
      assert.equal(d?.push, 'pushed');
      assert.equal(d?.pr_url, undefined, 'the pull request waits in the view');
      assert.equal(d?.pr_note, `opened in the GitHub Pull Requests extension's Create Pull Request view for ${w.branch} (base main): create it there; delivering again records it`);
      assert.equal(git(bare, 'rev-parse', `refs/heads/${w.branch}`).trim(), git(tree, 'rev-parse', 'HEAD').trim(), 'the reviewed commit is on the remote');
      const creates = (): StubCall[] => stub.calls.filter((c) => c.name === 'pr.create');
      assert.deepEqual(creates().map((c) => c.args), [{ repoPath: vscode.Uri.file(tree).fsPath, compareBranch: w.branch }], JSON.stringify(stub.calls));
      assert.ok(
        stub.calls.some((c) => c.name === 'getRepositoryDescription' && c.args?.uri === vscode.Uri.file(tree).toString()),
        'it looked for an existing pull request of the repository first',
      );

      // The developer clicks Create in the extension's view.
      stub.createFromView(tree, 'https://github.example/o/r/pull/501', 'Delivered through the extension');
      const again = await vscode.commands.executeCommand<CommandResult>('codespace.deliverWork', w.work_id);
      assert.ok(again.ok, JSON.stringify(again));
      assert.deepEqual(again.delivered?.map((x) => [x.push, x.pr_url, x.pr_note]), [['already', 'https://github.example/o/r/pull/501', undefined]]);
      assert.equal(creates().length, 1, 'no second pull request is opened');
      assert.equal(fs.existsSync(ghLog) ? fs.readFileSync(ghLog, 'utf8') : '', '', 'gh was never asked');

      const row = await pollFor('the panel shows the delivered work with its pull request', () => {
        const work = panel.lastState()?.works?.find((x) => x.id === w.work_id);
        return work?.delivery?.state === 'delivered' && (work.delivery.links?.length ?? 0) > 0 ? work : undefined;
      });
      assert.deepEqual(row.delivery?.links, [{ workspaceId: wsId, branch: w.branch, url: 'https://github.example/o/r/pull/501', kind: 'pull_request' }]);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      git(root, 'remote', 'remove', 'origin');
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
