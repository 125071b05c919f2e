// The work baseline against real git repositories in temporary folders: what it captures, what it never touches
// (the user's index, HEAD, working tree), and the plumbing a reviewed commit checks with.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitWorkBaseline } from '../../src/features/works/node/gitWorkBaseline';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' } });
}

function write(root: string, rel: string, text: string | Buffer): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** Everything a capture must leave alone: HEAD, the index file's bytes, the status, the files (status itself must not refresh the index: GIT_OPTIONAL_LOCKS=0). */
function fingerprint(repo: string): string {
  const index = fs.existsSync(path.join(repo, '.git', 'index')) ? createHash('sha256').update(fs.readFileSync(path.join(repo, '.git', 'index'))).digest('hex') : 'none';
  let head = 'unborn';
  try {
    head = git(repo, 'rev-parse', 'HEAD').trim();
  } catch {
    // unborn branch
  }
  return JSON.stringify({ head, index, status: git(repo, 'status', '--porcelain=v1', '-z', '--untracked-files=all') });
}

describe('GitWorkBaseline (work baselines in git)', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  const wt = new GitWorkBaseline();

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-gwt-'));
    repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q');
    git(repo, 'config', 'user.email', 'dev@example.invalid');
    git(repo, 'config', 'user.name', 'Dev');
    write(repo, '.gitignore', 'ignored/\n*.log\n');
    write(repo, 'a.txt', 'a1\n');
    write(repo, 'sub/b.txt', 'b1\n');
    write(repo, 'gone.txt', 'bye\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'init');
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('captures tracked, modified and untracked files without touching the index, HEAD or the files', async () => {
    write(repo, 'a.txt', 'a2 uncommitted\n');
    write(repo, 'new.txt', 'untracked\n');
    write(repo, 'staged.txt', 'staged\n');
    git(repo, 'add', 'staged.txt');
    write(repo, 'ignored/x.txt', 'never\n');
    write(repo, 'debug.log', 'never\n');
    const before = fingerprint(repo);
    const baseline = (await wt.capture(repo)) as string;
    assert.ok(baseline.startsWith('git-tree:'), String(baseline));
    assert.equal(fingerprint(repo), before, 'the index, HEAD, status and files are as they were');
    assert.equal(Buffer.from((await wt.baselineContent(repo, baseline, 'a.txt')) ?? []).toString(), 'a2 uncommitted\n');
    assert.equal(Buffer.from((await wt.baselineContent(repo, baseline, 'new.txt')) ?? []).toString(), 'untracked\n');
    assert.equal(Buffer.from((await wt.baselineContent(repo, baseline, 'sub/b.txt')) ?? []).toString(), 'b1\n');
    assert.equal(await wt.baselineContent(repo, baseline, 'ignored/x.txt'), undefined, 'ignored files are not captured');
    assert.equal(await wt.baselineContent(repo, baseline, 'debug.log'), undefined);
    assert.equal(await wt.baselineContent(repo, baseline, 'nope.txt'), undefined);
    assert.deepEqual(await wt.changes(repo, baseline), [], 'nothing changed since');
  });

  it('lists what changed since the baseline: edits, additions, deletions, whoever made them', async () => {
    const baseline = (await wt.capture(repo)) as string;
    write(repo, 'a.txt', 'a2\n');
    write(repo, 'sub/new file.txt', 'new\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    write(repo, 'ignored/y.txt', 'ignored\n');
    const before = fingerprint(repo);
    const changes = await wt.changes(repo, baseline);
    assert.deepEqual(
      [...changes].sort((x, y) => x.path.localeCompare(y.path)),
      [
        { path: 'a.txt', kind: 'update' },
        { path: 'gone.txt', kind: 'delete' },
        { path: 'sub/new file.txt', kind: 'add' },
      ],
    );
    assert.equal(fingerprint(repo), before, 'listing changes touches nothing either');
  });

  it('works on a folder inside a repository: paths are folder-relative and the rest of the repository is out of it', async () => {
    const sub = path.join(repo, 'sub');
    const baseline = (await wt.capture(sub)) as string;
    write(repo, 'a.txt', 'outside\n');
    write(repo, 'sub/b.txt', 'b2\n');
    assert.deepEqual(await wt.changes(sub, baseline), [{ path: 'b.txt', kind: 'update' }]);
    assert.equal(Buffer.from((await wt.baselineContent(sub, baseline, 'b.txt')) ?? []).toString(), 'b1\n');
    assert.equal(await wt.toWorkspacePath(sub, 'sub/b.txt'), 'b.txt');
    assert.equal(await wt.toWorkspacePath(sub, 'a.txt'), undefined);
  });

  it('captures an unborn repository (no commit yet)', async () => {
    const fresh = path.join(dir, 'fresh');
    fs.mkdirSync(fresh);
    git(fresh, 'init', '-q');
    write(fresh, 'only.txt', 'x\n');
    const before = fingerprint(fresh);
    const baseline = (await wt.capture(fresh)) as string;
    assert.ok(baseline);
    assert.equal(fingerprint(fresh), before);
    write(fresh, 'only.txt', 'y\n');
    assert.deepEqual(await wt.changes(fresh, baseline), [{ path: 'only.txt', kind: 'update' }]);
    assert.equal(await wt.head(fresh), undefined);
  });

  it('returns undefined outside git, and for a git that is not there', async () => {
    const plain = path.join(dir, 'plain');
    fs.mkdirSync(plain);
    write(plain, 'f.txt', 'x');
    // A folder under /tmp outside every repository (the temp dir is not inside one).
    assert.equal(await wt.capture(plain), undefined);
    assert.equal(await new GitWorkBaseline({ git: path.join(dir, 'no-such-git') }).capture(repo), undefined);
    assert.equal(wt.readable(undefined), false);
    assert.equal(wt.readable('git-tree:xyz'), false);
    await assert.rejects(wt.changes(repo, 'git-tree:not-hex'), /not a git baseline/);
  });

  it('reports staged paths, index and commit blob ids in the git object format, and the paths a commit changed', async () => {
    assert.deepEqual(await wt.stagedPaths(repo), []);
    write(repo, 'a.txt', 'a2\n');
    git(repo, 'add', 'a.txt');
    assert.deepEqual(await wt.stagedPaths(repo), ['a.txt']);
    const id = git(repo, 'hash-object', 'a.txt').trim();
    assert.equal(await wt.blobId(repo, Buffer.from('a2\n')), id);
    const staged = await wt.indexBlobs(repo, ['a.txt', 'missing.txt']);
    assert.equal(staged.get('a.txt'), id);
    assert.equal(staged.get('missing.txt'), undefined);
    git(repo, 'commit', '-q', '-m', 'two');
    const head = (await wt.head(repo)) as string;
    assert.equal(head, git(repo, 'rev-parse', 'HEAD').trim());
    assert.deepEqual(await wt.commitChangedPaths(repo, head), ['a.txt']);
    const blobs = await wt.commitBlobs(repo, head, ['a.txt', 'gone.txt', 'nope.txt']);
    assert.equal(blobs.get('a.txt'), id);
    assert.equal(blobs.get('gone.txt'), git(repo, 'rev-parse', 'HEAD:gone.txt').trim());
    assert.equal(blobs.get('nope.txt'), undefined);
  });

  it('says a change of mode, and marks one that changed nothing else', async () => {
    const baseline = await wt.capture(repo);
    fs.chmodSync(path.join(repo, 'a.txt'), 0o755);
    write(repo, 'sub/b.txt', 'b2\n');
    fs.chmodSync(path.join(repo, 'sub/b.txt'), 0o755);
    write(repo, 'gone.txt', 'still here, edited\n');
    assert.deepEqual(await wt.changes(repo, baseline as string), [
      { path: 'a.txt', kind: 'update', mode: { from: '100644', to: '100755' }, mode_only: true },
      { path: 'gone.txt', kind: 'update' },
      { path: 'sub/b.txt', kind: 'update', mode: { from: '100644', to: '100755' } },
    ]);
  });

  it('takes file names literally (no pathspec magic, no glob)', async () => {
    write(repo, '*.txt', 'star\n');
    write(repo, ':(glob)x', 'magic\n');
    const baseline = (await wt.capture(repo)) as string;
    write(repo, '*.txt', 'star2\n');
    assert.deepEqual(await wt.changes(repo, baseline), [{ path: '*.txt', kind: 'update' }]);
    assert.equal(Buffer.from((await wt.baselineContent(repo, baseline, '*.txt')) ?? []).toString(), 'star\n');
    git(repo, 'add', '-A');
    const staged = await wt.indexBlobs(repo, ['*.txt']);
    assert.equal(staged.size, 1);
    assert.equal(staged.get('*.txt'), git(repo, 'hash-object', '--', '*.txt').trim());
  });
});
