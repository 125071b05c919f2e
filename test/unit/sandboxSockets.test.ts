import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import type { IsolationMode, NetworkMode } from '../../src/features/processes/node/sandbox/commandSandbox';
import type { UnixSocketMode } from '../../src/features/processes/node/sandbox/seccomp';
import { bwrapUnavailable } from './helpers/bwrap';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';
import type { StandIns } from './helpers/standInRegistry';
import { HTTP_NAME, PROXY_CLIENT, startStandIns } from './helpers/standInRegistry';

/**
 * Tries each target (a socket path, or `@name` for an abstract socket) and prints `<target> CONNECTED` or
 * `<target> ERROR <code>`; then checks that socketpair(2) still works (Node's pipes to a child are socket pairs).
 */
const UNIX_CLIENT = String.raw`
const net = require('node:net');
const { execFileSync } = require('node:child_process');
(async () => {
  for (const t of process.argv.slice(2)) {
    const line = await new Promise((resolve) => {
      const s = net.connect(t.startsWith('@') ? { path: '\0' + t.slice(1) } : { path: t });
      s.on('connect', () => { s.end(); resolve('CONNECTED'); });
      s.on('error', (e) => resolve('ERROR ' + e.code));
    });
    console.log(t + ' ' + line);
  }
  try {
    console.log('PAIR ' + execFileSync('/bin/sh', ['-c', 'echo ok'], { encoding: 'utf8' }).trim());
  } catch (e) {
    console.log('PAIR ERROR ' + e.code);
  }
})();
`;

interface Listener {
  readonly target: string;
  connections: number;
  readonly server: net.Server;
}

async function listen(target: string): Promise<Listener> {
  const l: Listener = { target, connections: 0, server: net.createServer((c) => (l.connections++, c.destroy())) };
  await new Promise<void>((resolve, reject) => {
    l.server.once('error', reject);
    l.server.listen(target.startsWith('@') ? `\0${target.slice(1)}` : target, () => resolve());
  });
  return l;
}

/**
 * A command in the sandbox cannot connect to any Unix socket outside it: not one in a folder it can read (outside
 * the private /tmp), not one in the workspace itself, not one in a runtime folder that is not under /run/user, not
 * an abstract one; in every network mode, on pipes and on a terminal, and neither can what it starts.
 */
