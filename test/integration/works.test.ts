import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, callError, connectToFirstFolder, folder, pollFor } from './helpers';

// Parallel works in the real editor, on a two-folder (multi-root) window whose folders become two git
// repositories: two works opened with isolation "worktree" each get a worktree of both repositories on their own
// task branch, outside the folders. Read, patch and exec in a work act in its worktrees and leave both folders
// (files, HEAD, index, branch) untouched and unseen by the editor's file search; a long command in work A does not
// make a patch in work B WORKSPACE_BUSY. (Named to run last, after workReview: it makes both folders repositories
// and leaves them so.)

const sha = (b: Uint8Array | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('parallel works in their own worktrees (two git folders)', function () {
  this.timeout(180_000);
  let client: Client;
  const roots: string[] = [];
  const ids: string[] = [];
  const git = (root: string, ...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
  /** A folder as the developer has it: HEAD, branch, index and working tree status, the bytes of one file. */
  const state = (root: string): string => JSON.stringify({ head: git(root, 'rev-parse', 'HEAD'), branch: git(root, 'branch', '--show-current'), status: git(root, 'status', '--porcelain=v1', '--untracked-files=all'), file: fs.readFileSync(path.join(root, 'works', 'shared.txt'), 'utf8') });

  before(async () => {
    const { client: c } = await connectToFirstFolder();
    client = c;
    const info = await call<{ workspaces: { id: string; name: string }[] }>(client, 'workspace_info', {});
    for (const i of [0, 1]) {
      const f = folder(i);
      const ws = info.workspaces.find((w) => w.name === f.name);
      assert.ok(ws, `folder ${i} is served`);
      ids.push(ws.id);
      const root = f.uri.fsPath;
      roots.push(root);
      const dotGit = path.join(root, '.git');
      // Earlier suites may have patched files under .git/ (a sensitive path) without it being a repository.
      if (fs.existsSync(dotGit)) fs.renameSync(dotGit, `${dotGit}-before-works`);
      git(root, 'init', '-q', '-b', 'main');
      git(root, 'config', 'user.email', 'dev@example.invalid');
      git(root, 'config', 'user.name', 'Dev');
      git(root, 'config', 'commit.gpgsign', 'false');
      fs.mkdirSync(path.join(root, 'works'), { recursive: true });
      fs.writeFileSync(path.join(root, 'works', 'shared.txt'), `folder ${i}\n`);
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--no-verify', '-m', 'fixture');
    }
  });

  after(async () => {
    await client?.close();
    // The repositories stay (the folders are this run's copies, and no suite runs after this one): removing a
    // .git under the built-in Git extension makes its pending git calls fail with an uncaught EPIPE in the host.
  });

  it('read, patch and exec in a worktree work leave both folders untouched, and a long command in work A does not block a patch in work B', async () => {
    const before = roots.map(state);
    const a = await call<{ work_id: string; branch: string }>(client, 'work_open', { workspace_id: ids[0], title: 'Serve the app', isolation: 'worktree' });
    const b = await call<{ work_id: string; branch: string }>(client, 'work_open', { workspace_id: ids[0], title: 'Fix the docs', isolation: 'worktree' });
    assert.match(a.branch, /^codespace\/serve-the-app-[0-9a-f]{8}$/);
    assert.notEqual(a.branch, b.branch, 'each work on its own task branch');

    // Work A runs a long exclusive command in its worktree of the first folder.
    const long = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: ids[0], work_id: a.work_id, command: ['sh', '-c', 'pwd; sleep 120'] });
    try {
      const where = await pollFor('work A\'s command prints its folder', async () => {
        const r = await call<{ chunk: string }>(client, 'read_process', { process_id: long.process_id, cursor: 0, wait_ms: 1000 });
        return r.chunk.includes('/') ? r.chunk.trim() : undefined;
      });
      assert.ok(!roots.some((r) => where.startsWith(r)), `work A's command runs outside the folders (${where})`);
      assert.ok(where.includes(a.branch.split('/')[1] ?? '?'), `in work A's worktree (${where})`);

      // Work A itself is busy; work B patches both repositories meanwhile.
      const busy = await callError(client, 'apply_patch', { workspace_id: ids[0], work_id: a.work_id, operation_key: 'works-a1', expected_versions: { 'works/shared.txt': sha('folder 0\n') }, patch: '*** Begin Patch\n*** Update File: works/shared.txt\n@@\n-folder 0\n+from work A\n*** End Patch' });
      assert.equal(busy.code, 'WORKSPACE_BUSY');
      for (const i of [0, 1]) {
        await call(client, 'apply_patch', {
          workspace_id: ids[i],
          work_id: b.work_id,
          operation_key: `works-b${i}`,
          expected_versions: { 'works/shared.txt': sha(`folder ${i}\n`) },
          patch: `*** Begin Patch\n*** Update File: works/shared.txt\n@@\n-folder ${i}\n+from work B in folder ${i}\n*** Add File: works/added.txt\n+added by work B\n*** End Patch`,
        });
        const read = await call<{ content: string }>(client, 'read', { workspace_id: ids[i], path: 'works/shared.txt', work_id: b.work_id });
        assert.equal(read.content, `from work B in folder ${i}\n`);
        const plain = await call<{ content: string }>(client, 'read', { workspace_id: ids[i], path: 'works/shared.txt' });
        assert.equal(plain.content, `folder ${i}\n`, 'without work_id: the folder itself');
      }
      const found = await call<{ paths: string[] }>(client, 'find', { workspace_id: ids[1], pattern: 'works/*', work_id: b.work_id });
      assert.deepEqual(found.paths.sort(), ['works/added.txt', 'works/shared.txt']);

      // Work B's command sees its own worktree (not A's, not the folder).
      const cat = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: ids[1], work_id: b.work_id, command: ['cat', 'works/shared.txt', 'works/added.txt'] });
      const out = await pollFor('work B\'s command to exit', async () => {
        const s = await call<{ state: string }>(client, 'process_status', { process_id: cat.process_id });
        return s.state === 'exited' ? (await call<{ chunk: string }>(client, 'read_process', { process_id: cat.process_id, cursor: 0 })).chunk : undefined;
      });
      assert.equal(out.replace(/\r/g, ''), 'from work B in folder 1\nadded by work B\n');

      // The folders: unchanged, and the editor's file search does not see the works' files.
      assert.deepEqual(roots.map(state), before, 'both folders untouched');
      for (const root of roots) assert.ok(!fs.existsSync(path.join(root, 'works', 'added.txt')));
      const seen = await vscode.workspace.findFiles('**/works/added.txt');
      assert.deepEqual(seen.map((u) => u.fsPath), [], 'the worktrees are outside the folders');
      // A work's patch is not followed for diagnostics in the folder's file of the same name (the language servers
      // see the folders, not the worktree), so the editor opened neither.
      const opened = vscode.workspace.textDocuments.map((d) => d.uri.fsPath).filter((p) => p.endsWith(path.join('works', 'shared.txt')));
      assert.deepEqual(opened, []);
    } finally {
      await call(client, 'terminate_process', { process_id: long.process_id }).catch(() => undefined);
    }
  });

  it('Open Work in New Window opens a work\'s worktrees (a workspace file beside them for several), and refuses a work without', async () => {
    const w = await call<{ work_id: string; branch: string }>(client, 'work_open', { workspace_id: ids[1], title: 'Look in a window', isolation: 'worktree' });
    const r = await vscode.commands.executeCommand<{ ok: boolean; code?: string; uri?: string }>('codespace.openWorkWorktree', w.work_id, { open: false });
    assert.equal(r.ok, true, JSON.stringify(r));
    const file = vscode.Uri.parse(r.uri ?? '').fsPath;
    assert.ok(file.endsWith('work.code-workspace'), file);
    assert.ok(!roots.some((root) => file.startsWith(root)), 'the workspace file is not in the folders');
    const listed = (JSON.parse(fs.readFileSync(file, 'utf8')) as { folders: { path: string; name: string }[] }).folders;
    assert.equal(listed.length, 2);
    for (const f of listed) {
      assert.ok(fs.existsSync(path.join(f.path, 'works', 'shared.txt')), `${f.path} is a worktree of a folder`);
      assert.ok(!roots.some((root) => f.path.startsWith(root)));
      assert.match(f.name, new RegExp(w.branch.replace('/', '\\/')));
    }
    const shared = await call<{ work_id: string }>(client, 'work_open', { workspace_id: ids[0], title: 'In the folder' });
    assert.equal((await vscode.commands.executeCommand<{ ok: boolean; code?: string }>('codespace.openWorkWorktree', shared.work_id, { open: false })).code, 'NO_WORKTREE');
    assert.equal((await vscode.commands.executeCommand<{ ok: boolean; code?: string }>('codespace.openWorkWorktree', 'work_nope', { open: false })).code, 'NOT_FOUND');
  });

  it('Discard Work removes a work\'s worktrees with their uncommitted files, keeps a branch with unpushed commits, and finishes the work', async () => {
    const w = await call<{ work_id: string; branch: string }>(client, 'work_open', { workspace_id: ids[0], title: 'Throw this away', isolation: 'worktree' });
    for (const i of [0, 1]) {
      await call(client, 'apply_patch', {
        workspace_id: ids[i],
        work_id: w.work_id,
        operation_key: `discard-${i}`,
        expected_versions: { 'works/shared.txt': sha(`folder ${i}\n`) },
        patch: `*** Begin Patch\n*** Update File: works/shared.txt\n@@\n-folder ${i}\n+dropped ${i}\n*** Add File: works/dropped.txt\n+untracked\n*** End Patch`,
      });
    }
    const opened = await vscode.commands.executeCommand<{ ok: boolean; uri?: string }>('codespace.openWorkWorktree', w.work_id, { open: false });
    const trees = (JSON.parse(fs.readFileSync(vscode.Uri.parse(opened.uri ?? '').fsPath, 'utf8')) as { folders: { path: string }[] }).folders.map((f) => f.path);
    // One commit in the second repository's worktree: its branch stays.
    git(trees[1] as string, 'commit', '-q', '--no-verify', '-am', 'kept commit');
    const before = roots.map(state);
    const r = await vscode.commands.executeCommand<{ ok: boolean; code?: string; worktrees?: { workspace_id: string; removed: boolean; branch_deleted?: boolean; kept_commits?: number }[] }>('codespace.discardWork', w.work_id, { confirm: false });
    assert.equal(r.ok, true, JSON.stringify(r));
    assert.deepEqual(r.worktrees?.map((t) => [t.workspace_id, t.removed, t.branch_deleted, t.kept_commits]), [[ids[0], true, true, undefined], [ids[1], true, false, 1]]);
    for (const t of trees) assert.ok(!fs.existsSync(t), `${t} is removed`);
    assert.equal(git(roots[0] as string, 'branch', '--list', w.branch).trim(), '');
    assert.match(git(roots[1] as string, 'log', '-1', '--format=%s', w.branch), /kept commit/);
    assert.deepEqual(roots.map(state), before, 'the folders are untouched');
    const fin = await call<{ closed: boolean; worktrees: { removed: boolean }[] }>(client, 'work_finish', { work_id: w.work_id });
    assert.ok(fin.closed && fin.worktrees.every((t) => t.removed));
    assert.equal((await vscode.commands.executeCommand<{ code?: string }>('codespace.discardWork', w.work_id, { confirm: false })).code, 'NO_WORKTREE');
    assert.equal((await vscode.commands.executeCommand<{ code?: string }>('codespace.discardWork', 'work_nope', { confirm: false })).code, 'NOT_FOUND');
  });

  it('binds a held patch of a worktree work to its worktree: the developer editing the folder does not make it stale, and approving writes the worktree', async () => {
    const config = vscode.workspace.getConfiguration('codespace');
    await config.update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    await config.update('review.openOnHold', false, vscode.ConfigurationTarget.Global);
    try {
      const w = await call<{ work_id: string; branch: string }>(client, 'work_open', { workspace_id: ids[0], title: 'Held in a worktree', isolation: 'worktree' });
      const list = git(roots[0] as string, 'worktree', 'list', '--porcelain').split('\n\n');
      const top = /^worktree (.*)$/m.exec(list.find((e) => e.includes(`branch refs/heads/${w.branch}`)) ?? '')?.[1];
      assert.ok(top, `the worktree of ${w.branch} is listed`);
      const err = await callError(client, 'apply_patch', {
        workspace_id: ids[0],
        work_id: w.work_id,
        operation_key: 'works-held',
        expected_versions: { 'works/shared.txt': sha('folder 0\n') },
        patch: '*** Begin Patch\n*** Update File: works/shared.txt\n@@\n-folder 0\n+held and approved\n*** End Patch',
      });
      assert.equal(err.code, 'APPROVAL_REQUIRED', err.message);
      const id = String(err.details?.approval_id);
      // The developer edits the same file in the folder meanwhile: not what the hold binds.
      const mine = path.join(roots[0] as string, 'works', 'shared.txt');
      fs.writeFileSync(mine, 'the developer\'s own edit\n');
      const decision = await vscode.commands.executeCommand<{ ok: boolean; code?: string }>('codespace.approveReview', id);
      assert.equal(decision.ok, true, JSON.stringify(decision));
      const r = await client.callTool({ name: 'operation_resume', arguments: { approval_id: id, wait_ms: 20_000 } });
      assert.equal((r.structuredContent as { status?: string } | undefined)?.status, 'applied', JSON.stringify(r.content));
      assert.equal(fs.readFileSync(path.join(top, 'works', 'shared.txt'), 'utf8'), 'held and approved\n');
      assert.equal(fs.readFileSync(mine, 'utf8'), 'the developer\'s own edit\n');
      fs.writeFileSync(mine, 'folder 0\n');
    } finally {
      await config.update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
      await config.update('review.openOnHold', undefined, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });
});
