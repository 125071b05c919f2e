import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processResizeTool } from '../../src/features/processes/common/tools/processResize';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { readProcessTool } from '../../src/features/processes/common/tools/readProcess';
import { terminateProcessTool } from '../../src/features/processes/common/tools/terminateProcess';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import { writeStdinTool } from '../../src/features/processes/common/tools/writeStdin';
import { descendantsOf, isLive, listProcesses } from '../../src/features/processes/node/processTable';
import type { SandboxPlan } from '../../src/features/processes/node/sandbox/bubblewrapArgs';
import { SandboxPlanError, bubblewrapArgs } from '../../src/features/processes/node/sandbox/bubblewrapArgs';
import type { IsolationMode, IsolationSettings, NetworkMode } from '../../src/features/processes/node/sandbox/commandSandbox';
import { CommandSandbox, INNER_CHECK, explainProbeFailure } from '../../src/features/processes/node/sandbox/commandSandbox';
import { silentLogger } from '../../src/base/logger';
import { bwrapUnavailable } from './helpers/bwrap';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld } from './helpers/patchWorld';
import type { Swapper } from './helpers/swapRace';
import { MIN_SWAPS, runSwapRace } from './helpers/swapRace';

const plan = (over: Partial<SandboxPlan> = {}): SandboxPlan => ({
  root: '/w/proj',
  cwd: '/w/proj/src',
  network: 'block',
  tty: false,
  protect: [],
  hide: [],
  emptyFile: '/run/cs/empty',
  ...over,
});

/** The value following `flag` at each of its occurrences. */
function after(args: readonly string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1] as string] : []));
}

describe('bubblewrap argv (pure)', () => {
  it('read-only root, fresh /dev and /proc, private /tmp, the workspace writable, then the command', () => {
    const args = bubblewrapArgs(plan());
    for (const f of ['--unshare-user', '--unshare-pid', '--unshare-net', '--die-with-parent', '--new-session']) assert.ok(args.includes(f), f);
    assert.deepEqual(args.slice(args.indexOf('--ro-bind'), args.indexOf('--ro-bind') + 3), ['--ro-bind', '/', '/']);
    assert.deepEqual(after(args, '--dev'), ['/dev']);
    assert.deepEqual(after(args, '--proc'), ['/proc']);
    assert.deepEqual(after(args, '--tmpfs'), ['/tmp']);
    assert.deepEqual(after(args, '--bind'), ['/w/proj']);
    assert.ok(args.indexOf('--tmpfs') < args.indexOf('--bind'), 'the workspace is bound after /tmp (it may lie in /tmp)');
    assert.deepEqual(after(args, '--cap-drop'), ['ALL']);
    assert.deepEqual(args.slice(-3), ['--chdir', '/w/proj/src', '--']);
  });

  it('network allow drops --unshare-net; a terminal drops --new-session', () => {
    assert.ok(!bubblewrapArgs(plan({ network: 'allow' })).includes('--unshare-net'));
    assert.ok(!bubblewrapArgs(plan({ tty: true })).includes('--new-session'));
    assert.ok(bubblewrapArgs(plan({ tty: true })).includes('--unshare-net'));
  });

  it('protected entries come after the workspace bind, missing ones as empty read-only mounts', () => {
    const args = bubblewrapArgs(
      plan({
        protect: [
          { path: '/w/proj/.vscode', state: 'dir' },
          { path: '/w/proj/.git/config', state: 'file' },
          { path: '/w/proj/.codex', state: 'missing-dir' },
          { path: '/w/proj/.git/hooks', state: 'missing-dir' },
          { path: '/w/proj/.git/x', state: 'missing-file' },
        ],
      }),
    );
    const bind = args.indexOf('--bind');
    const ro = (p: string): number => args.findIndex((a, i) => a === '--ro-bind' && args[i + 2] === p);
    assert.ok(ro('/w/proj/.vscode') > bind && args[ro('/w/proj/.vscode') + 1] === '/w/proj/.vscode');
    assert.ok(ro('/w/proj/.git/config') > bind);
    // A missing file: the launcher's placeholder, bound read-only onto itself.
    assert.equal(args[ro('/w/proj/.git/x') + 1], '/w/proj/.git/x');
    for (const p of ['/w/proj/.codex', '/w/proj/.git/hooks']) {
      const t = args.findIndex((a, i) => a === '--tmpfs' && args[i + 1] === p);
      assert.ok(t > bind, p);
      assert.deepEqual(args.slice(t - 2, t), ['--perms', '0555']);
      assert.deepEqual(args.slice(t + 2, t + 4), ['--remount-ro', p]);
    }
  });

  it('secrets: a folder holding the workspace is hidden before the workspace bind, the others after', () => {
    const args = bubblewrapArgs(
      plan({ root: '/home/u/.config/proj', cwd: '/home/u/.config/proj', hide: [{ path: '/home/u/.config', kind: 'dir' }, { path: '/home/u/.ssh', kind: 'dir' }, { path: '/home/u/.netrc', kind: 'file' }] }),
    );
    const bind = args.indexOf('--bind');
    const tmpfs = (p: string): number => args.findIndex((a, i) => a === '--tmpfs' && args[i + 1] === p);
    assert.ok(tmpfs('/home/u/.config') < bind);
    assert.ok(tmpfs('/home/u/.ssh') > bind);
    const netrc = args.findIndex((a, i) => a === '--ro-bind' && args[i + 2] === '/home/u/.netrc');
    // An empty regular file (a /dev/null bind fails to open: bwrap mounts /dev nodev).
    assert.ok(netrc > bind && args[netrc + 1] === '/run/cs/empty');
  });

  it('fails closed on anything it cannot express', () => {
    const bad: Partial<SandboxPlan>[] = [
      { root: 'relative' },
      { root: '/' },
      { root: '/w/proj/../etc', cwd: '/w/etc' },
      { cwd: '/elsewhere' },
      { cwd: '/w/project' },
      { cwd: '/w/proj/a\0b' },
      { network: 'sometimes' as NetworkMode },
      { protect: [{ path: '/etc/passwd', state: 'file' }] },
      { protect: [{ path: '/w/proj', state: 'dir' }] },
      { protect: [{ path: '/w/proj/.vscode', state: 'weird' as 'dir' }] },
      { hide: [{ path: 'home/.ssh', kind: 'dir' }] },
    ];
    for (const b of bad) assert.throws(() => bubblewrapArgs(plan(b)), SandboxPlanError, JSON.stringify(b));
  });

  it('explains forbidden user namespaces with the fix', () => {
    const why = explainProbeFailure('bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.\n', 1, null);
    assert.match(why, /No permissions to creating new namespace/);
    assert.match(why, /apparmor_restrict_unprivileged_userns/);
    assert.match(why, /unprivileged_userns_clone/);
    assert.match(explainProbeFailure('bwrap: setting up uid map: Permission denied\n', 1, null), /AppArmor/);
  });
});