describe('Unix sockets from the command sandbox (real bwrap)', function () {
  this.timeout(120_000);
  let f: ProcessToolsFixture;
  let setting: { mode: IsolationMode; network: NetworkMode; unixSockets: UnixSocketMode };
  let outside: string;
  let listeners: Listener[];
  let standIns: StandIns;
  const abstract = `@codespace-test-${process.pid}-${Date.now()}`;

  before(async function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    // Outside /tmp (the sandbox's /tmp is its own), in folders anyone can read, so only the filter stops a connect.
    outside = fs.realpathSync(fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : os.homedir(), 'codespace-sock-')));
    for (const d of ['open', 'xdg']) fs.mkdirSync(path.join(outside, d), { mode: 0o755 });
    fs.chmodSync(outside, 0o755);
    fs.mkdirSync(path.join(outside, 'private-xdg'), { mode: 0o700 });
    listeners = await Promise.all([path.join(outside, 'open', 'agent.sock'), path.join(outside, 'xdg', 'bus'), path.join(outside, 'private-xdg', 'bus'), abstract].map(listen));
    standIns = await startStandIns();
  });

  after(async () => {
    for (const l of listeners ?? []) l.server.close();
    await standIns?.close();
    if (outside) fs.rmSync(outside, { recursive: true, force: true });
  });

  let wsListener: Listener | undefined;
  async function open(bwrapPath?: string): Promise<void> {
    setting = { mode: 'required', network: 'block', unixSockets: 'block' };
    f = await processToolsFixture({
      isolation: {
        mode: () => setting.mode,
        network: () => setting.network,
        unixSockets: () => setting.unixSockets,
        allowedDomains: () => [HTTP_NAME],
        testHosts: standIns.testHosts(),
        ...(bwrapPath ? { bwrapPath } : {}),
      },
    });
    // The command's runtime folder: one that is not under /run/user, and that others can read.
    f.env.XDG_RUNTIME_DIR = path.join(outside, 'xdg');
    fs.writeFileSync(path.join(f.root, 'uclient.js'), UNIX_CLIENT);
    wsListener = await listen(path.join(f.root, 'ws.sock'));
    for (const l of listeners) l.connections = 0;
  }

  beforeEach(() => open());

  afterEach(async () => {
    wsListener?.server.close();
    await f?.dispose();
  });

  async function run(command: string[], tty = false): Promise<{ out: string; exit_code?: number }> {
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command, tty, occupancy: 'shared' });
    const id = r.process_id as string;
    const out = (await f.readAll(id)).replace(/\r\n/g, '\n').trim();
    const st = await f.call(processStatusTool, { process_id: id });
    return { out, exit_code: st.exit_code as number | undefined };
  }

  /** Each target's outcome, as the client printed it. */
  async function tryAll(tty = false, viaShell = false): Promise<Map<string, string>> {
    const targets = [path.join(f.root, 'ws.sock'), ...listeners.map((l) => l.target)];
    const quoted = targets.map((t) => `'${t}'`).join(' ');
    const command = viaShell ? ['/bin/sh', '-c', `"${process.execPath}" uclient.js ${quoted}`] : [process.execPath, 'uclient.js', ...targets];
    const r = await run(command, tty);
    assert.equal(r.exit_code, 0, r.out);
    const lines = new Map(r.out.split('\n').map((l) => /^(\S+) (.*)$/.exec(l)?.slice(1, 3) as [string, string]));
    assert.equal(lines.get('PAIR'), 'ok', `socketpair still works: ${r.out}`);
    return lines;
  }

  function assertNoneReached(got: Map<string, string>, expected: (target: string) => RegExp): void {
    for (const t of [path.join(f.root, 'ws.sock'), ...listeners.map((l) => l.target)]) assert.match(got.get(t) ?? 'missing', expected(t), t);
    assert.equal(wsListener?.connections, 0);
    for (const l of listeners) assert.equal(l.connections, 0, l.target);
  }

  for (const network of ['block', 'domains', 'allow'] as const) {
    for (const tty of [false, true]) {
      it(`network ${network} (${tty ? 'pty' : 'pipes'}): every Unix socket fails with EPERM, file or abstract; socketpair works`, async () => {
        setting.network = network;
        const got = await tryAll(tty);
        // The private runtime folder is hidden as well (ENOENT would do), but the filter answers first.
        assertNoneReached(got, () => /^ERROR EPERM$/);
      });
    }
  }

  it('what the command starts is filtered too (a shell running the client)', async () => {
    assertNoneReached(await tryAll(false, true), () => /^ERROR EPERM$/);
  });

  it('workspace_info reports the filter; with codespace.exec.unixSockets "allow" it says they are not blocked, and why', async () => {
    const iso = async (): Promise<Record<string, unknown>> => ((await f.call(workspaceInfoTool, { workspace_id: 'proj' })).execution as { isolation: Record<string, unknown> }).isolation;
    assert.deepEqual((await iso()).unix_sockets, { blocked: true, method: 'seccomp' });
    setting.unixSockets = 'allow';
    const weaker = (await iso()).unix_sockets as { blocked: boolean; reason: string };
    assert.equal(weaker.blocked, false);
    assert.match(weaker.reason, /codespace\.exec\.unixSockets is "allow"/);
  });

  it('the weaker mode "allow" reaches what the file system shows (the control: the tests above can fail)', async () => {
    setting.unixSockets = 'allow';
    setting.network = 'allow';
    const shared = await tryAll();
    assert.equal(shared.get(path.join(f.root, 'ws.sock')), 'CONNECTED');
    assert.equal(shared.get(path.join(outside, 'open', 'agent.sock')), 'CONNECTED');
    assert.match(shared.get(path.join(outside, 'xdg', 'bus')) ?? '', /^ERROR E/, 'in a runtime folder others can read, the sockets there at launch are hidden one by one');
    assert.equal(shared.get(abstract), 'CONNECTED', 'network "allow" shares the host network namespace, and with it its abstract sockets');
    assert.equal(shared.get(path.join(outside, 'private-xdg', 'bus')), 'CONNECTED', 'named by no variable, it is just another socket');
    f.env.XDG_RUNTIME_DIR = path.join(outside, 'private-xdg');
    assert.equal((await tryAll()).get(path.join(outside, 'private-xdg', 'bus')), 'ERROR ENOENT', 'a private runtime folder is hidden whole, wherever it is');
    // Abstract sockets belong to a network namespace: block and domains have their own, so none of the host's.
    for (const network of ['block', 'domains'] as const) {
      setting.network = network;
      assert.equal((await tryAll()).get(abstract), 'ERROR ECONNREFUSED', network);
    }
  });

  it('network domains: the relay still reaches an allowed host through the proxy while the command is filtered', async () => {
    setting.network = 'domains';
    fs.writeFileSync(path.join(f.root, 'client.js'), PROXY_CLIENT);
    const r = await run([process.execPath, 'client.js', 'http', `${HTTP_NAME}:${standIns.httpPort}`, '/left-pad']);
    assert.equal(r.out, `STATUS 200 registry: GET /left-pad host=${HTTP_NAME}:${standIns.httpPort}`);
    // And the proxy's own socket, bound into the sandbox, is out of the command's reach like any other.
    const direct = await run([process.execPath, 'uclient.js', '/tmp/.codespace-network/proxy.sock']);
    assert.match(direct.out, /^\/tmp\/\.codespace-network\/proxy\.sock ERROR EPERM$/m);
  });

  it('network domains: under the nested bwrap the command keeps the same sandbox (read-only protected entries, a writable workspace, no capabilities)', async () => {
    setting.network = 'domains';
    fs.mkdirSync(path.join(f.root, '.vscode'));
    const r = await run(['sh', '-c', '(echo x > .vscode/x) 2>/dev/null && echo WROTE-VSCODE; echo ok > ok.txt && echo WROTE-ROOT; grep ^CapEff /proc/self/status']);
    assert.doesNotMatch(r.out, /WROTE-VSCODE/);
    assert.match(r.out, /WROTE-ROOT/);
    assert.match(r.out, /^CapEff:\s+0+$/m);
    assert.equal(fs.existsSync(path.join(f.root, '.vscode', 'x')), false);
  });

  it('network block still has no network but its own loopback', async () => {
    const ifaces = await run(['sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    assert.equal(ifaces.out, 'lo');
  });

  it('fails closed: a bwrap that cannot apply the filter refuses commands (also in auto), naming why; "allow" runs them', async () => {
    const real = execFileSync('/bin/sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
    const fake = path.join(outside, 'bwrap-without-seccomp');
    // Stands for a bwrap without --seccomp (or a kernel without seccomp filters): refuses the option, wherever it is.
    fs.writeFileSync(
      fake,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = --seccomp ] && { echo "bwrap: Unknown option --seccomp" >&2; exit 1; }; done\n` +
        `if [ -e /proc/self/fd/4 ] && tr '\\0' '\\n' </proc/self/fd/4 | grep -qx -- --seccomp; then echo "bwrap: Unknown option --seccomp" >&2; exit 1; fi\n` +
        `exec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    wsListener?.server.close();
    await f.dispose();
    await open(fake);
    for (const mode of ['required', 'auto'] as const) {
      for (const network of ['block', 'domains'] as const) {
        setting.mode = mode;
        setting.network = network;
        const info = await f.call(workspaceInfoTool, { workspace_id: 'proj' });
        const ex = info.execution as { isolation: { command_sandbox: { enabled: boolean; reason?: string }; unix_sockets: { blocked: boolean } }; process: { available: boolean } };
        assert.equal(ex.isolation.command_sandbox.enabled, true);
        assert.match(ex.isolation.command_sandbox.reason ?? '', /Unix-socket filter cannot be applied: .*Unknown option --seccomp.*codespace\.exec\.unixSockets "allow"/);
        assert.equal(ex.isolation.unix_sockets.blocked, false);
        assert.equal(ex.process.available, false);
        await assert.rejects(
          f.call(execCommandTool, { workspace_id: 'proj', command: ['true'], occupancy: 'shared' }),
          (err: unknown) => ToolError.is(err) && err.code === 'EXEC_DISABLED' && /Unix-socket filter/.test(err.message),
        );
      }
    }
    setting.unixSockets = 'allow';
    const r = await run(['sh', '-c', 'echo RAN']);
    assert.equal(r.out, 'RAN');
  });
});
