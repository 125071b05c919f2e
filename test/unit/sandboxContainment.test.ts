// Containment of the bubblewrap sandbox, tested as an attacker would: a real command plants something inside the
// real sandbox, then the real git (or a read) acts outside it, and a marker file shows whether anything ran.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import { argMax } from '../../src/features/processes/node/processTable';
import type { IsolationSettings } from '../../src/features/processes/node/sandbox/commandSandbox';
import { processCountPerNamespace } from '../../src/features/processes/node/sandbox/commandSandbox';
import { heldPlaceholders } from '../../src/features/processes/node/sandbox/placeholders';
import { nestedRepositories, protectedEntries } from '../../src/features/processes/node/sandbox/sandboxInventory';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';
import type { BoundResult } from './helpers/processBound';
import { runawayUnderBound } from './helpers/processBound';

function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  const r = spawnSync('bwrap', ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent', 'true'], { encoding: 'utf8' });
  if (r.error) return `bwrap not runnable: ${r.error.message}`;
  if (r.status !== 0) return `bwrap fails: ${r.stderr.trim()}`;
  return undefined;
}

interface Knobs {
  mode: 'auto' | 'required' | 'off';
  gitWrites: 'none' | 'commit';
  maxProcesses: number;
}

function settings(k: Knobs): IsolationSettings {
  return { mode: () => k.mode, network: () => 'block', gitWrites: () => k.gitWrites, maxProcesses: () => k.maxProcesses };
}