interface Setting {
  mode: IsolationMode;
  network: NetworkMode;
}

function settingsOf(s: Setting, bwrapPath?: string): IsolationSettings {
  return { mode: () => s.mode, network: () => s.network, ...(bwrapPath ? { bwrapPath } : {}) };
}

describe('command sandbox (real bwrap)', function () {
  this.timeout(60_000);
  let f: ProcessToolsFixture;
  let setting: Setting;

  before(function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  beforeEach(async () => {
    setting = { mode: 'auto', network: 'block' };
    f = await processToolsFixture({ isolation: settingsOf(setting) });
  });

  afterEach(async () => {
    await f?.dispose();
  });

  async function exec(command: string[], options: { tty?: boolean; cwd?: string } = {}): Promise<string> {
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command, tty: options.tty ?? false, ...(options.cwd ? { cwd: options.cwd } : {}), occupancy: 'shared' });
    return r.process_id as string;
  }

  async function run(command: string[], options: { tty?: boolean; cwd?: string } = {}): Promise<{ out: string; exit_code?: number; termination?: string }> {
    const id = await exec(command, options);
    const out = (await f.readAll(id)).replace(/\r\n/g, '\n');
    const st = await f.call(processStatusTool, { process_id: id });
    return { out, exit_code: st.exit_code as number | undefined, termination: st.termination as string | undefined };
  }

  async function waitFor(id: string, re: RegExp): Promise<string> {
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 100; i++) {
      const r = await f.call(readProcessTool, { process_id: id, cursor, wait_ms: 500 });
      out += r.chunk as string;
      cursor = r.cursor as number;
      if (re.test(out)) return out;
      if (r.eof) break;
    }
    throw new Error(`never saw ${re}: ${JSON.stringify(out)}`);
  }

  it('workspace_info reports bubblewrap with the network blocked, and allowed once the setting says so', async () => {
    const info = await f.call(workspaceInfoTool, { workspace_id: 'proj' });
    const ex = info.execution as { isolation: { command_sandbox: Record<string, unknown> }; network: string; process: { available: boolean } };
    assert.deepEqual(ex.isolation.command_sandbox, { enabled: true, kind: 'bubblewrap' });
    assert.equal(ex.network, 'blocked');
    assert.equal(ex.process.available, true);
    setting.network = 'allow';
    const again = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })).execution as { network: string };
    assert.equal(again.network, 'allowed');
    setting.mode = 'off';
    const off = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })).execution as { isolation: { command_sandbox: { enabled: boolean; kind: string } }; network: string };
    assert.equal(off.isolation.command_sandbox.enabled, false);
    assert.equal(off.isolation.command_sandbox.kind, 'none');
    assert.equal(off.network, 'unknown');
  });

  for (const tty of [false, true]) {
    const mode = tty ? 'pty' : 'pipes';

    it(`writes in the workspace; not outside it, not in its /tmp copy, not in HOME (${mode})`, async () => {
      const outsideTmp = path.join(f.tmp, 'outside.txt');
      const homeFile = path.join(os.homedir(), `.codespace-sandbox-test-${process.pid}`);
      const r = await run(
        ['sh', '-c', `echo in > inside.txt && echo INSIDE-OK; echo x > ${outsideTmp} && echo TMP-WROTE; echo x > ${homeFile} && echo HOME-WROTE; echo x > /usr/codespace-x && echo USR-WROTE; echo PWD=$PWD; exit 7`],
        { tty },
      );
      try {
        assert.match(r.out, /INSIDE-OK/);
        assert.equal(fs.readFileSync(path.join(f.root, 'inside.txt'), 'utf8'), 'in\n');
        assert.equal(fs.existsSync(outsideTmp), false, 'a file appeared outside the workspace');
        assert.equal(fs.existsSync(homeFile), false, 'a file appeared in HOME');
        assert.doesNotMatch(r.out, /HOME-WROTE|USR-WROTE/);
        assert.match(r.out, /Read-only file system/);
        assert.match(r.out, new RegExp(`PWD=${f.root}\\n`));
        assert.equal(r.exit_code, 7);
      } finally {
        fs.rmSync(homeFile, { force: true });
      }
    });

    it(`cannot write .git/hooks, .git/config, .vscode, .codex, .claude, existing or not (${mode})`, async () => {
      // An existing repository layout and .vscode in `proj`; a second folder where none of them exists yet.
      fs.mkdirSync(path.join(f.root, '.git', 'hooks'), { recursive: true });
      fs.writeFileSync(path.join(f.root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
      fs.writeFileSync(path.join(f.root, '.git', 'config'), '[core]\n');
      fs.mkdirSync(path.join(f.root, '.vscode'));
      fs.writeFileSync(path.join(f.root, '.vscode', 'settings.json'), '{}');
      const attempts = [
        'echo evil > .git/hooks/pre-commit',
        'echo "[core] fsmonitor = evil" >> .git/config',
        'echo evil > .vscode/tasks.json',
        'echo evil > .vscode/settings.json',
        'mkdir -p .claude && echo evil > .claude/settings.json',
        'mkdir -p .codex && echo evil > .codex/config.toml',
        'rm -rf .vscode && mkdir .vscode && echo evil > .vscode/tasks.json',
        'mv .git .git-old',
      ];
      const script = attempts.map((a) => `(${a}) 2>/dev/null && echo "WROTE: ${a.replace(/"/g, '')}"`).join('; ') + '; echo done';
      const existing = await run(['sh', '-c', script], { tty });
      assert.match(existing.out, /done/);
      assert.doesNotMatch(existing.out, /WROTE/);
      assert.equal(fs.existsSync(path.join(f.root, '.git', 'hooks', 'pre-commit')), false);
      assert.equal(fs.readFileSync(path.join(f.root, '.git', 'config'), 'utf8'), '[core]\n');
      assert.equal(fs.readFileSync(path.join(f.root, '.vscode', 'settings.json'), 'utf8'), '{}');
      assert.equal(fs.existsSync(path.join(f.root, '.vscode', 'tasks.json')), false);

      // Not there yet: a fresh workspace, with git init attempted too.
      const g = await processToolsFixture({ isolation: settingsOf(setting) });
      try {
        const missing = [...attempts, 'git init -q . && git config core.fsmonitor evil', 'mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit'];
        const id = (await g.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', missing.map((a) => `(${a}) 2>/dev/null && echo "WROTE: ${a.replace(/"/g, '')}"`).join('; ') + '; echo done'], tty })).process_id as string;
        const r = await g.readAll(id);
        assert.match(r, /done/);
        assert.doesNotMatch(r, /WROTE/);
        for (const p of ['.vscode/tasks.json', '.claude/settings.json', '.codex/config.toml', '.git/config', '.git/hooks/pre-commit', '.git/HEAD']) {
          assert.equal(fs.existsSync(path.join(g.root, p)), false, `${p} was created`);
        }
      } finally {
        await g.dispose();
      }
    });

    it(`cannot read HOME's secrets (${mode})`, async () => {
      // A HOME inside the workspace (outside it, the private /tmp would hide it anyway): the masks must win.
      const home = path.join(f.root, 'home');
      fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
      fs.writeFileSync(path.join(home, '.ssh', 'id_test'), 'PRIVATE-KEY\n');
      fs.mkdirSync(path.join(home, '.aws'));
      fs.writeFileSync(path.join(home, '.aws', 'credentials'), 'AWS-SECRET\n');
      fs.writeFileSync(path.join(home, '.netrc'), 'NETRC-SECRET\n');
      fs.writeFileSync(path.join(home, 'notes.txt'), 'visible\n');
      f.env = { ...f.env, HOME: home };
      const r = await run(['sh', '-c', 'cat "$HOME/.ssh/id_test" "$HOME/.aws/credentials" "$HOME/.netrc" "$HOME/notes.txt"; ls -A "$HOME/.ssh"; echo end'], { tty });
      assert.doesNotMatch(r.out, /PRIVATE-KEY|AWS-SECRET|NETRC-SECRET/);
      assert.match(r.out, /visible/);
      assert.match(r.out, /end/);
      assert.equal(fs.readFileSync(path.join(home, '.ssh', 'id_test'), 'utf8'), 'PRIVATE-KEY\n');
    });

    it(`network: 127.0.0.1 of this machine is unreachable when blocked, reachable when allowed (${mode})`, async () => {
      const server = net.createServer((s) => {
        s.on('error', () => undefined);
        s.end('hello\n');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as net.AddressInfo).port;
      const probe = `require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('CONNECTED'); process.exit(0); }).on('error', (e) => { console.log('FAILED ' + e.code); process.exit(3); })`;
      try {
        const blocked = await run([process.execPath, '-e', probe], { tty });
        assert.match(blocked.out, /FAILED/);
        assert.equal(blocked.exit_code, 3);
        setting.network = 'allow';
        const allowed = await run([process.execPath, '-e', probe], { tty });
        assert.match(allowed.out, /CONNECTED/);
        assert.equal(allowed.exit_code, 0);
      } finally {
        server.close();
      }
    });

    it(`stdin end of file reaches the command (${mode})`, async () => {
      const id = await exec(['sh', '-c', 'wc -c; echo after'], { tty });
      await f.call(writeStdinTool, { process_id: id, data: tty ? 'abc\n' : 'abc', eof: true });
      const out = (await f.readAll(id)).replace(/\r\n/g, '\n');
      assert.match(out, tty ? /\b4\b/ : /\b3\b/);
      assert.match(out, /after/);
      const st = await f.call(processStatusTool, { process_id: id });
      assert.equal(st.exit_code, 0);
    });

    it(`terminate leaves nothing of sh -c 'sleep 1000 & sleep 1000' alive (${mode})`, async () => {
      const marker = `1000.${process.pid}${tty ? 1 : 2}`;
      const id = await exec(['sh', '-c', `sleep ${marker} & sleep ${marker}`], { tty });
      const pid = f.supervisor.info(id).pid;
      let tree: number[] = [];
      for (let i = 0; i < 100 && tree.filter(Boolean).length < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        tree = (await sleepers(marker)).map((e) => e.pid);
      }
      assert.equal(tree.length, 2, 'both sleeps started');
      const inTree = descendantsOf(pid, await listProcesses()).map((e) => e.pid);
      for (const p of tree) assert.ok(inTree.includes(p), 'the sleeps are descendants of the leader');
      const t0 = Date.now();
      const st = await f.call(terminateProcessTool, { process_id: id });
      assert.equal(st.state, 'exited');
      assert.equal(st.termination, 'terminated');
      const left = (await sleepers(marker)).filter(isLive);
      assert.deepEqual(left, [], `still alive after ${Date.now() - t0} ms`);
      assert.deepEqual(descendantsOf(pid, await listProcesses()), []);
    });
  }

  it("never sees CodeSpace's tokens: not in its environment, and no process of the editor in its /proc", async () => {
    const token = `cs_token_${process.pid}_${Date.now()}`;
    const secret = f.supervisor.addSecret(token);
    try {
      f.env = { ...f.env, CODESPACE_TEST_TOKEN: token, OTHER: `x${token}` };
      const r = await run(['sh', '-c', 'env; cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"; echo; ls /proc | grep -c "^[0-9]"']);
      assert.ok(!r.out.includes(token), 'the token reached the sandbox');
      const pids = Number(/(\d+)\s*$/.exec(r.out)?.[1]);
      // bwrap's init, sh, ls, grep (and maybe cat's leftovers): nothing of the editor's side.
      assert.ok(pids > 0 && pids < 10, `${pids} processes visible in the sandbox`);
    } finally {
      secret.dispose();
    }
  });

  it('terminal: resize reaches the command, Ctrl-C reaches it and not bwrap', async () => {
    const id = await exec(['sh', '-c', 'trap "echo GOT-INT; exit 5" INT; read line; stty size; echo ready; while :; do sleep 0.1; done'], { tty: true });
    await f.call(processResizeTool, { process_id: id, rows: 40, cols: 100 });
    await f.call(writeStdinTool, { process_id: id, data: 'go\n' });
    await waitFor(id, /40 100[\s\S]*ready/);
    await f.call(writeStdinTool, { process_id: id, data: '\u0003' });
    const out = await f.readAll(id);
    assert.match(out, /GOT-INT/);
    const st = await f.call(processStatusTool, { process_id: id });
    assert.equal(st.exit_code, 5, JSON.stringify(st));
  });

  it('the command runs in the verified folder; a different one is refused inside the sandbox', async () => {
    fs.mkdirSync(path.join(f.root, 'a'));
    fs.mkdirSync(path.join(f.root, 'b'));
    const own = (): string[] => fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith(`codespace-sandbox-${process.pid}-`));
    const before = own();
    const sandbox = new CommandSandbox({ ...settingsOf({ mode: 'required', network: 'block' }), logger: silentLogger });
    // Each launch is for one start: its argument files are consumed (opened, then deleted) by the start.
    const launchOnce = async (): Promise<NonNullable<Awaited<ReturnType<CommandSandbox['launch']>>>> => {
      const l = await sandbox.launch({ file: '/bin/sh', args: ['-c', 'echo RAN; pwd'], cwd: path.join(f.root, 'a'), root: f.root, env: { PATH: '/usr/bin:/bin' }, tty: false });
      assert.ok(l);
      return l;
    };
    const launch = await launchOnce();
    assert.ok(launch.args.includes(INNER_CHECK));
    // What the backend does, but started in `b` (as if `a` had been swapped after the check): refused.
    const wrong = await collect(launch.file, launch.args, path.join(f.root, 'b'));
    launch.release();
    assert.equal(wrong.code, 126);
    assert.doesNotMatch(wrong.out, /RAN/);
    assert.match(wrong.out, /working directory was replaced/);
    const again = await launchOnce();
    const right = await collect(again.file, again.args, path.join(f.root, 'a'));
    again.release();
    assert.equal(right.code, 0);
    assert.match(right.out, new RegExp(`RAN\\n${path.join(f.root, 'a')}\\n`));
    // Its private folder (argument files, the empty file) goes with it.
    assert.equal(own().filter((n) => !before.includes(n)).length, 1, own().join(', '));
    await sandbox.close();
    assert.deepEqual(own(), before);
  });
});

describe('command sandbox settings (real bwrap)', function () {
  this.timeout(60_000);
  let f: ProcessToolsFixture | undefined;

  before(function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  afterEach(async () => {
    await f?.dispose();
    f = undefined;
  });

  it('required with a broken bwrap refuses every command with EXEC_DISABLED naming the reason, and workspace_info says so', async () => {
    const setting: Setting = { mode: 'required', network: 'block' };
    f = await processToolsFixture({ isolation: settingsOf(setting, '/nonexistent/bwrap') });
    const info = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as { execution: { isolation: { command_sandbox: { enabled: boolean; reason?: string } }; process: { available: boolean } }; notes: string[] };
    assert.equal(info.execution.isolation.command_sandbox.enabled, false);
    assert.match(info.execution.isolation.command_sandbox.reason ?? '', /required/);
    assert.equal(info.execution.process.available, false);
    assert.ok(info.notes.some((n) => /refused/.test(n)));
    for (const tty of [false, true]) {
      await assert.rejects(
        f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'echo ran > ran.txt'], tty }),
        (err: unknown) => ToolError.is(err) && err.code === 'EXEC_DISABLED' && /required/.test(err.message) && /bwrap/.test(err.message),
      );
    }
    assert.equal(fs.existsSync(path.join(f.root, 'ran.txt')), false);
    // auto with the same broken bwrap: runs unsandboxed, and says so.
    setting.mode = 'auto';
    const auto = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as { execution: { isolation: { command_sandbox: { enabled: boolean; kind: string; reason?: string } }; network: string } };
    assert.deepEqual([auto.execution.isolation.command_sandbox.enabled, auto.execution.isolation.command_sandbox.kind, auto.execution.network], [false, 'none', 'unknown']);
    assert.match(auto.execution.isolation.command_sandbox.reason ?? '', /bwrap/);
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'echo ran'] });
    assert.match(await f.readAll(r.process_id as string), /ran/);
  });

  it('required with a working bwrap: the probe passes and commands run sandboxed', async () => {
    f = await processToolsFixture({ isolation: settingsOf({ mode: 'required', network: 'block' }) });
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'cat /proc/1/comm'] });
    // In a new PID namespace the first process is bwrap's own init.
    assert.match(await f.readAll(r.process_id as string), /bwrap/);
  });
});

