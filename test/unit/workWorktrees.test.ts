/**
 * Works with their own git worktrees, on two disposable repositories served as a two-folder window through the real
 * assembly (tools called through the dispatcher): work_open creates a worktree of each repository on a task branch
 * outside the folders; read, find, search, apply_patch and exec_command with the work_id act in it (paths stay
 * workspace-relative, confinement holds there) and leave the folders untouched; occupancy is per work; the bound
 * refuses one work too many; a reload (a new assembly on the same storage) keeps the work's worktrees.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { contentVersion } from '../../src/features/patches/common/version';
import { branchSlug } from '../../src/features/works/common/steeringService';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { GitWorktreeFactory } from '../../src/features/works/node/gitWorktreeFactory';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { GIT_ENV, git, makeRepo } from './helpers/gitRepo';

/** Everything the developer's folder is: HEAD, branch, status and every file's bytes. */
function snapshot(repo: string): string {
  const files: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else files[path.relative(repo, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(repo);
  return JSON.stringify({ head: git(repo, 'rev-parse', 'HEAD'), branch: git(repo, 'branch', '--show-current'), status: git(repo, 'status', '--porcelain'), files });
}

type Outcome = { kind: string; value?: Record<string, unknown>; body?: { code: string; message: string; details?: Record<string, unknown> } };

describe('works with their own worktrees (two git folders, real assembly)', function () {
  this.timeout(120_000);
  let dir: string;
  let storage: string;
  let repoA: string;
  let repoB: string;
  let plain: string;
  let assembled: AssembledServices | undefined;
  let maxWorktrees = 8;
  let maxDiskMiB = 2048;

  let sandboxed = false;
  let hangBeforeFinish = false;
  let confirmPatches = false;

  async function assemble(): Promise<AssembledServices> {
    const a = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(
        new InMemoryWorkspaceSource([
          { root: repoA, name: 'alpha', preferredId: 'alpha', profile: 'exec' },
          { root: repoB, name: 'beta', preferredId: 'beta', profile: 'exec' },
          { root: plain, name: 'plain', preferredId: 'plain', profile: 'exec' },
        ]),
      ), storage, {
        worktrees: new GitWorktreeFactory({ dir: path.join(storage, 'worktrees') }),
        maxWorktreeWorks: () => maxWorktrees,
        maxWorktreeDiskMiB: () => maxDiskMiB,
        contentSearch: new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit' }),
        ...(confirmPatches ? { approvalPolicy: () => ({ patches: 'confirm' as const, commands: 'off' as const, agentMayResolve: false }) } : {}),
        ...(hangBeforeFinish ? { faults: { beforeFinish: () => new Promise<void>(() => undefined) } } : {}),
        ...(sandboxed ? { isolation: { mode: () => 'required' as const, network: () => 'block' as const, gitWrites: () => 'commit' as const, maxProcesses: () => 512 } } : {}),
      }),
    );
    assembled = a;
    return a;
  }

  async function call(a: AssembledServices, name: string, args: Record<string, unknown>): Promise<Outcome> {
    return (await a.dispatcher.call(name, args, new AbortController().signal, { session: 'S1' })) as Outcome;
  }
  async function ok(a: AssembledServices, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await call(a, name, args);
    assert.equal(r.kind, 'result', `${name}: ${JSON.stringify(r.body)}`);
    return r.value as Record<string, unknown>;
  }
  async function fails(a: AssembledServices, name: string, args: Record<string, unknown>, code: string, reason?: string): Promise<Outcome['body']> {
    const r = await call(a, name, args);
    assert.equal(r.kind, 'error', `${name} should fail with ${code}: ${JSON.stringify(r.value)}`);
    assert.equal(r.body?.code, code, r.body?.message);
    if (reason !== undefined) assert.equal(r.body?.details?.reason, reason, r.body?.message);
    return r.body;
  }

  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-works-')));
    storage = path.join(dir, 'storage');
    fs.mkdirSync(storage);
    repoA = makeRepo(path.join(dir, 'alpha'), { 'src/app.ts': 'export const a = 1;\n', 'README.md': 'alpha\n' });
    repoB = makeRepo(path.join(dir, 'beta'), { 'lib.txt': 'beta one\n' });
    plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    fs.writeFileSync(path.join(plain, 'notes.txt'), 'not in git\n');
    maxWorktrees = 8;
    maxDiskMiB = 2048;
    sandboxed = false;
    hangBeforeFinish = false;
    confirmPatches = false;
  });

  afterEach(async () => {
    await assembled?.shutdown();
    assembled = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the task branch after the title', () => {
    assert.equal(branchSlug('Fix the Login flow!'), 'fix-the-login-flow');
    assert.equal(branchSlug('***'), 'work');
    assert.ok(branchSlug('x'.repeat(100)).length <= 40);
  });

  it('gives a worktree work a worktree of each git folder on its task branch, outside the folders, and leaves the folders alone', async () => {
    const a = await assemble();
    const before = [snapshot(repoA), snapshot(repoB)];
    const w = await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Fix the login', isolation: 'worktree' });
    const workId = String(w.work_id);
    const trees = a.steering.work(workId)?.worktrees ?? [];
    assert.deepEqual(trees.map((t) => t.workspace_id), ['alpha', 'beta'], 'the folder outside git has none');
    assert.equal(w.branch, trees[0]?.branch);
    assert.match(trees[0]?.branch ?? '', /^codespace\/fix-the-login-[0-9a-f]{8}$/);
    assert.equal(trees[0]?.base, git(repoA, 'rev-parse', 'HEAD').trim());
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    for (const [root, repo] of [[rootA, repoA], [rootB, repoB]] as const) {
      assert.ok(root.startsWith(path.join(storage, 'worktrees')), root);
      assert.ok(!root.startsWith(repo + path.sep));
      assert.equal(git(root, 'branch', '--show-current').trim(), trees[0]?.branch);
    }

    // Read, find, search in the work see the worktree; without work_id, the folder.
    fs.writeFileSync(path.join(rootA, 'only-in-work.txt'), 'work file\n');
    assert.equal((await ok(a, 'read', { workspace_id: 'alpha', path: 'only-in-work.txt', work_id: workId })).content, 'work file\n');
    await fails(a, 'read', { workspace_id: 'alpha', path: 'only-in-work.txt' }, 'NOT_FOUND');
    assert.deepEqual((await ok(a, 'find', { workspace_id: 'alpha', pattern: '*.txt', work_id: workId })).paths, ['only-in-work.txt']);
    assert.deepEqual((await ok(a, 'find', { workspace_id: 'alpha', pattern: '*.txt' })).paths, []);
    fs.rmSync(path.join(rootA, 'only-in-work.txt'));

    // apply_patch in both repositories of the work; the folders do not change.
    const app = fs.readFileSync(path.join(repoA, 'src/app.ts'));
    await ok(a, 'apply_patch', {
      workspace_id: 'alpha',
      work_id: workId,
      operation_key: 'p1',
      expected_versions: { 'src/app.ts': contentVersion(app) },
      patch: '*** Begin Patch\n*** Update File: src/app.ts\n@@\n-export const a = 1;\n+export const a = 2;\n*** Add File: NEW.md\n+new in the work\n*** End Patch\n',
    });
    await ok(a, 'apply_patch', {
      workspace_id: 'beta',
      work_id: workId,
      operation_key: 'p2',
      expected_versions: { 'lib.txt': contentVersion(fs.readFileSync(path.join(repoB, 'lib.txt'))) },
      patch: '*** Begin Patch\n*** Update File: lib.txt\n@@\n-beta one\n+beta two\n*** End Patch\n',
    });
    assert.equal(fs.readFileSync(path.join(rootA, 'src/app.ts'), 'utf8'), 'export const a = 2;\n');
    assert.equal(fs.readFileSync(path.join(rootB, 'lib.txt'), 'utf8'), 'beta two\n');
    const found = await ok(a, 'search', { workspace_id: 'alpha', query: 'a = 2', work_id: workId });
    assert.deepEqual((found.matches as { path: string }[]).map((m) => m.path), ['src/app.ts']);
    assert.deepEqual((await ok(a, 'search', { workspace_id: 'alpha', query: 'a = 2' })).matches, []);

    // A command in the work runs in the worktree (cwd relative to it).
    const p = await ok(a, 'exec_command', { workspace_id: 'alpha', work_id: workId, command: ['sh', '-c', 'pwd; cat src/app.ts; echo made > by-command.txt'], cwd: '' });
    for (let i = 0; i < 400 && (await ok(a, 'process_status', { process_id: p.process_id })).state !== 'exited'; i++) await new Promise((r) => setTimeout(r, 50));
    const out = await ok(a, 'read_process', { process_id: p.process_id, cursor: 0 });
    assert.match(String(out.chunk), new RegExp(rootA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.match(String(out.chunk), /a = 2/);
    assert.ok(fs.existsSync(path.join(rootA, 'by-command.txt')));

    // Confinement holds in the worktree: no way out of it by path.
    await fails(a, 'read', { workspace_id: 'alpha', path: '../alpha/README.md', work_id: workId }, 'PATH_OUTSIDE_WORKSPACE');
    fs.symlinkSync(path.join(repoA, 'README.md'), path.join(rootA, 'link.md'));
    await fails(a, 'read', { workspace_id: 'alpha', path: 'link.md', work_id: workId }, 'PATH_OUTSIDE_WORKSPACE');

    // A folder outside git has no worktree in the work: a clear refusal, nothing written there.
    await fails(a, 'read', { workspace_id: 'plain', path: 'notes.txt', work_id: workId }, 'INVALID_ARGUMENTS', 'no_worktree');

    assert.deepEqual([snapshot(repoA), snapshot(repoB)], before, 'the developer\'s folders are untouched');
  });

  it('keeps occupancy per work: a long command in one work does not make a patch in another WORKSPACE_BUSY', async () => {
    const a = await assemble();
    const one = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Serve', isolation: 'worktree' })).work_id);
    const two = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Edit', isolation: 'worktree' })).work_id);
    const shared = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'In the folder' })).work_id);
    const long = await ok(a, 'exec_command', { workspace_id: 'alpha', work_id: one, command: ['sleep', '60'] });
    const readme = contentVersion(fs.readFileSync(path.join(repoA, 'README.md')));
    const patch = (text: string): string => `*** Begin Patch\n*** Update File: README.md\n@@\n-alpha\n+${text}\n*** End Patch\n`;
    // The same work: busy, as always.
    const busy = await fails(a, 'apply_patch', { workspace_id: 'alpha', work_id: one, operation_key: 'k1', expected_versions: { 'README.md': readme }, patch: patch('one') }, 'WORKSPACE_BUSY');
    assert.equal((busy?.details as { process_id?: string }).process_id, long.process_id);
    // Another work, the folder itself (no work_id) and a shared work: free.
    await ok(a, 'apply_patch', { workspace_id: 'alpha', work_id: two, operation_key: 'k2', expected_versions: { 'README.md': readme }, patch: patch('two') });
    await ok(a, 'apply_patch', { workspace_id: 'alpha', work_id: shared, operation_key: 'k3', expected_versions: { 'README.md': readme }, patch: patch('main') });
    assert.equal(fs.readFileSync(path.join(a.steering.rootFor(two, 'alpha') as string, 'README.md'), 'utf8'), 'two\n');
    assert.equal(fs.readFileSync(path.join(repoA, 'README.md'), 'utf8'), 'main\n');
    assert.equal(fs.readFileSync(path.join(a.steering.rootFor(one, 'alpha') as string, 'README.md'), 'utf8'), 'alpha\n');
    // A long command in the folder does not block the works either, and the folder stays busy for itself.
    await ok(a, 'exec_command', { workspace_id: 'beta', command: ['sleep', '60'] });
    await ok(a, 'exec_command', { workspace_id: 'beta', work_id: two, command: ['true'] });
    await fails(a, 'exec_command', { workspace_id: 'beta', command: ['true'] }, 'WORKSPACE_BUSY');
  });

  it('bounds the number of works with worktrees, and checks isolation, base and the folder', async () => {
    maxWorktrees = 2;
    const a = await assemble();
    await ok(a, 'work_open', { workspace_id: 'alpha', title: 'one', isolation: 'worktree' });
    const second = String((await ok(a, 'work_open', { workspace_id: 'beta', title: 'two', isolation: 'worktree' })).work_id);
    const over = await fails(a, 'work_open', { workspace_id: 'alpha', title: 'three', isolation: 'worktree' }, 'UNAVAILABLE', 'worktree_limit');
    assert.equal(over?.details?.max, 2);
    // Racing opens do not pass the bound together.
    await ok(a, 'work_finish', { work_id: second });
    const raced = await Promise.all([1, 2, 3].map((n) => call(a, 'work_open', { workspace_id: 'alpha', title: `race ${n}`, isolation: 'worktree' })));
    assert.equal(raced.filter((r) => r.kind === 'result').length, 1);
    assert.equal(raced.filter((r) => r.body?.details?.reason === 'worktree_limit').length, 2);
    maxWorktrees = 8;
    await fails(a, 'work_open', { workspace_id: 'plain', title: 'no git', isolation: 'worktree' }, 'INVALID_ARGUMENTS', 'not_git');
    await fails(a, 'work_open', { workspace_id: 'alpha', title: 'bad base', isolation: 'worktree', base: 'no-such-branch' }, 'INVALID_ARGUMENTS', 'unknown_base');
    await fails(a, 'work_open', { workspace_id: 'alpha', title: 'option', isolation: 'worktree', base: '--upload-pack=x' }, 'INVALID_ARGUMENTS');
    await fails(a, 'work_open', { workspace_id: 'alpha', title: 'base alone', base: 'main' }, 'INVALID_ARGUMENTS');
    // A refused open leaves no worktree or branch behind.
    assert.equal(git(repoA, 'branch', '--list', 'codespace/bad-base-*').trim(), '');
    assert.equal(git(repoB, 'branch', '--list', 'codespace/bad-base-*').trim(), '');
    // From a named base.
    git(repoA, 'checkout', '-q', '-b', 'feature');
    fs.writeFileSync(path.join(repoA, 'feature.txt'), 'f\n');
    git(repoA, 'add', '-A');
    git(repoA, 'commit', '-q', '-m', 'feature');
    git(repoB, 'branch', 'feature');
    git(repoA, 'checkout', '-q', 'main');
    const based = await ok(a, 'work_open', { workspace_id: 'alpha', title: 'from feature', isolation: 'worktree', base: 'feature' });
    assert.equal(a.steering.work(String(based.work_id))?.worktrees?.[0]?.base, git(repoA, 'rev-parse', 'feature').trim());
    assert.ok(fs.existsSync(path.join(a.steering.rootFor(String(based.work_id), 'alpha') as string, 'feature.txt')));
  });

  it('keeps a work\'s worktrees across a reload', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Survive', isolation: 'worktree' })).work_id);
    const root = a.steering.rootFor(workId, 'beta') as string;
    fs.writeFileSync(path.join(root, 'lib.txt'), 'changed in the work\n');
    await a.shutdown();
    assembled = undefined;
    const b = await assemble();
    assert.equal(b.steering.work(workId)?.worktrees?.length, 2);
    assert.equal((await ok(b, 'read', { workspace_id: 'beta', path: 'lib.txt', work_id: workId })).content, 'changed in the work\n');
    assert.equal((await ok(b, 'read', { workspace_id: 'beta', path: 'lib.txt' })).content, 'beta one\n');
  });

  type Retired = { workspace_id: string; removed: boolean; reason?: string; detail?: string };
  function branchesOf(repo: string): string {
    return git(repo, 'branch', '--list', 'codespace/*').trim();
  }
  function worktreesOf(repo: string): number {
    return git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length;
  }
  async function finish(a: AssembledServices, workId: string): Promise<Retired[]> {
    const out = await ok(a, 'work_finish', { work_id: workId });
    assert.equal(out.closed, true);
    return out.worktrees as Retired[];
  }

  it('work_finish removes a clean work\'s worktrees and branches, and a repeat answers the same', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Clean', isolation: 'worktree' })).work_id);
    const trees = a.steering.work(workId)?.worktrees ?? [];
    // A hook that would write a file if it ran: it does not.
    fs.writeFileSync(path.join(repoA, '.git', 'hooks', 'reference-transaction'), `#!/bin/sh\necho ran > ${JSON.stringify(path.join(dir, 'hook-ran'))}\n`, { mode: 0o755 });
    // An ignored file (build output) goes with the worktree.
    fs.writeFileSync(path.join(repoA, '.git', 'info', 'exclude'), 'build/\n');
    fs.mkdirSync(path.join(trees[0]?.top ?? '', 'build'));
    fs.writeFileSync(path.join(trees[0]?.top ?? '', 'build', 'out.js'), 'x\n');
    const first = await finish(a, workId);
    assert.deepEqual(first, [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    for (const t of trees) assert.ok(!fs.existsSync(t.top), t.top);
    assert.equal(branchesOf(repoA), '');
    assert.equal(branchesOf(repoB), '');
    assert.equal(worktreesOf(repoA), 1);
    assert.equal(worktreesOf(repoB), 1);
    assert.ok(!fs.existsSync(path.join(dir, 'hook-ran')), 'hooks do not run');
    assert.deepEqual(fs.readdirSync(path.join(storage, 'worktrees')), [], 'no folder of the work is left under the state folder');
    assert.ok((a.steering.work(workId)?.worktrees ?? []).every((t) => t.removed_at !== undefined));
    assert.deepEqual(await finish(a, workId), first, 'a repeat is stable');
    await fails(a, 'read', { workspace_id: 'alpha', path: 'README.md', work_id: workId }, 'INVALID_ARGUMENTS', 'worktree_removed');
    // And after a reload.
    await a.shutdown();
    assembled = undefined;
    const b = await assemble();
    assert.deepEqual(await finish(b, workId), first);
  });

  it('work_finish keeps a worktree with uncommitted changes or untracked files, says why, and removes it once clean', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Dirty', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    fs.writeFileSync(path.join(rootA, 'README.md'), 'changed, not committed\n');
    fs.writeFileSync(path.join(rootB, 'new.txt'), 'untracked\n');
    const kept = await finish(a, workId);
    assert.deepEqual(kept.map((t) => [t.workspace_id, t.removed, t.reason]), [['alpha', false, 'uncommitted'], ['beta', false, 'uncommitted']]);
    assert.match(String(kept[0]?.detail), /1 changed or untracked file/);
    assert.equal(fs.readFileSync(path.join(rootA, 'README.md'), 'utf8'), 'changed, not committed\n', 'nothing is lost');
    assert.equal(fs.readFileSync(path.join(rootB, 'new.txt'), 'utf8'), 'untracked\n');
    assert.notEqual(branchesOf(repoA), '');
    assert.deepEqual(await finish(a, workId), kept, 'a repeat is stable');
    // Once the changes are gone (here: undone), the next work_finish removes them.
    git(rootA, 'checkout', '--', 'README.md');
    fs.rmSync(path.join(rootB, 'new.txt'));
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    assert.equal(branchesOf(repoA), '');
    assert.ok(!fs.existsSync(rootA) && !fs.existsSync(rootB));
  });

  it('work_finish keeps a branch with commits that are neither merged nor pushed, and removes it once merged', async () => {
    maxWorktrees = 1;
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Unmerged', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const branch = String(a.steering.work(workId)?.worktrees?.[0]?.branch);
    fs.writeFileSync(path.join(rootA, 'README.md'), 'committed in the work\n');
    git(rootA, 'commit', '-q', '-am', 'work commit');
    const commit = git(rootA, 'rev-parse', 'HEAD').trim();
    const kept = await finish(a, workId);
    assert.deepEqual(kept.map((t) => [t.workspace_id, t.removed, t.reason]), [['alpha', false, 'unmerged'], ['beta', true, undefined]]);
    assert.match(String(kept[0]?.detail), /1 commit/);
    assert.equal(git(repoA, 'rev-parse', branch).trim(), commit, 'the branch and its commit stay');
    assert.ok(fs.existsSync(rootA));
    assert.equal(branchesOf(repoB), '', 'the clean repository is cleaned');
    assert.deepEqual(await finish(a, workId), kept, 'a repeat is stable');
    // A finished work that kept a worktree still counts against the bound.
    await fails(a, 'work_open', { workspace_id: 'alpha', title: 'Another', isolation: 'worktree' }, 'UNAVAILABLE', 'worktree_limit');
    // Merged into the base branch: removed.
    git(repoA, 'merge', '-q', '--ff-only', branch);
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    assert.equal(branchesOf(repoA), '');
    assert.equal(git(repoA, 'rev-parse', 'main').trim(), commit);
    await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Another', isolation: 'worktree' });
  });

  it('work_finish removes a branch pushed to a remote (a local bare repository), which keeps it', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'beta', title: 'Pushed', isolation: 'worktree' })).work_id);
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    const branch = String(a.steering.work(workId)?.worktrees?.[0]?.branch);
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'beta pushed\n');
    git(rootB, 'commit', '-q', '-am', 'pushed commit');
    const commit = git(rootB, 'rev-parse', 'HEAD').trim();
    const bare = path.join(dir, 'remote.git');
    git(dir, 'init', '-q', '--bare', bare);
    git(repoB, 'remote', 'add', 'origin', bare);
    // Not pushed yet: kept.
    assert.deepEqual((await finish(a, workId)).map((t) => [t.workspace_id, t.removed, t.reason]), [['alpha', true, undefined], ['beta', false, 'unmerged']]);
    git(rootB, 'push', '-q', '-u', 'origin', branch);
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    assert.equal(branchesOf(repoB), '');
    assert.ok(!fs.existsSync(rootB));
    assert.equal(git(bare, 'rev-parse', branch).trim(), commit, 'the remote keeps the commit');
    // The upstream the push set is gone with the branch (git config answers 1: no such key).
    assert.equal(spawnSync('git', ['config', '--get-regexp', '^branch\\.codespace/'], { cwd: repoB, env: GIT_ENV }).status, 1);
  });

  it('work_finish handles a worktree folder deleted by hand: prunes it, and still keeps a branch with commits not merged', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Deleted', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    const branch = String(a.steering.work(workId)?.worktrees?.[0]?.branch);
    fs.writeFileSync(path.join(rootA, 'README.md'), 'committed, then the folder is deleted\n');
    git(rootA, 'commit', '-q', '-am', 'before the delete');
    fs.rmSync(rootA, { recursive: true, force: true });
    fs.rmSync(rootB, { recursive: true, force: true });
    const out = await finish(a, workId);
    assert.deepEqual(out.map((t) => [t.workspace_id, t.removed, t.reason]), [['alpha', false, 'unmerged'], ['beta', true, undefined]]);
    assert.notEqual(branchesOf(repoA), '', 'the commit stays on its branch');
    assert.equal(worktreesOf(repoA), 1, 'the stale entry is pruned');
    assert.equal(branchesOf(repoB), '');
    git(repoA, 'merge', '-q', '--ff-only', branch);
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    assert.equal(branchesOf(repoA), '');
  });

  it('work_finish keeps a commit made on a detached HEAD in the worktree', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'beta', title: 'Detached', isolation: 'worktree' })).work_id);
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    git(rootB, 'checkout', '-q', '--detach');
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'on a detached head\n');
    git(rootB, 'commit', '-q', '-am', 'detached commit');
    const out = await finish(a, workId);
    assert.deepEqual(out.find((t) => t.workspace_id === 'beta')?.reason, 'unmerged');
    assert.ok(fs.existsSync(rootB));
  });

  it('discard drops uncommitted and untracked files, removes the worktrees and clean branches, and finishes the work', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Discard dirty', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    fs.writeFileSync(path.join(rootA, 'README.md'), 'changed, not committed\n');
    fs.writeFileSync(path.join(rootA, 'new.txt'), 'untracked\n');
    fs.writeFileSync(path.join(rootB, 'other.txt'), 'untracked\n');
    const draft = await a.steering.createDraft(workId, 'queued, never claimed', { queue: true });
    const survey = await a.steering.surveyDiscard(workId);
    assert.deepEqual(survey.map((s) => [s.workspace_id, s.present, s.changed, s.untracked, s.unsaved]), [['alpha', true, 1, 1, 0], ['beta', true, 0, 1, 0]]);
    const before = [snapshot(repoA), snapshot(repoB)];
    const out = await a.steering.discardWork(workId);
    assert.deepEqual(out.worktrees.map((t) => [t.workspace_id, t.removed, t.removed && t.branch_deleted]), [['alpha', true, true], ['beta', true, true]]);
    assert.ok(!fs.existsSync(rootA) && !fs.existsSync(rootB));
    assert.deepEqual(fs.readdirSync(path.join(storage, 'worktrees')), [], 'no folder of the work is left under the state folder');
    assert.equal(branchesOf(repoA), '');
    assert.equal(branchesOf(repoB), '');
    assert.equal(worktreesOf(repoA), 1);
    assert.deepEqual([snapshot(repoA), snapshot(repoB)], before, 'the folders themselves are untouched');
    assert.equal(a.steering.work(workId)?.status, 'finished');
    assert.equal(a.steering.work(workId)?.discarded_at, a.steering.work(workId)?.finished_at, 'marked discarded, not finished by its agent');
    assert.equal(a.steering.instruction(draft.id)?.status, 'draft', 'a queued instruction no agent saw goes back to a draft');
    // What the agent sees afterwards: the work is finished, its worktrees removed.
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
    await fails(a, 'read', { workspace_id: 'alpha', path: 'README.md', work_id: workId }, 'INVALID_ARGUMENTS', 'worktree_removed');
    await assert.rejects(a.steering.discardWork(workId), (e: { details?: { reason?: string } }) => e.details?.reason === 'no_worktree');
  });

  it('discard keeps a branch with unpushed commits (and says how many), deletes a pushed one, and never loses a commit', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Discard commits', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    const branch = String(a.steering.work(workId)?.worktrees?.[0]?.branch);
    fs.writeFileSync(path.join(rootA, 'README.md'), 'one\n');
    git(rootA, 'commit', '-q', '-am', 'one');
    fs.writeFileSync(path.join(rootA, 'README.md'), 'two\n');
    git(rootA, 'commit', '-q', '-am', 'two');
    const tipA = git(rootA, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(rootA, 'README.md'), 'dropped\n');
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'pushed\n');
    git(rootB, 'commit', '-q', '-am', 'pushed');
    const bare = path.join(dir, 'remote.git');
    git(dir, 'init', '-q', '--bare', bare);
    git(repoB, 'remote', 'add', 'origin', bare);
    git(rootB, 'push', '-q', 'origin', branch);
    assert.deepEqual((await a.steering.surveyDiscard(workId)).map((s) => [s.workspace_id, s.changed, s.unsaved]), [['alpha', 1, 2], ['beta', 0, 0]]);
    const out = await a.steering.discardWork(workId);
    assert.deepEqual(out.worktrees, [
      { workspace_id: 'alpha', removed: true, branch, branch_deleted: false, kept_commits: 2 },
      { workspace_id: 'beta', removed: true, branch, branch_deleted: true },
    ]);
    assert.ok(!fs.existsSync(rootA) && !fs.existsSync(rootB));
    assert.equal(git(repoA, 'rev-parse', branch).trim(), tipA, 'the branch keeps its commits');
    assert.equal(worktreesOf(repoA), 1);
    assert.equal(branchesOf(repoB), '');
    // The kept branch no longer holds a worktree: the work does not count against the bound.
    assert.deepEqual(await finish(a, workId), [{ workspace_id: 'alpha', removed: true }, { workspace_id: 'beta', removed: true }]);
  });

  it('discard handles a worktree folder deleted by hand, keeps a detached HEAD with commits, and refuses while an instruction is claimed', async () => {
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Discard gone', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    git(rootB, 'checkout', '-q', '--detach');
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'on a detached head\n');
    git(rootB, 'commit', '-q', '-am', 'detached commit');
    fs.rmSync(rootA, { recursive: true, force: true });
    const ins = await a.steering.createDraft(workId, 'do it', { queue: true });
    await a.steering.claimNext(workId, 'S1');
    await assert.rejects(a.steering.discardWork(workId), (e: { details?: { reason?: string } }) => e.details?.reason === 'instruction_claimed');
    assert.equal(a.steering.work(workId)?.status, 'open', 'nothing changed');
    await a.steering.requeue(ins.id);
    const survey = await a.steering.surveyDiscard(workId);
    assert.deepEqual(survey.map((s) => [s.workspace_id, s.present, s.unsaved]), [['alpha', false, 0], ['beta', true, 1]]);
    const out = await a.steering.discardWork(workId);
    assert.deepEqual(out.worktrees.map((t) => [t.workspace_id, t.removed, t.removed ? t.branch_deleted : t.reason]), [['alpha', true, true], ['beta', false, 'unmerged']]);
    assert.equal(worktreesOf(repoA), 1, 'the stale entry is pruned');
    assert.equal(branchesOf(repoA), '');
    assert.ok(fs.existsSync(rootB), 'the detached commit stays in its worktree');
    assert.ok(a.steering.work(workId)?.discarded_at !== undefined);
    assert.match(git(rootB, 'log', '-1', '--format=%s'), /detached commit/);
  });

  it('bounds the disk size of the worktrees held: refuses before creating anything, with the sizes, and counts a discard as freed', async () => {
    git(repoA, 'tag', 'small');
    git(repoB, 'tag', 'small');
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    fs.writeFileSync(path.join(repoA, 'big.bin'), big);
    git(repoA, 'add', 'big.bin');
    git(repoA, 'commit', '-q', '-m', 'big');
    maxDiskMiB = 5;
    const a = await assemble();
    const first = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Big one', isolation: 'worktree' })).work_id);
    const body = await fails(a, 'work_open', { workspace_id: 'alpha', title: 'Big two', isolation: 'worktree' }, 'UNAVAILABLE', 'worktree_disk_limit');
    const d = body?.details as { max_mib: number; used_mib: number; needed_mib: number };
    assert.equal(d.max_mib, 5);
    assert.ok(d.used_mib >= 3 && d.used_mib <= 3.1, `used ${d.used_mib}`);
    assert.ok(d.needed_mib >= 3 && d.needed_mib <= 3.1, `needed ${d.needed_mib}`);
    assert.match(String(body?.message), /codespace\.works\.maxWorktreeDiskMiB/);
    assert.equal(git(repoA, 'branch', '--list', 'codespace/big-two-*').trim(), '', 'no branch is left');
    assert.equal(worktreesOf(repoA), 2, 'no worktree is made');
    // A bad base is still named as such under the bound.
    await fails(a, 'work_open', { workspace_id: 'alpha', title: 'Bad', isolation: 'worktree', base: 'no-such-ref' }, 'INVALID_ARGUMENTS', 'unknown_base');
    // A base without the big file needs less: it fits.
    await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Small base', isolation: 'worktree', base: 'small' });
    // Discarded, the first work's files no longer count.
    await a.steering.discardWork(first);
    await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Big two', isolation: 'worktree' });
    // 0: no bound.
    maxDiskMiB = 0;
    await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Big three', isolation: 'worktree' });
  });

  it('measures worktrees without following links and counts a hard-linked file once; a checkout by its blob sizes', async () => {
    const holder = path.join(dir, 'held');
    const trees = new GitWorktreeFactory({ dir: holder });
    assert.equal(await trees.usage(), 0, 'nothing held yet');
    fs.mkdirSync(path.join(holder, 'w1', 'repo', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(holder, 'w1', 'repo', 'a.txt'), Buffer.alloc(1000));
    fs.writeFileSync(path.join(holder, 'w1', 'repo', 'sub', 'b.txt'), Buffer.alloc(500));
    fs.linkSync(path.join(holder, 'w1', 'repo', 'a.txt'), path.join(holder, 'w1', 'repo', 'sub', 'a-link.txt'));
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'huge.bin'), Buffer.alloc(2 * 1024 * 1024));
    const linkFile = path.join(holder, 'w1', 'repo', 'to-huge');
    const linkDir = path.join(holder, 'w1', 'repo', 'to-outside');
    fs.symlinkSync(path.join(outside, 'huge.bin'), linkFile);
    fs.symlinkSync(outside, linkDir);
    const links = fs.lstatSync(linkFile).size + fs.lstatSync(linkDir).size;
    assert.equal(await trees.usage(), 1000 + 500 + links);
    const sizes = git(repoA, 'ls-tree', '-r', '-l', 'HEAD').split('\n').filter((l) => l !== '').reduce((n, l) => n + Number(l.split(/\s+/)[3]), 0);
    assert.equal(sizes, 'export const a = 1;\n'.length + 'alpha\n'.length);
    assert.equal(await trees.checkoutBytes([{ id: 'alpha', root: repoA }, { id: 'alpha-src', root: path.join(repoA, 'src') }, { id: 'plain', root: plain }], {}), sizes, 'one repository counted once; a folder outside git adds nothing');
  });

  it('a shared work still acts in the folder itself, and only in its own workspace', async () => {
    const a = await assemble();
    const w = await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Shared' });
    assert.equal(w.branch, undefined);
    assert.equal(a.steering.work(String(w.work_id))?.worktrees, undefined);
    assert.equal((await ok(a, 'read', { workspace_id: 'alpha', path: 'README.md', work_id: w.work_id })).content, 'alpha\n');
    await fails(a, 'read', { workspace_id: 'beta', path: 'lib.txt', work_id: w.work_id }, 'INVALID_ARGUMENTS');
    await fails(a, 'read', { workspace_id: 'alpha', path: 'README.md', work_id: 'work_nope' }, 'WORK_NOT_FOUND');
  });

  it('mounts the work\'s worktree in the sandbox with the same protections: its .git file, the admin folder and the main folder stay read-only', async function () {
    if (process.platform !== 'linux' || spawnSync('bwrap', ['--unshare-user', '--ro-bind', '/', '/', 'true']).status !== 0) {
      // The sandbox is Linux-only; its own suite reports when bubblewrap cannot run here.
      this.skip();
    }
    sandboxed = true;
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'alpha', title: 'Contained', isolation: 'worktree' })).work_id);
    const root = a.steering.rootFor(workId, 'alpha') as string;
    const admin = path.resolve(root, git(root, 'rev-parse', '--git-dir').trim());
    assert.ok(admin.startsWith(path.join(repoA, '.git', 'worktrees')), admin);
    const gitFile = fs.readFileSync(path.join(root, '.git'), 'utf8');
    const adminHead = fs.readFileSync(path.join(admin, 'HEAD'), 'utf8');
    const before = snapshot(repoA);
    const script = [
      'echo edited > README.md && echo ok-edit',
      `echo 'gitdir: ../elsewhere' > .git || echo refused-gitfile`,
      `echo 'ref: refs/heads/main' > ${JSON.stringify(path.join(admin, 'HEAD'))} || echo refused-admin`,
      `echo hooked > ${JSON.stringify(path.join(admin, 'config.worktree'))} || echo refused-admin-config`,
      `echo x > ${JSON.stringify(path.join(repoA, 'README.md'))} || echo refused-main`,
      `mkdir ${JSON.stringify(path.join(repoA, '.git', 'hooks', 'x'))} || echo refused-main-git`,
    ].join('; ');
    const p = await ok(a, 'exec_command', { workspace_id: 'alpha', work_id: workId, command: ['sh', '-c', script] });
    for (let i = 0; i < 400 && (await ok(a, 'process_status', { process_id: p.process_id })).state !== 'exited'; i++) await new Promise((r) => setTimeout(r, 50));
    const out = String((await ok(a, 'read_process', { process_id: p.process_id, cursor: 0 })).chunk);
    for (const word of ['ok-edit', 'refused-gitfile', 'refused-admin', 'refused-admin-config', 'refused-main', 'refused-main-git']) assert.match(out, new RegExp(word), out);
    assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), 'edited\n');
    assert.equal(fs.readFileSync(path.join(root, '.git'), 'utf8'), gitFile);
    assert.equal(fs.readFileSync(path.join(admin, 'HEAD'), 'utf8'), adminHead);
    assert.ok(!fs.existsSync(path.join(admin, 'config.worktree')));
    assert.equal(snapshot(repoA), before);
  });

  it('settles a patch a crash cut off in a work\'s worktree by the worktree\'s files, not the folder\'s', async () => {
    const first = await assemble();
    const workId = String((await ok(first, 'work_open', { workspace_id: 'beta', title: 'Crash', isolation: 'worktree' })).work_id);
    const root = first.steering.rootFor(workId, 'beta') as string;
    await first.steering.flush();
    // The patch is written, then the host "dies" before the ledger records it finished.
    hangBeforeFinish = true;
    const patched = new Promise<void>((resolve) => {
      const probe = setInterval(() => {
        if (fs.readFileSync(path.join(root, 'lib.txt'), 'utf8') === 'beta crashed\n') {
          clearInterval(probe);
          resolve();
        }
      }, 20);
    });
    const pending = (await assemble()).dispatcher.call('apply_patch', {
      workspace_id: 'beta',
      work_id: workId,
      operation_key: 'cut-off',
      expected_versions: { 'lib.txt': contentVersion(fs.readFileSync(path.join(repoB, 'lib.txt'))) },
      patch: '*** Begin Patch\n*** Update File: lib.txt\n@@\n-beta one\n+beta crashed\n*** End Patch\n',
    }, new AbortController().signal);
    void pending;
    await patched;
    hangBeforeFinish = false;
    const after = await assemble();
    const status = await ok(after, 'operation_status', { operation_key: 'cut-off' });
    assert.equal(status.status, 'applied', JSON.stringify(status));
    assert.equal(fs.readFileSync(path.join(repoB, 'lib.txt'), 'utf8'), 'beta one\n');
    await first.shutdown();
  });

  it('binds a held patch of a worktree work to the worktree\'s files: the folder changing leaves it pending, the worktree changing makes it stale', async () => {
    confirmPatches = true;
    const a = await assemble();
    const workId = String((await ok(a, 'work_open', { workspace_id: 'beta', title: 'Held', isolation: 'worktree' })).work_id);
    const root = a.steering.rootFor(workId, 'beta') as string;
    const held = await fails(a, 'apply_patch', {
      workspace_id: 'beta',
      work_id: workId,
      operation_key: 'held',
      expected_versions: { 'lib.txt': contentVersion(fs.readFileSync(path.join(root, 'lib.txt'))) },
      patch: '*** Begin Patch\n*** Update File: lib.txt\n@@\n-beta one\n+beta held\n*** End Patch\n',
    }, 'APPROVAL_REQUIRED');
    const id = String(held?.details?.approval_id);
    fs.writeFileSync(path.join(repoB, 'lib.txt'), 'the developer edits the folder\n');
    await a.approvals.revalidate(id);
    assert.equal(a.approvals.stored(id).state, 'pending', 'the folder is not what the hold binds');
    fs.writeFileSync(path.join(root, 'lib.txt'), 'changed in the worktree\n');
    await a.approvals.revalidate(id);
    assert.equal(a.approvals.stored(id).state, 'stale');
  });
});
