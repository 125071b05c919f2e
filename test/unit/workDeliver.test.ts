/**
 * Delivering a reviewed commit, against a local bare remote and a fake `gh` on PATH: the task branch is pushed only
 * when the remote has no such branch (a racing push that made it first is refused, nothing pushed over it) or has it
 * at the reviewed commit (a repeat reconciles); never from an integration or release branch; a pull request is found
 * or opened once with gh, and without gh there is a compare URL for GitHub remotes.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { WorkDelivery, compareUrlOf } from '../../src/features/works/node/deliver';
import type { PullRequestOpener, PullRequestRequest } from '../../src/features/works/node/deliver';

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: GIT_ENV });

const FAKE_GH = `#!/bin/sh
echo "$*" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "auth status") [ "$FAKE_GH_AUTH" = fail ] && exit 1; exit 0;;
  "pr list") if [ -f "$FAKE_GH_STATE" ]; then printf '[{"url":"%s"}]\\n' "$(cat "$FAKE_GH_STATE")"; else echo '[]'; fi;;
  "pr create") echo "https://github.example/o/r/pull/7" > "$FAKE_GH_STATE"; echo "https://github.example/o/r/pull/7";;
  *) exit 2;;
esac
`;

describe('delivering a reviewed commit (local bare remote, fake gh)', function () {
  this.timeout(60_000);
  let dir: string;
  let repo: string;
  let bare: string;
  let bin: string;
  let ghLog: string;
  let auth = 'ok';
  let withGh = true;
  let commit: string;
  const delivery = (opener?: PullRequestOpener, openerTimeoutMs?: number): WorkDelivery =>
    new WorkDelivery({
      ...(opener !== undefined ? { opener } : {}),
      ...(openerTimeoutMs !== undefined ? { openerTimeoutMs } : {}),
      env: () => ({ ...GIT_ENV, PATH: withGh ? `${bin}:${process.env.PATH ?? ''}` : (process.env.PATH ?? ''), FAKE_GH_LOG: ghLog, FAKE_GH_STATE: path.join(dir, 'gh-state'), FAKE_GH_AUTH: auth }),
      ...(withGh ? {} : { gh: path.join(dir, 'no-such-gh') }),
    });
  const target = () => ({ workspace_id: 'alpha', top: repo, commit, title: 'Reviewed work', body: 'Reviewed at sha256:…' });
  const ghCalls = (): string[] => (fs.existsSync(ghLog) ? fs.readFileSync(ghLog, 'utf8').trim().split('\n') : []);

  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-deliver-')));
    bare = path.join(dir, 'remote.git');
    git(dir, 'init', '-q', '--bare', '-b', 'main', bare);
    repo = path.join(dir, 'repo');
    fs.mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 'dev@example.invalid');
    git(repo, 'config', 'user.name', 'Dev');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'init');
    git(repo, 'remote', 'add', 'origin', bare);
    git(repo, 'push', '-q', 'origin', 'main');
    git(repo, 'checkout', '-q', '-b', 'codespace/reviewed-work-1234abcd');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'reviewed\n');
    git(repo, 'commit', '-q', '-am', 'Reviewed work');
    commit = git(repo, 'rev-parse', 'HEAD').trim();
    // A pre-push hook that fails: delivery runs no hook.
    fs.writeFileSync(path.join(repo, '.git/hooks/pre-push'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'gh'), FAKE_GH, { mode: 0o755 });
    ghLog = path.join(dir, 'gh.log');
    auth = 'ok';
    withGh = true;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('pushes an absent task branch, opens one pull request, and a repeat reconciles without pushing or opening again', async () => {
    const [first] = await delivery().deliver([target()]);
    assert.equal(first?.push, 'pushed');
    assert.equal(first?.branch, 'codespace/reviewed-work-1234abcd');
    assert.equal(first?.pr_url, 'https://github.example/o/r/pull/7');
    assert.equal(git(bare, 'rev-parse', 'refs/heads/codespace/reviewed-work-1234abcd').trim(), commit);
    assert.equal(ghCalls().filter((c) => c.startsWith('pr create')).length, 1);
    assert.ok(ghCalls().some((c) => c.startsWith('pr create --head codespace/reviewed-work-1234abcd --base main')), ghCalls().join('\n'));

    const [again] = await delivery().deliver([target()]);
    assert.equal(again?.push, 'already');
    assert.equal(again?.pr_url, 'https://github.example/o/r/pull/7');
    assert.equal(ghCalls().filter((c) => c.startsWith('pr create')).length, 1, 'the pull request is found, not opened twice');
  });

  it('refuses a racing push: the remote branch exists at another commit, and nothing is pushed over it', async () => {
    const other = path.join(dir, 'other');
    git(dir, 'clone', '-q', bare, other);
    git(other, 'config', 'user.email', 'o@example.invalid');
    git(other, 'config', 'user.name', 'Other');
    git(other, 'checkout', '-q', '-b', 'codespace/reviewed-work-1234abcd');
    fs.writeFileSync(path.join(other, 'b.txt'), 'theirs\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'theirs');
    git(other, 'push', '-q', 'origin', 'codespace/reviewed-work-1234abcd');
    const theirs = git(other, 'rev-parse', 'HEAD').trim();
    await assert.rejects(delivery().deliver([target()]), (err: unknown) => {
      assert.ok(ToolError.is(err, 'VERSION_CONFLICT'), String(err));
      assert.equal(err.details?.reason, 'remote_branch_exists');
      assert.equal(err.details?.remote_commit, theirs);
      return true;
    });
    assert.equal(git(bare, 'rev-parse', 'refs/heads/codespace/reviewed-work-1234abcd').trim(), theirs);
    assert.deepEqual(ghCalls(), [], 'no pull request for a refused push');
  });

  it('refuses a push that loses the race after the check: the lease expects the branch absent, and the remote keeps the other commit', async () => {
    // A git that, just before pushing, lets another push create the branch in the remote.
    const racer = path.join(bin, 'git-racing');
    fs.writeFileSync(racer, '#!/bin/sh\nfor a in "$@"; do if [ "$a" = push ]; then git --git-dir="$RACE_BARE" update-ref refs/heads/codespace/reviewed-work-1234abcd "$RACE_COMMIT"; break; fi; done\nexec git "$@"\n', { mode: 0o755 });
    const theirs = git(repo, 'rev-parse', 'main').trim();
    const racing = new WorkDelivery({ git: racer, gh: path.join(dir, 'no-such-gh'), env: () => ({ ...GIT_ENV, RACE_BARE: bare, RACE_COMMIT: theirs }) });
    await assert.rejects(racing.deliver([target()]), (err: unknown) => ToolError.is(err, 'VERSION_CONFLICT') && err.details?.reason === 'remote_branch_exists' && err.details?.remote_commit === theirs);
    assert.equal(git(bare, 'rev-parse', 'refs/heads/codespace/reviewed-work-1234abcd').trim(), theirs, 'the racing push was not overwritten');
  });

  it('never pushes an integration or release branch, nor a branch that moved past the reviewed commit', async () => {
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'merge', '-q', '--ff-only', 'codespace/reviewed-work-1234abcd');
    await assert.rejects(delivery().deliver([target()]), (err: unknown) => ToolError.is(err, 'UNAVAILABLE') && err.details?.reason === 'protected_branch');
    git(repo, 'checkout', '-q', '-b', 'release/1.0');
    await assert.rejects(delivery().deliver([target()]), (err: unknown) => ToolError.is(err, 'UNAVAILABLE') && err.details?.reason === 'protected_branch');
    git(repo, 'checkout', '-q', 'codespace/reviewed-work-1234abcd');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'after the review');
    await assert.rejects(delivery().deliver([target()]), (err: unknown) => ToolError.is(err, 'UNAVAILABLE') && err.details?.reason === 'branch_moved');
    assert.equal(git(bare, 'for-each-ref', '--format=%(refname)', 'refs/heads').trim(), 'refs/heads/main', 'nothing was pushed');
  });

  it('without gh (or unauthenticated) pushes and says why there is no pull request; compare URLs for GitHub remotes', async () => {
    auth = 'fail';
    const [unauth] = await delivery().deliver([target()]);
    assert.equal(unauth?.pr_url, undefined);
    assert.match(unauth?.pr_note ?? '', /not authenticated/);
    assert.equal(unauth?.compare_url, undefined, 'a local remote has no compare page');
    withGh = false;
    const [none] = await delivery().deliver([target()]);
    assert.equal(none?.push, 'already');
    assert.match(none?.pr_note ?? '', /not on PATH/);
    assert.equal(compareUrlOf('https://github.com/octo/repo.git', 'main', 'codespace/fix-1'), 'https://github.com/octo/repo/compare/main...codespace/fix-1?expand=1');
    assert.equal(compareUrlOf('git@github.com:octo/repo.git', 'main', 'codespace/fix-1'), 'https://github.com/octo/repo/compare/main...codespace/fix-1?expand=1');
    assert.equal(compareUrlOf('/srv/git/repo.git', 'main', 'x'), undefined);
  });

  /** An opener like the editor's pull request extension: it records what it is asked, and answers as told. */
  const fakeOpener = (behave: { present?: boolean; find?: () => Promise<string | undefined>; open?: () => Promise<{ url: string } | { pending: string } | undefined> }) => {
    const calls: string[] = [];
    const opener: PullRequestOpener = {
      name: 'the pull request extension',
      present: () => behave.present ?? true,
      find: (req: PullRequestRequest) => {
        calls.push(`find ${req.top} ${req.remote} ${req.branch} ${req.base}`);
        return behave.find?.() ?? Promise.resolve(undefined);
      },
      open: (req: PullRequestRequest) => {
        calls.push(`open ${req.top} ${req.remote} ${req.branch} ${req.base} ${req.title}`);
        return behave.open?.() ?? Promise.resolve(undefined);
      },
    };
    return { opener, calls };
  };

  it('asks the opener first: it finds none, opens one; gh is never asked, and a repeat finds it without opening again', async () => {
    let created: string | undefined;
    const { opener, calls } = fakeOpener({
      find: () => Promise.resolve(created),
      open: () => {
        created = 'https://github.example/o/r/pull/21';
        return Promise.resolve({ url: created });
      },
    });
    const [first] = await delivery(opener).deliver([target()]);
    assert.equal(first?.pr_url, 'https://github.example/o/r/pull/21');
    assert.equal(first?.pr_note, undefined);
    assert.deepEqual(calls, [`find ${repo} origin codespace/reviewed-work-1234abcd main`, `open ${repo} origin codespace/reviewed-work-1234abcd main Reviewed work`]);
    const [again] = await delivery(opener).deliver([target()]);
    assert.equal(again?.push, 'already');
    assert.equal(again?.pr_url, 'https://github.example/o/r/pull/21');
    assert.equal(calls.filter((c) => c.startsWith('open')).length, 1, 'found, not opened twice');
    assert.deepEqual(ghCalls(), [], 'gh is not asked when the opener serves the repository');
  });

  it('a pull request left to the developer in the opener\'s view is noted, not opened with gh; delivering again records the one created there', async () => {
    const view: { created?: string } = {};
    const { opener, calls } = fakeOpener({ find: () => Promise.resolve(view.created), open: () => Promise.resolve({ pending: 'opened in the view: create it there' }) });
    const [first] = await delivery(opener).deliver([target()]);
    assert.equal(first?.pr_url, undefined);
    assert.equal(first?.pr_note, 'opened in the view: create it there');
    view.created = 'https://github.example/o/r/pull/22'; // the developer created it in the view
    const [again] = await delivery(opener).deliver([target()]);
    assert.equal(again?.pr_url, 'https://github.example/o/r/pull/22');
    assert.equal(again?.pr_note, undefined);
    assert.equal(calls.filter((c) => c.startsWith('open')).length, 1);
    assert.deepEqual(ghCalls(), []);
  });

  it('falls back to gh when the opener throws, does not answer in time, or opens nothing, and says why; gh still finds before it opens', async () => {
    const throwing = fakeOpener({ find: () => Promise.reject(new Error('it has no repository here')) });
    const [thrown] = await delivery(throwing.opener).deliver([target()]);
    assert.equal(thrown?.pr_url, 'https://github.example/o/r/pull/7');
    assert.equal(thrown?.pr_note, 'the pull request extension: it has no repository here');
    assert.deepEqual(throwing.calls.map((c) => c.split(' ')[0]), ['find']);
    assert.equal(ghCalls().filter((c) => c.startsWith('pr create')).length, 1);

    const silent = fakeOpener({ find: () => new Promise<never>(() => undefined) });
    const started = Date.now();
    const [late] = await delivery(silent.opener, 300).deliver([target()]);
    assert.ok(Date.now() - started < 20_000, 'the opener\'s time bounds the wait');
    assert.equal(late?.pr_url, 'https://github.example/o/r/pull/7', 'gh finds the pull request it opened');
    assert.equal(late?.pr_note, 'the pull request extension: no answer within 0.3 s');

    const idle = fakeOpener({});
    const [nothing] = await delivery(idle.opener).deliver([target()]);
    assert.equal(nothing?.pr_url, 'https://github.example/o/r/pull/7');
    assert.equal(nothing?.pr_note, 'the pull request extension opened no pull request');
    assert.equal(ghCalls().filter((c) => c.startsWith('pr create')).length, 1, 'one pull request in all');

    auth = 'fail';
    const [neither] = await delivery(throwing.opener).deliver([target()]);
    assert.equal(neither?.pr_url, undefined);
    assert.equal(neither?.pr_note, 'the pull request extension: it has no repository here; gh is not authenticated (gh auth login)');
  });

  it('an opener that is not there (not installed) is passed over without a note', async () => {
    const { opener, calls } = fakeOpener({ present: false, open: () => Promise.resolve({ url: 'https://github.example/never' }) });
    const [d] = await delivery(opener).deliver([target()]);
    assert.equal(d?.pr_url, 'https://github.example/o/r/pull/7');
    assert.equal(d?.pr_note, undefined);
    assert.deepEqual(calls, []);
  });
});