describe('file tools against a sandboxed symlink swapper (real bwrap)', function () {
  this.timeout(120_000);
  let world: PatchWorld | undefined;

  before(function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  afterEach(async () => {
    await world?.dispose();
  });

  it(`an agent's command swapping links inside the sandbox never makes read or apply_patch touch anything outside (≥ ${MIN_SWAPS} swaps)`, async () => {
    world = await openPatchWorld({}, { profile: 'exec', isolation: { mode: () => 'required', network: () => 'block' } });
    const w = world;
    const outside = path.join(w.tmp, 'outside');
    fs.mkdirSync(outside);
    const startSwapper = async (compiled: string, args: string[]): Promise<Swapper> => {
      // The sandbox sees only the workspace and the read-only system, with a private /tmp: a checkout under /tmp
      // (where CI may clone) is invisible inside, so the script runs from a copy in the workspace.
      const script = path.join(w.root, '.link-swapper.js');
      fs.copyFileSync(compiled, script);
      const r = await w.call('exec_command', { workspace_id: WS_ID, command: [process.execPath, script, ...args], occupancy: 'shared' });
      const id = (r.structuredContent as { process_id: string }).process_id;
      let cursor = 0;
      let out = '';
      let latest = 0;
      let ended = false;
      const pump = (async () => {
        while (!ended) {
          const rr = await w.call('read_process', { process_id: id, cursor, wait_ms: 1000 });
          const s = rr.structuredContent as { chunk: string; cursor: number; eof: boolean };
          out += s.chunk;
          cursor = s.cursor;
          const last = /(\d+)\n(?!.*\d+\n)/s.exec(out.slice(-64));
          if (last) latest = Number(last[1]);
          if (s.eof) ended = true;
        }
      })();
      for (let i = 0; i < 200 && !out.includes('ready'); i++) await new Promise((res) => setTimeout(res, 25));
      assert.match(out, /ready/, `the sandboxed swapper did not start: ${out}`);
      const leader = w.assembled.supervisor.info(id).pid;
      return {
        swaps: () => latest,
        stop: async () => {
          // SIGTERM to the swapper itself (seen from outside the sandbox): it prints its count and exits.
          const node = descendantsOf(leader, await listProcesses()).find((e) => readCmdline(e.pid).startsWith(`${process.execPath} ${script} `));
          assert.ok(node, 'the swapper runs under the sandbox leader');
          process.kill(node.pid, 'SIGTERM');
          await pump;
          return (JSON.parse(out.slice(out.indexOf('{'))) as { swaps: number }).swaps;
        },
      };
    };
    const counts = await runSwapRace({ root: w.root, outside, workspaceId: WS_ID, call: (n, a) => w.call(n, a), runMs: 4000, startSwapper });
    console.log(`      ${JSON.stringify(counts)}`);
  });
});

function readCmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

async function sleepers(marker: string): Promise<Awaited<ReturnType<typeof listProcesses>>> {
  return (await listProcesses()).filter((e) => isLive(e) && readCmdline(e.pid).trim() === `sleep ${marker}`);
}

function collect(file: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd, env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', (code) => resolve({ code, out }));
  });
}
