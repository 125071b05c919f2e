/**
 * Freeze, bound review and reviewed commit of a work, on two disposable repositories served as a two-folder window
 * through the real assembly (tools called through the dispatcher as two MCP sessions): the checkpoint digest is
 * stable and changes with HEAD, the index, content, modes, deletions and untracked files; a frozen work refuses
 * apply_patch and exec_command until it is reopened; a review is refused when stale and when the reviewing session
 * edited the work; the reviewed commit commits exactly the reviewed content in each changed repository, hooks off,
 * once.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CheckpointEntry } from '../../src/features/works/common/workCheckpoint';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { contentVersion } from '../../src/features/patches/common/version';
import { REVIEW_TRAILER, canonicalListing, repoDigest, workDigest } from '../../src/features/works/common/freeze';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { GitWorktreeFactory } from '../../src/features/works/node/gitWorktreeFactory';
import { FreezeGit } from '../../src/features/works/node/freezeGit';
import { git, makeRepo } from './helpers/gitRepo';

type Outcome = { kind: string; value?: Record<string, unknown>; body?: { code: string; message: string; details?: Record<string, unknown> } };

describe('work checkpoints: the canonical listing and its digest', () => {
  const entries: CheckpointEntry[] = [
    { kind: 'head', commit: 'a'.repeat(40), branch: 'main' },
    { kind: 'index', path: 'b.txt', mode: '100644', blob: 'b'.repeat(40), stage: 0 },
    { kind: 'file', path: 'b.txt', mode: '100644', blob: 'b'.repeat(40), sha256: 'c'.repeat(64), untracked: false },
    { kind: 'file', path: 'a "quoted"\nname', mode: '100755', blob: 'd'.repeat(40), sha256: 'e'.repeat(64), untracked: true },
    { kind: 'deleted', path: 'gone.txt' },
  ];

  it('does not depend on the order entries come in, and names cannot forge a line', () => {
    assert.equal(repoDigest(entries), repoDigest([...entries].reverse()));
    assert.match(repoDigest(entries), /^sha256:[0-9a-f]{64}$/);
    const listing = canonicalListing(entries);
    assert.equal(listing.split('\n').length, entries.length + 1, 'one line per entry (a newline in a name is escaped)');
    assert.ok(listing.startsWith('head '));
    assert.equal(workDigest([{ workspace_ids: ['b', 'a'], digest: 'x' }, { workspace_ids: ['c'], digest: 'y' }]), workDigest([{ workspace_ids: ['c'], digest: 'y' }, { workspace_ids: ['a', 'b'], digest: 'x' }]));
  });

  it('changes with any entry', () => {
    const base = repoDigest(entries);
    const variants: CheckpointEntry[][] = [
      entries.map((e) => (e.kind === 'head' ? { ...e, commit: 'f'.repeat(40) } : e)),
      entries.map((e) => (e.kind === 'index' ? { ...e, blob: 'f'.repeat(40) } : e)),
      entries.map((e) => (e.kind === 'file' && !e.untracked ? { ...e, mode: '100755' } : e)),
      entries.map((e) => (e.kind === 'file' && e.untracked ? { ...e, untracked: false } : e)),
      entries.filter((e) => e.kind !== 'deleted'),
    ];
    for (const v of variants) assert.notEqual(repoDigest(v), base);
  });
});

describe('work checkpoints of a real repository (FreezeGit)', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  const checkpoints = new FreezeGit();
  const digest = async (): Promise<string> => (await checkpoints.capture([{ workspace_ids: ['r'], root: repo }]))[0]?.digest as string;

  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-freezegit-')));
    repo = makeRepo(path.join(dir, 'r'), { 'a.txt': 'one\n', 'sub/b.sh': 'echo b\n', '.gitignore': 'build/\n' });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is stable, ignores ignored files, and sees content, mode, deletion, untracked files, the index and HEAD', async () => {
    const d0 = await digest();
    assert.equal(await digest(), d0, 'stable');
    fs.mkdirSync(path.join(repo, 'build'));
    fs.writeFileSync(path.join(repo, 'build/out.js'), 'ignored\n');
    assert.equal(await digest(), d0, 'ignored files are not part of it');
    const seen = new Set([d0]);
    const step = async (what: string, change: () => void): Promise<void> => {
      change();
      const d = await digest();
      assert.ok(!seen.has(d), `${what} changes the digest`);
      seen.add(d);
    };
    await step('content', () => fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n'));
    await step('mode', () => fs.chmodSync(path.join(repo, 'sub/b.sh'), 0o755));
    await step('an untracked file', () => fs.writeFileSync(path.join(repo, 'new.txt'), 'new\n'));
    await step('staging', () => git(repo, 'add', 'a.txt'));
    await step('a deletion', () => fs.rmSync(path.join(repo, 'sub/b.sh')));
    await step('HEAD', () => git(repo, 'commit', '-q', '-m', 'more'));
    const [cp] = await checkpoints.capture([{ workspace_ids: ['r'], root: path.join(repo, 'sub') }]);
    assert.equal(cp?.top, repo, 'any folder of the repository names it');
    assert.equal(cp?.changed, true, 'new.txt and the deletion are not committed');
  });

  it('with core.fileMode=false records the mode git would commit: an executable bit flipped on disk changes nothing, content does', async () => {
    git(repo, 'config', 'core.fileMode', 'false');
    const d0 = await digest();
    fs.chmodSync(path.join(repo, 'a.txt'), 0o755);
    fs.chmodSync(path.join(repo, 'sub/b.sh'), 0o755);
    assert.equal(await digest(), d0, 'git ignores the bits, so does the checkpoint');
    fs.writeFileSync(path.join(repo, 'new.sh'), 'echo new\n', { mode: 0o755 });
    const d1 = await digest();
    assert.notEqual(d1, d0, 'an untracked file counts');
    fs.chmodSync(path.join(repo, 'new.sh'), 0o644);
    assert.equal(await digest(), d1, 'an untracked file is recorded as git would add it (not executable)');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'changed\n');
    assert.notEqual(await digest(), d1, 'content still counts');
    // A mode staged in the index is the one recorded (and committed).
    const d2 = await digest();
    git(repo, 'update-index', '--chmod=+x', 'sub/b.sh');
    const [cp] = await checkpoints.capture([{ workspace_ids: ['r'], root: repo }]);
    assert.notEqual(cp?.digest, d2);
    const file = cp?.entries.find((e) => e.kind === 'file' && e.path === 'sub/b.sh');
    assert.equal(file?.kind === 'file' ? file.mode : undefined, '100755');
    // Committed as recorded: the staged executable bit, not HEAD's mode nor the disk's.
    await checkpoints.commit(cp as NonNullable<typeof cp>, 'as frozen');
    assert.match(git(repo, 'ls-tree', 'HEAD', 'sub/b.sh'), /^100755 /);
    assert.match(git(repo, 'ls-tree', 'HEAD', 'a.txt'), /^100644 /);
    assert.equal(git(repo, 'show', 'HEAD:a.txt'), 'changed\n');
  });

  it('compares a nested repository (untracked, with its own .git) by its own checkpoint: an edit inside it changes the digest', async () => {
    const nested = makeRepo(path.join(repo, 'vendor', 'lib'), { 'x.txt': 'x one\n' });
    const d0 = await digest();
    assert.equal(await digest(), d0, 'stable');
    fs.writeFileSync(path.join(nested, 'x.txt'), 'x edited\n');
    const d1 = await digest();
    assert.notEqual(d1, d0, 'an edit inside the nested repository');
    fs.writeFileSync(path.join(nested, 'y.txt'), 'new in nested\n');
    const d2 = await digest();
    assert.notEqual(d2, d1, 'a new file inside it');
    git(nested, 'add', '-A');
    git(nested, 'commit', '-q', '-m', 'nested commit');
    assert.notEqual(await digest(), d2, 'a commit inside it');
  });

  it('compares a submodule by its checkout: moved to another commit or made dirty changes the digest', async () => {
    const upstream = makeRepo(path.join(dir, 'upstream'), { 'm.txt': 'm one\n' });
    const first = git(upstream, 'rev-parse', 'HEAD').trim();
    fs.writeFileSync(path.join(upstream, 'm.txt'), 'm two\n');
    git(upstream, 'commit', '-q', '-am', 'two');
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', upstream, 'mod');
    git(repo, 'commit', '-q', '-m', 'submodule');
    const mod = path.join(repo, 'mod');
    const d0 = await digest();
    assert.equal(await digest(), d0, 'stable');
    fs.writeFileSync(path.join(mod, 'm.txt'), 'dirty\n');
    const d1 = await digest();
    assert.notEqual(d1, d0, 'a dirty submodule');
    git(mod, 'checkout', '-q', '--', 'm.txt');
    assert.equal(await digest(), d0, 'clean again: the same digest');
    git(mod, 'checkout', '-q', first);
    assert.notEqual(await digest(), d0, 'the submodule moved to another commit (not staged)');
  });
});

describe('work_review: freeze, bound review, reviewed commit (two git folders, real assembly)', function () {
  this.timeout(120_000);
  let dir: string;
  let storage: string;
  let repoA: string;
  let repoB: string;
  let a: AssembledServices;

  async function call(session: string, name: string, args: Record<string, unknown>): Promise<Outcome> {
    return (await a.dispatcher.call(name, args, new AbortController().signal, { session })) as Outcome;
  }
  async function ok(session: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await call(session, name, args);
    assert.equal(r.kind, 'result', `${name}: ${JSON.stringify(r.body)}`);
    return r.value as Record<string, unknown>;
  }
  async function fails(session: string, name: string, args: Record<string, unknown>, code: string, reason?: string): Promise<NonNullable<Outcome['body']>> {
    const r = await call(session, name, args);
    assert.equal(r.kind, 'error', `${name} should fail with ${code}: ${JSON.stringify(r.value)}`);
    assert.equal(r.body?.code, code, r.body?.message);
    if (reason !== undefined) assert.equal(r.body?.details?.reason, reason, r.body?.message);
    return r.body as NonNullable<Outcome['body']>;
  }
  const patch = (workId: string, ws: string, file: string, root: string, from: string, to: string, key: string): Promise<Record<string, unknown>> =>
    ok('author', 'apply_patch', {
      workspace_id: ws,
      work_id: workId,
      operation_key: key,
      expected_versions: { [file]: contentVersion(fs.readFileSync(path.join(root, file))) },
      patch: `*** Begin Patch\n*** Update File: ${file}\n@@\n-${from}\n+${to}\n*** End Patch\n`,
    });

  beforeEach(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-freeze-')));
    storage = path.join(dir, 'storage');
    fs.mkdirSync(storage);
    repoA = makeRepo(path.join(dir, 'alpha'), { 'src/app.ts': 'export const a = 1;\n' });
    repoB = makeRepo(path.join(dir, 'beta'), { 'lib.txt': 'beta one\n' });
    // A hook that would fail every commit: the reviewed commit must not run it.
    for (const r of [repoA, repoB]) {
      fs.writeFileSync(path.join(r, '.git/hooks/pre-commit'), '#!/bin/sh\necho hook ran >&2\nexit 1\n', { mode: 0o755 });
      fs.writeFileSync(path.join(r, '.git/hooks/commit-msg'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    }
    a = await assemble();
  });

  const assemble = (): Promise<AssembledServices> =>
    assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(
        new InMemoryWorkspaceSource([
          { root: repoA, name: 'alpha', preferredId: 'alpha', profile: 'exec' },
          { root: repoB, name: 'beta', preferredId: 'beta', profile: 'exec' },
        ]),
      ), storage, {
        worktrees: new GitWorktreeFactory({ dir: path.join(storage, 'worktrees') }),
      }),
    );

  afterEach(async () => {
    await a.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('freezes a worktree work, refuses its edits and commands until reopened, and binds reviews to the digest', async () => {
    const workId = String((await ok('author', 'work_open', { workspace_id: 'alpha', title: 'Bump a', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    await patch(workId, 'alpha', 'src/app.ts', rootA, 'export const a = 1;', 'export const a = 2;', 'p1');
    await patch(workId, 'beta', 'lib.txt', rootB, 'beta one', 'beta two', 'p2');

    // A session that only asked for a hold of an edit in the work is one of its authors too.
    await ok('helper', 'approval_create', { workspace_id: 'alpha', tool: 'apply_patch', request: { workspace_id: 'alpha', work_id: workId, operation_key: 'h1', expected_versions: {}, patch: '*** Begin Patch\n*** Add File: held.txt\n+h\n*** End Patch\n' } });
    await fails('reviewer', 'work_review', { work_id: workId, action: 'approve', digest: 'sha256:x' }, 'INVALID_ARGUMENTS', 'not_frozen');
    const frozen = await ok('author', 'work_review', { work_id: workId, action: 'freeze' });
    const digest = String(frozen.digest);
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest, digest, 'freezing again, unchanged: the same digest');
    assert.equal(a.steering.work(workId)?.frozen?.digest, digest);

    // Frozen: no patch, no command with the work's work_id (in either folder); reading still works.
    const refused = await fails('author', 'apply_patch', { workspace_id: 'beta', work_id: workId, operation_key: 'p3', expected_versions: {}, patch: '*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n' }, 'WORK_FROZEN', 'frozen');
    assert.equal(refused.details?.work_id, workId);
    await fails('author', 'exec_command', { workspace_id: 'alpha', work_id: workId, command: ['true'] }, 'WORK_FROZEN');
    assert.equal((await ok('author', 'read', { workspace_id: 'alpha', path: 'src/app.ts', work_id: workId })).content, 'export const a = 2;\n');
    assert.ok(!fs.existsSync(path.join(rootB, 'x.txt')));

    // Self-review refused: the session that edited (and opened) the work.
    await fails('author', 'work_review', { work_id: workId, action: 'approve', digest }, 'PERMISSION_DENIED', 'self_review');
    await fails('helper', 'work_review', { work_id: workId, action: 'approve', digest }, 'PERMISSION_DENIED', 'self_review');
    // A wrong digest, then a change on disk behind the freeze: stale.
    await fails('reviewer', 'work_review', { work_id: workId, action: 'approve', digest: `sha256:${'0'.repeat(64)}` }, 'REVIEW_STALE', 'digest_mismatch');
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'changed behind the freeze\n');
    const stale = await fails('reviewer', 'work_review', { work_id: workId, action: 'approve', digest }, 'REVIEW_STALE', 'changed_since_freeze');
    assert.deepEqual(stale.details?.changed, ['beta']);
    fs.writeFileSync(path.join(rootB, 'lib.txt'), 'beta two\n');

    // Not approved yet: no commit.
    await fails('reviewer', 'work_review', { work_id: workId, action: 'commit' }, 'PERMISSION_DENIED', 'not_reviewed');
    await ok('reviewer', 'work_review', { work_id: workId, action: 'reject', digest, findings: 'a should be 3' });
    await fails('reviewer', 'work_review', { work_id: workId, action: 'commit' }, 'PERMISSION_DENIED', 'not_approved');

    // Reopen: edits again; the review of the old digest no longer counts after a change.
    assert.equal((await ok('author', 'work_review', { work_id: workId, action: 'reopen' })).digest, undefined);
    await patch(workId, 'alpha', 'src/app.ts', rootA, 'export const a = 2;', 'export const a = 3;', 'p4');
    const d2 = String((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest);
    assert.notEqual(d2, digest);
    await fails('reviewer', 'work_review', { work_id: workId, action: 'commit' }, 'PERMISSION_DENIED', 'not_reviewed');
  });

  it('commits exactly the approved content in each changed repository, hooks off, once', async () => {
    const workId = String((await ok('author', 'work_open', { workspace_id: 'alpha', title: 'Two repos', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    await patch(workId, 'alpha', 'src/app.ts', rootA, 'export const a = 1;', 'export const a = 2;', 'p1');
    // Changes a command made count too: an untracked file and a deletion.
    fs.writeFileSync(path.join(rootB, 'added.txt'), 'added\n');
    fs.rmSync(path.join(rootB, 'lib.txt'));
    const digest = String((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest);
    await ok('reviewer', 'work_review', { work_id: workId, action: 'approve', digest, findings: 'looks right' });
    assert.equal(a.steering.work(workId)?.review?.approved, true);
    assert.equal(a.steering.work(workId)?.review?.by, 'session:reviewer');

    const headsBefore = [git(repoA, 'rev-parse', 'main').trim(), git(repoB, 'rev-parse', 'main').trim()];
    const out = await ok('reviewer', 'work_review', { work_id: workId, action: 'commit' });
    const commits = out.commits as { workspace_id: string; commit: string }[];
    assert.deepEqual(commits.map((c) => c.workspace_id).sort(), ['alpha', 'beta']);
    for (const c of commits) {
      const root = c.workspace_id === 'alpha' ? rootA : rootB;
      assert.equal(git(root, 'rev-parse', 'HEAD').trim(), c.commit);
      assert.equal(git(root, 'log', '-1', `--format=%(trailers:key=${REVIEW_TRAILER},valueonly)`).trim(), digest);
      assert.equal(git(root, 'log', '-1', '--format=%s').trim(), 'Two repos');
      assert.equal(git(root, 'status', '--porcelain').trim(), '', 'the worktree is clean: everything reviewed is committed');
    }
    assert.equal(git(rootA, 'show', 'HEAD:src/app.ts'), 'export const a = 2;\n');
    assert.equal(git(rootB, 'show', 'HEAD:added.txt'), 'added\n');
    assert.throws(() => git(rootB, 'cat-file', '-e', 'HEAD:lib.txt'), 'the deletion is committed');
    assert.deepEqual([git(repoA, 'rev-parse', 'main').trim(), git(repoB, 'rev-parse', 'main').trim()], headsBefore, 'the developer\'s branches did not move');
    assert.equal(a.steering.work(workId)?.committed?.digest, digest);

    // Again: the same commits, none new.
    const again = await ok('reviewer', 'work_review', { work_id: workId, action: 'commit' });
    assert.deepEqual(again.commits, commits);
    assert.equal(git(rootA, 'rev-list', '--count', 'HEAD').trim(), '2');
    assert.equal(git(rootB, 'rev-list', '--count', 'HEAD').trim(), '2');

    // Still frozen after the commit: no edit until reopened.
    await fails('author', 'apply_patch', { workspace_id: 'alpha', work_id: workId, operation_key: 'p9', expected_versions: {}, patch: '*** Begin Patch\n*** Add File: y.txt\n+y\n*** End Patch\n' }, 'WORK_FROZEN');
  });

  it('a repository committed before a failure half-way is not committed twice', async () => {
    const workId = String((await ok('author', 'work_open', { workspace_id: 'alpha', title: 'Half way', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    const rootB = a.steering.rootFor(workId, 'beta') as string;
    await patch(workId, 'alpha', 'src/app.ts', rootA, 'export const a = 1;', 'export const a = 2;', 'p1');
    await patch(workId, 'beta', 'lib.txt', rootB, 'beta one', 'beta two', 'p2');
    const digest = String((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest);
    await ok('reviewer', 'work_review', { work_id: workId, action: 'approve', digest });
    // beta's worktree has no committer identity left: its commit fails after alpha's succeeded.
    const gitDirB = git(rootB, 'rev-parse', '--git-common-dir').trim();
    const config = path.resolve(rootB, gitDirB, 'config');
    const saved = fs.readFileSync(config, 'utf8');
    fs.writeFileSync(config, saved.replace(/\[user\][^[]*/, ''));
    const env = { HOME: process.env.HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM, EMAIL: process.env.EMAIL, GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME, GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME };
    Object.assign(process.env, { GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: dir });
    delete process.env.EMAIL;
    delete process.env.GIT_COMMITTER_NAME;
    delete process.env.GIT_AUTHOR_NAME;
    try {
      await fails('reviewer', 'work_review', { work_id: workId, action: 'commit' }, 'UNAVAILABLE', 'commit_failed');
    } finally {
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      fs.writeFileSync(config, saved);
    }
    // Which repository went first is the order of the worktrees (alpha, beta): alpha is committed, beta is not.
    const alphaHead = git(rootA, 'rev-parse', 'HEAD').trim();
    assert.equal(git(rootA, 'rev-list', '--count', 'HEAD').trim(), '2');
    assert.equal(git(rootB, 'rev-list', '--count', 'HEAD').trim(), '1');
    const out = await ok('reviewer', 'work_review', { work_id: workId, action: 'commit' });
    const commits = out.commits as { workspace_id: string; commit: string }[];
    assert.equal(commits.find((c) => c.workspace_id === 'alpha')?.commit, alphaHead, 'alpha is recognised by its trailer, not committed again');
    assert.equal(git(rootA, 'rev-list', '--count', 'HEAD').trim(), '2');
    assert.equal(git(rootB, 'rev-list', '--count', 'HEAD').trim(), '2');
  });

  it('a frozen work stays frozen, with its reviews, across a reload', async () => {
    const workId = String((await ok('author', 'work_open', { workspace_id: 'alpha', title: 'Reload', isolation: 'worktree' })).work_id);
    const rootA = a.steering.rootFor(workId, 'alpha') as string;
    await patch(workId, 'alpha', 'src/app.ts', rootA, 'export const a = 1;', 'export const a = 2;', 'p1');
    const digest = String((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest);
    await ok('reviewer', 'work_review', { work_id: workId, action: 'approve', digest });
    await a.shutdown();
    a = await assemble();
    assert.equal(a.steering.work(workId)?.frozen?.digest, digest);
    await fails('author2', 'apply_patch', { workspace_id: 'alpha', work_id: workId, operation_key: 'p2', expected_versions: {}, patch: '*** Begin Patch\n*** Add File: r.txt\n+r\n*** End Patch\n' }, 'WORK_FROZEN');
    await fails('author', 'work_review', { work_id: workId, action: 'approve', digest }, 'PERMISSION_DENIED', 'self_review');
    const out = await ok('reviewer', 'work_review', { work_id: workId, action: 'commit' });
    assert.equal((out.commits as unknown[]).length, 1, 'only alpha changed');
  });

  it('freezes a shared work in its folder; refuses to freeze while one of its commands runs', async () => {
    const workId = String((await ok('author', 'work_open', { workspace_id: 'beta', title: 'Shared' })).work_id);
    await patch(workId, 'beta', 'lib.txt', repoB, 'beta one', 'beta two', 'p1');
    const p = await ok('author', 'exec_command', { workspace_id: 'beta', work_id: workId, command: ['sleep', '30'], occupancy: 'shared' });
    await fails('author', 'work_review', { work_id: workId, action: 'freeze' }, 'WORKSPACE_BUSY', 'processes_running');
    await ok('author', 'terminate_process', { process_id: p.process_id });
    for (let i = 0; i < 200 && a.steering.runningProcesses(workId).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    const digest = String((await ok('author', 'work_review', { work_id: workId, action: 'freeze' })).digest);
    await fails('author', 'apply_patch', { workspace_id: 'beta', work_id: workId, operation_key: 'p2', expected_versions: {}, patch: '*** Begin Patch\n*** Add File: z.txt\n+z\n*** End Patch\n' }, 'WORK_FROZEN');
    await ok('reviewer', 'work_review', { work_id: workId, action: 'approve', digest });
    const out = await ok('reviewer', 'work_review', { work_id: workId, action: 'commit' });
    assert.equal(git(repoB, 'rev-parse', 'main').trim(), (out.commits as { commit: string }[])[0]?.commit, 'a shared work commits on the folder\'s branch');
    assert.equal(git(repoB, 'show', 'HEAD:lib.txt'), 'beta two\n');
  });
});