/** Git as the developer's editor runs it outside the sandbox: no user or system configuration of this machine. */
function gitOutside(f: ProcessToolsFixture, args: string[], cwd = f.root): { status: number | null; out: string } {
  const home = path.join(f.tmp, 'outside-home');
  fs.mkdirSync(home, { recursive: true });
  const r = spawnSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function makeRepo(f: ProcessToolsFixture, dir = f.root): void {
  fs.mkdirSync(dir, { recursive: true });
  assert.equal(gitOutside(f, ['init', '-q', '-b', 'main', dir]).status, 0);
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  assert.equal(gitOutside(f, ['add', 'a.txt'], dir).status, 0);
  assert.equal(gitOutside(f, ['commit', '-q', '-m', 'first'], dir).status, 0);
}

describe('sandbox containment (real bwrap, real git)', function () {
  this.timeout(120_000);
  let f: ProcessToolsFixture;
  let knobs: Knobs;
  let marker: string;

  before(function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  beforeEach(async () => {
    knobs = { mode: 'required', gitWrites: 'none', maxProcesses: 512 };
    f = await processToolsFixture({ isolation: settings(knobs) });
    marker = path.join(f.tmp, 'PWNED');
  });

  afterEach(async () => {
    await f?.dispose();
  });

  async function run(script: string, options: { tty?: boolean; command?: string[] } = {}): Promise<{ out: string; exit_code?: number }> {
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command: options.command ?? ['sh', '-c', script], tty: options.tty ?? false, occupancy: 'shared' });
    const id = r.process_id as string;
    const out = (await f.readAll(id)).replace(/\r\n/g, '\n');
    const st = await f.call(processStatusTool, { process_id: id });
    return { out, exit_code: st.exit_code as number | undefined };
  }

  /** Each attempt in a subshell; a line `PLANTED: <name>` for every one that succeeded. */
  async function attempt(attempts: Record<string, string>): Promise<string> {
    const script = Object.entries(attempts).map(([name, a]) => `(${a}) 2>/dev/null && echo "PLANTED: ${name}"`).join('; ') + '; echo done';
    const r = await run(script);
    assert.match(r.out, /done/);
    return r.out;
  }

  const evil = (): string => `touch ${marker}`;

  /** The control: the same configuration written outside the sandbox does run with git status (the test can fail). */
  function controlRuns(repoDir: string): void {
    assert.equal(fs.existsSync(marker), false);
    fs.appendFileSync(path.join(repoDir, '.git', 'config'), `[core]\n\tfsmonitor = "${evil()}"\n`);
    gitOutside(f, ['status'], repoDir);
    assert.equal(fs.existsSync(marker), true, 'the control did not run: the test could not see an attack');
    fs.rmSync(marker);
  }

  it('.git/config, config.worktree, commondir, hooks, info, modules: nothing planted, real git outside runs nothing', async () => {
    makeRepo(f);
    fs.mkdirSync(path.join(f.root, '.git', 'modules', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(f.root, '.git', 'modules', 'sub', 'config'), '[core]\n');
    const ev = evil();
    const out = await attempt({
      config: `printf '[core]\\n\\tfsmonitor = "${ev}"\\n' >> .git/config`,
      'config.worktree': `printf '[core]\\n\\tfsmonitor = "${ev}"\\n' > .git/config.worktree`,
      // The reported attack: commondir naming a folder of the command's own, whose config sets core.fsmonitor.
      commondir: `mkdir -p evil-common && cp -r .git/objects .git/refs evil-common/ && printf '[core]\\n\\tfsmonitor = "${ev}"\\n' > evil-common/config && echo ../evil-common > .git/commondir`,
      hook: `mkdir -p .git/hooks && printf '#!/bin/sh\\n${ev}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
      info: `mkdir -p .git/info && echo '* filter=evil' > .git/info/attributes`,
      modules: `printf '[core]\\n\\tfsmonitor = "${ev}"\\n' >> .git/modules/sub/config`,
      'git config': `git config core.fsmonitor "${ev}"`,
      'replace .git': `mv .git .git-old && mkdir .git`,
      'remove .git': `rm -rf .git && test ! -e .git`,
    });
    assert.doesNotMatch(out, /PLANTED/);
    // What the editor's git does by itself (status, with fsmonitor and refresh), and what the developer does next.
    assert.equal(gitOutside(f, ['status']).status, 0);
    assert.equal(gitOutside(f, ['commit', '-q', '--allow-empty', '-m', 'dev']).status, 0);
    assert.equal(gitOutside(f, ['-C', path.join(f.root), 'config', '--get', 'core.fsmonitor']).status, 1);
    assert.equal(fs.existsSync(marker), false, 'a planted command ran outside the sandbox');
    assert.equal(fs.existsSync(path.join(f.root, '.git', 'commondir')), false);
    controlRuns(f.root);
  });

  it('inside, git reads work with the whole .git read-only, and writing it fails with a clear error', async () => {
    makeRepo(f);
    const r = await run('git status --short && git log --oneline | wc -l && git diff --stat; git commit --allow-empty -m x; echo rc=$?');
    assert.match(r.out, /^1$/m);
    assert.match(r.out, /Read-only file system/);
    assert.match(r.out, /rc=(?!0)\d+/);
  });

  it('a missing .git: git init and a planted config are refused, and nothing is left for git outside to trust', async () => {
    const before = fs.readdirSync(f.root).sort();
    const out = await attempt({
      'git init': `git init -q . && git config core.fsmonitor "${evil()}"`,
      'mkdir .git': `mkdir -p .git/hooks && echo x > .git/HEAD`,
      '.git file': `echo "gitdir: elsewhere" > .git`,
    });
    assert.doesNotMatch(out, /PLANTED/);
    assert.deepEqual(fs.readdirSync(f.root).sort(), before, 'the workspace listing changed');
    const st = gitOutside(f, ['status']);
    assert.notEqual(st.status, 0, 'git outside found a repository');
    assert.equal(fs.existsSync(marker), false);
  });

  it('a .git file (linked worktree): the file, the folder it names and that folder’s commondir are read-only', async () => {
    // A repository kept in the workspace under admin/, checked out in work/ through a .git file.
    makeRepo(f, path.join(f.root, 'admin-src'));
    assert.equal(gitOutside(f, ['-C', path.join(f.root, 'admin-src'), 'worktree', 'add', '-q', path.join(f.root, 'work')]).status, 0);
    const link = fs.readFileSync(path.join(f.root, 'work', '.git'), 'utf8');
    const names = protectedEntries(f.root, 'none', await nestedRepositories(f.root)).map((e) => path.relative(f.root, e.path));
    for (const p of ['work/.git', 'admin-src/.git']) assert.ok(names.includes(p), `${p} not protected: ${names.join(', ')}`);
    const out = await attempt({
      'rewrite link': `echo "gitdir: ../evil" > work/.git`,
      'worktree config': `printf '[core]\\n\\tfsmonitor = "${evil()}"\\n' > admin-src/.git/worktrees/work/config.worktree`,
      'worktree commondir': `echo ../../../evil > admin-src/.git/worktrees/work/commondir`,
      'main config': `git -C work config core.fsmonitor "${evil()}"`,
    });
    assert.doesNotMatch(out, /PLANTED/);
    assert.equal(fs.readFileSync(path.join(f.root, 'work', '.git'), 'utf8'), link);
    assert.equal(gitOutside(f, ['status'], path.join(f.root, 'work')).status, 0);
    assert.equal(fs.existsSync(marker), false);
  });

  it('nested repositories found in the workspace (a vendored clone, a submodule checkout) are read-only whole', async () => {
    makeRepo(f);
    makeRepo(f, path.join(f.root, 'vendor', 'lib'));
    fs.mkdirSync(path.join(f.root, 'deep', 'a', 'b'), { recursive: true });
    fs.writeFileSync(path.join(f.root, 'deep', 'a', 'b', '.git'), 'gitdir: ../../../.git/modules/x\n');
    assert.deepEqual(
      (await nestedRepositories(f.root)).map((n) => path.relative(f.root, n.path)).sort(),
      ['deep/a/b/.git', 'vendor/lib/.git'],
    );
    const out = await attempt({
      'nested config': `printf '[core]\\n\\tfsmonitor = "${evil()}"\\n' >> vendor/lib/.git/config`,
      'nested hook': `printf '#!/bin/sh\\n${evil()}\\n' > vendor/lib/.git/hooks/post-checkout`,
      'nested link': `echo "gitdir: /tmp/evil" > deep/a/b/.git`,
    });
    assert.doesNotMatch(out, /PLANTED/);
    assert.equal(gitOutside(f, ['status'], path.join(f.root, 'vendor', 'lib')).status, 0);
    assert.equal(fs.existsSync(marker), false);
    controlRuns(path.join(f.root, 'vendor', 'lib'));
  });

  it('gitWrites commit: commands commit, but config, hooks and redirections stay read-only (also when missing)', async () => {
    makeRepo(f);
    knobs.gitWrites = 'commit';
    fs.rmSync(path.join(f.root, '.git', 'hooks'), { recursive: true, force: true });
    const before = fs.readdirSync(path.join(f.root, '.git')).sort();
    const r = await run('echo b > b.txt && git add b.txt && git -c user.name=a -c user.email=a@a commit -q -m "from the sandbox" && echo COMMITTED');
    assert.match(r.out, /COMMITTED/, r.out);
    assert.match(gitOutside(f, ['log', '--format=%s']).out, /from the sandbox/);
    const out = await attempt({
      config: `printf '[core]\\n\\tfsmonitor = "${evil()}"\\n' >> .git/config`,
      'config.worktree': `echo x > .git/config.worktree`,
      commondir: `echo ../evil > .git/commondir`,
      hook: `mkdir -p .git/hooks; echo x > .git/hooks/pre-commit`,
      'replace .git': `mv .git .git-old`,
      'git config': `git config core.fsmonitor "${evil()}"`,
    });
    assert.doesNotMatch(out, /PLANTED/);
    assert.equal(gitOutside(f, ['status']).status, 0);
    assert.equal(fs.existsSync(marker), false);
    // The placeholders are gone again: .git lists what it did before (plus what the commit itself wrote).
    const after = fs.readdirSync(path.join(f.root, '.git')).sort();
    for (const name of ['hooks', 'config.worktree', 'commondir', 'worktrees', 'modules']) assert.equal(after.includes(name), before.includes(name), name);
  });

  it('workspace_info lists what is protected, with its kind', async () => {
    makeRepo(f);
    fs.mkdirSync(path.join(f.root, '.vscode'));
    const info = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as { execution: { isolation: { protected: { path: string; kind: string }[]; git_writes: string; max_processes: { limit: number | null } } } };
    const iso = info.execution.isolation;
    const kinds = Object.fromEntries(iso.protected.map((p) => [p.path, p.kind]));
    assert.deepEqual(kinds, { '.vscode': 'read-only-dir', '.codex': 'masked-missing', '.claude': 'masked-missing', '.git': 'read-only-dir' });
    assert.equal(iso.git_writes, 'none');
    // Root is never bounded by the kernel: then there is no bound, and the reason says so.
    const asRoot = process.getuid?.() === 0;
    assert.equal(iso.max_processes.limit, processCountPerNamespace() && !asRoot ? 512 : null);
    if (asRoot) assert.match(JSON.stringify(iso.max_processes), /root/);
    knobs.gitWrites = 'commit';
    const again = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as typeof info;
    const k2 = Object.fromEntries(again.execution.isolation.protected.map((p) => [p.path, p.kind]));
    assert.equal(k2['.git'], 'writable-pinned');
    assert.equal(k2['.git/config'], 'read-only-file');
    assert.equal(k2['.git/commondir'], 'masked-missing');
  });

  for (const tty of [false, true]) {
    it(`no empty mount points stay behind; each protected missing entry still cannot be created (${tty ? 'pty' : 'pipes'})`, async () => {
      fs.writeFileSync(path.join(f.root, 'keep.txt'), 'k');
      const before = fs.readdirSync(f.root).sort();
      const out = await attempt({ '.vscode': 'mkdir .vscode', '.codex': 'mkdir -p .codex/x', '.claude': 'echo {} > .claude', '.git': 'git init -q .' });
      assert.doesNotMatch(out, /PLANTED/);
      const r = await run('ls -A; echo listed', { tty });
      assert.match(r.out, /listed/);
      assert.deepEqual(fs.readdirSync(f.root).sort(), before);
      assert.deepEqual(heldPlaceholders(), []);
    });
  }

  it('placeholders are counted: one command ending does not lift the protection of another still running', async () => {
    const before = fs.readdirSync(f.root).sort();
    const long = await f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'while [ ! -e go ]; do sleep 0.05; done; mkdir .vscode 2>/dev/null && echo PLANTED; echo finished'], occupancy: 'shared' });
    const short = await run('echo short');
    assert.match(short.out, /short/);
    fs.writeFileSync(path.join(f.root, 'go'), '');
    const out = await f.readAll(long.process_id as string);
    assert.match(out, /finished/);
    assert.doesNotMatch(out, /PLANTED/);
    fs.rmSync(path.join(f.root, 'go'));
    assert.deepEqual(fs.readdirSync(f.root).sort(), before);
  });

  it('hidden secrets read as empty: cat, git status and npm config list work inside with a real ~/.gitconfig and ~/.npmrc', async () => {
    makeRepo(f);
    const home = path.join(f.root, 'home');
    fs.mkdirSync(home);
    const secrets = { '.gitconfig': '[user]\n\tname = SECRET-NAME\n[url "https://token@x"]\n\tinsteadOf = y\n', '.npmrc': '//registry/:_authToken=SECRET-NPM\n', '.netrc': 'machine x password SECRET-NETRC\n', '.git-credentials': 'https://u:SECRET-CRED@x\n', '.pypirc': '[pypi]\npassword = SECRET-PYPI\n' };
    for (const [name, text] of Object.entries(secrets)) fs.writeFileSync(path.join(home, name), text);
    f.env = { ...f.env, HOME: home };
    const cats = Object.keys(secrets).map((n) => `cat "$HOME/${n}"; echo "cat ${n} rc=$?"; wc -c < "$HOME/${n}"`).join('; ');
    const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
    const r = await run(`${cats}; git status --short; echo "git rc=$?"; ${npm ? `${npm} config list >/dev/null; echo "npm rc=$?"` : 'echo "npm rc=0"'}`);
    assert.doesNotMatch(r.out, /SECRET/);
    for (const n of Object.keys(secrets)) assert.match(r.out, new RegExp(`cat ${n.replace('.', '\\.')} rc=0\\n0\\n`), r.out);
    assert.match(r.out, /git rc=0/);
    assert.match(r.out, /npm rc=0/);
  });

  describe('every legal command line runs, byte for byte, with the sandbox on and off', () => {
    const shapes: Record<string, () => string[]> = {
      'odd arguments': () => ['', ' ', '--', '-x', 'a\nb', 'tab\there', 'ünï', '$HOME', "'\"\\", '*', '\u{1F600}'],
      '10,000 arguments': () => Array.from({ length: 10_000 }, (_, i) => `a${i}`),
      '100,000 arguments': () => Array.from({ length: 100_000 }, (_, i) => String(i % 10)),
      'one argument of 128 KiB less one byte (MAX_ARG_STRLEN)': () => ['x'.repeat(128 * 1024 - 1)],
      'close to ARG_MAX': () => {
        // As many 100 KiB arguments as fit, less a margin for the environment (which the test does not vary).
        const room = argMax() - 64 * 1024;
        const n = Math.floor(room / (100 * 1024 + 9));
        return Array.from({ length: n }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(100 * 1024));
      },
    };
    for (const [name, make] of Object.entries(shapes)) {
      for (const mode of ['required', 'off'] as const) {
        it(`${name} (${mode === 'off' ? 'no sandbox' : 'sandbox'})`, async () => {
          knobs.mode = mode;
          const args = make();
          const out = path.join(f.root, 'argv.bin');
          // printf is a shell builtin: the shell's own argv is what the test compares.
          const r = await run('', { command: ['sh', '-c', 'printf "%s\\0" "$0" "$@" > argv.bin; echo wrote', 'zero', ...args] });
          assert.match(r.out, /wrote/, r.out.slice(0, 500));
          const expected = Buffer.concat(['zero', ...args].map((a) => Buffer.from(`${a}\0`, 'utf8')));
          assert.ok(fs.readFileSync(out).equals(expected), 'argv differs');
          fs.rmSync(out);
        });
      }
    }
  });

  it('a runaway command hits the process bound and fails; the sandbox keeps answering; nothing of it is left', async function () {
    // Tries 5000 background processes under a bound of 40. The kernel never bounds root's processes, so as root the
    // attempt runs as an unprivileged user, as the editor does on a desktop.
    const root = process.getuid?.() === 0;
    let r: BoundResult;
    if (root) {
      const child = spawnSync(process.execPath, [path.join(__dirname, 'helpers', 'processBound.js'), '40', '5000'], { encoding: 'utf8', uid: 65534, gid: 65534, cwd: '/', env: { PATH: '/usr/bin:/bin' }, timeout: 120_000 });
      assert.equal(child.status, 0, child.stderr);
      r = JSON.parse(child.stdout) as BoundResult;
    } else {
      r = await runawayUnderBound(40, 5000);
    }
    if (!processCountPerNamespace()) {
      assert.equal(r.limit, null);
      assert.match(r.reason ?? '', /5\.14/);
      return;
    }
    assert.equal(r.limit, 40);
    assert.ok(r.answered);
    assert.doesNotMatch(r.out, /ALL-STARTED/);
    assert.match(r.out, /Cannot fork|Resource temporarily unavailable/);
    const started = Math.max(...[...r.out.matchAll(/started (\d+)/g)].map((m) => Number(m[1])));
    assert.ok(started < 40, `${started} processes started under a bound of 40`);
    assert.notEqual(r.code, 0);
    assert.equal(r.left, 0);
  });
});
