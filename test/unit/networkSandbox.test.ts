import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import { InMemoryLogger } from '../../src/base/logger';
import type { IsolationMode, NetworkMode } from '../../src/features/processes/node/sandbox/commandSandbox';
import { NET_DIR, RELAY_PORT } from '../../src/features/processes/node/sandbox/netBridge';
import { SandboxPlanError, bubblewrapArgs } from '../../src/features/processes/node/sandbox/bubblewrapArgs';
import type { SandboxPlan } from '../../src/features/processes/node/sandbox/bubblewrapArgs';
import { bwrapUnavailable } from './helpers/bwrap';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';
import type { StandIns } from './helpers/standInRegistry';
import { HTTP_NAME, PROXY_CLIENT, TLS_NAME, startStandIns } from './helpers/standInRegistry';

describe('bubblewrap argv for network domains (pure)', () => {
  const bridge = { socket: '/run/x/proxy.sock', relayScript: '/opt/ext/dist/netRelay.js', node: '/usr/bin/node', mkfifo: '/usr/bin/mkfifo' };
  const plan: SandboxPlan = { root: '/w/proj', cwd: '/w/proj', network: 'domains', netBridge: bridge, tty: false, protect: [], hide: [], emptyFile: '/run/cs/empty' };

  it('keeps the network namespace, binds the socket and the relay read-only into the private /tmp, sets the proxy variables', () => {
    const args = bubblewrapArgs(plan);
    assert.ok(args.includes('--unshare-net'));
    const at = (src: string): number => args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === src);
    assert.equal(args[at(bridge.socket) + 2], `${NET_DIR}/proxy.sock`);
    assert.equal(args[at(bridge.relayScript) + 2], `${NET_DIR}/relay.js`);
    assert.ok(at(bridge.socket) > args.indexOf('--tmpfs'), 'after the private /tmp is mounted');
    const env = new Map(args.flatMap((a, i) => (a === '--setenv' ? [[args[i + 1], args[i + 2]] as const] : [])));
    assert.equal(env.get('HTTPS_PROXY'), `http://127.0.0.1:${RELAY_PORT}`);
    assert.equal(env.get('http_proxy'), `http://127.0.0.1:${RELAY_PORT}`);
    assert.equal(env.get('NO_PROXY'), 'localhost,127.0.0.1,::1');
    assert.deepEqual(args.slice(-3), ['--chdir', '/w/proj', '--']);
  });

  it('binds the folder of a relay Node that lives under /tmp back into the private /tmp, read-only; no other', () => {
    const underTmp = { ...bridge, node: '/tmp/checkout/.vscode-test/node-24/bin/node' };
    const args = bubblewrapArgs({ ...plan, netBridge: underTmp });
    const at = args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === '/tmp/checkout/.vscode-test/node-24/bin');
    assert.ok(at > args.indexOf('--tmpfs'), 'bound after the private /tmp is mounted');
    assert.equal(args[at + 2], '/tmp/checkout/.vscode-test/node-24/bin');
    assert.equal(bubblewrapArgs(plan).filter((a) => a === '--ro-bind').length, args.filter((a) => a === '--ro-bind').length - 1, 'a Node outside /tmp adds no mount');
  });

  it('a relay Node under /tmp is there to run inside the real sandbox', function () {
    if (bwrapUnavailable()) this.skip();
    const tmp = fs.mkdtempSync(path.join('/tmp', 'codespace-relay-node-'));
    try {
      for (const d of ['ws', 'bin']) fs.mkdirSync(path.join(tmp, d));
      for (const f of ['proxy.sock', 'relay.js', 'empty']) fs.writeFileSync(path.join(tmp, f), '');
      const node = path.join(tmp, 'bin', 'node');
      fs.symlinkSync(process.execPath, node);
      const args = bubblewrapArgs({
        ...plan,
        root: path.join(tmp, 'ws'),
        cwd: path.join(tmp, 'ws'),
        emptyFile: path.join(tmp, 'empty'),
        netBridge: { ...bridge, socket: path.join(tmp, 'proxy.sock'), relayScript: path.join(tmp, 'relay.js'), node },
      });
      const r = spawnSync('bwrap', [...args, node, '-e', 'process.stdout.write(String(1 + 1))'], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.stdout, '2', `the Node under /tmp did not run inside: ${r.stderr}`);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('fails closed: a bridge without domains, domains without a bridge, a relative bridge path', () => {
    for (const bad of [{ ...plan, network: 'block' as const }, { ...plan, netBridge: undefined }, { ...plan, netBridge: { ...bridge, socket: 'proxy.sock' } }]) {
      assert.throws(() => bubblewrapArgs(bad), SandboxPlanError);
    }
  });
});

/**
 * `codespace.exec.network` `domains` with the real sandbox: commands keep a network namespace of their own, and
 * the only way out is the extension's proxy, which admits the allowed names. The stand-in registries listen on
 * 127.0.0.1 of this machine and are reachable only under their test names (a test-only map, no setting).
 */
describe('network by domain (real bwrap)', function () {
  this.timeout(60_000);
  let f: ProcessToolsFixture;
  let standIns: StandIns;
  let logger: InMemoryLogger;
  let setting: { mode: IsolationMode; network: NetworkMode; domains: string[] };

  before(async function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    standIns = await startStandIns();
  });

  after(async () => {
    await standIns?.close();
  });

  beforeEach(async () => {
    setting = { mode: 'auto', network: 'domains', domains: [HTTP_NAME, `*.${HTTP_NAME}`, 'localhost', '10.0.0.1'] };
    logger = new InMemoryLogger();
    f = await processToolsFixture({
      logger,
      isolation: { mode: () => setting.mode, network: () => setting.network, allowedDomains: () => setting.domains, testHosts: standIns.testHosts() },
    });
    fs.writeFileSync(path.join(f.root, 'client.js'), PROXY_CLIENT);
    fs.writeFileSync(path.join(f.root, 'ca.pem'), standIns.caPem);
  });

  afterEach(async () => {
    await f?.dispose();
  });

  async function run(command: string[], tty = false): Promise<{ out: string; exit_code?: number }> {
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command, tty, occupancy: 'shared' });
    const id = r.process_id as string;
    const out = (await f.readAll(id)).replace(/\r\n/g, '\n').trim();
    const st = await f.call(processStatusTool, { process_id: id });
    return { out, exit_code: st.exit_code as number | undefined };
  }

  const client = (mode: 'http' | 'https' | 'direct', target: string, p = '/', tty = false): Promise<{ out: string; exit_code?: number }> =>
    run([process.execPath, 'client.js', mode, target, p], tty);

  it('workspace_info reports the domains mode and the allow-list as applied (invalid entries left out, and logged)', async () => {
    const info = await f.call(workspaceInfoTool, { workspace_id: 'proj' });
    const ex = info.execution as { network: string; allowed_domains?: string[]; isolation: { command_sandbox: { enabled: boolean } } };
    assert.equal(ex.isolation.command_sandbox.enabled, true);
    assert.equal(ex.network, 'domains');
    assert.deepEqual(ex.allowed_domains, [HTTP_NAME, `*.${HTTP_NAME}`, 'localhost']);
    assert.ok(logger.lines.some((l) => l.includes('ignored "10.0.0.1" in codespace.exec.allowedDomains')), logger.lines.join('\n'));
    setting.network = 'block';
    const blocked = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })).execution as { network: string; allowed_domains?: string[] };
    assert.equal(blocked.network, 'blocked');
    assert.equal(blocked.allowed_domains, undefined);
  });

  for (const tty of [false, true]) {
    it(`an allowed name is reached through the proxy over plain HTTP (${tty ? 'pty' : 'pipes'})`, async () => {
      const r = await client('http', `${HTTP_NAME}:${standIns.httpPort}`, '/left-pad', tty);
      assert.equal(r.out, `STATUS 200 registry: GET /left-pad host=${HTTP_NAME}:${standIns.httpPort}`);
      assert.equal(r.exit_code, 0);
    });
  }

  it('an allowed name (by wildcard) is reached over HTTPS through a CONNECT tunnel, end to end TLS', async () => {
    const r = await client('https', `${TLS_NAME}:${standIns.tlsPort}`, '/simple/');
    assert.equal(r.out, 'TLS true secure registry: /simple/');
  });

  it('the proxy variables are set for the command, and point at the relay inside', async () => {
    const r = await run(['sh', '-c', 'echo "$HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY $npm_config_https_proxy"']);
    const url = `http://127.0.0.1:${RELAY_PORT}`;
    assert.equal(r.out, `${url} ${url} ${url} localhost,127.0.0.1,::1 ${url}`);
  });

  it('a name not on the list is refused with 403 naming the host and the setting, and the denial is logged', async () => {
    const plain = await client('http', 'denied.test:80', '/x');
    assert.match(plain.out, /^STATUS 403 CodeSpace network policy: HTTP denied\.test:80 denied\. denied\.test is not on the allow-list\./);
    assert.match(plain.out, /codespace\.exec\.allowedDomains/);
    const tunnel = await client('https', 'denied.test:443');
    assert.match(tunnel.out, /^STATUS 403 .*denied\.test is not on the allow-list/);
    assert.ok(logger.lines.some((l) => l.startsWith('[warn] [network] denied HTTP denied.test:80')), logger.lines.join('\n'));
    assert.ok(logger.lines.some((l) => l.startsWith('[warn] [network] denied CONNECT denied.test:443')));
  });

  it('raw IP addresses are refused, in every form a client can send', async () => {
    for (const [mode, target] of [
      ['http', `127.0.0.1:${standIns.httpPort}`],
      ['https', `127.0.0.1:${standIns.tlsPort}`],
      ['https', `[::1]:${standIns.tlsPort}`],
      ['https', `2130706433:${standIns.tlsPort}`],
      ['https', `0x7f.1:${standIns.tlsPort}`],
    ] as const) {
      const r = await client(mode, target);
      assert.match(r.out, /^STATUS 403 .*(is an IP address|not a valid host name)/, target);
    }
  });

  it('the MCP endpoint stays unreachable: not by a listed name that resolves to loopback, not by a test name on its port, not directly', async () => {
    const viaLocalhost = await client('https', `localhost:${standIns.endpointPort}`);
    assert.match(viaLocalhost.out, /^STATUS 403 .*localhost resolves to (127\.0\.0\.1|::1), loopback/);
    const viaTestName = await client('https', `${HTTP_NAME}:${standIns.endpointPort}`);
    assert.match(viaTestName.out, /^STATUS (403|502) /, 'the test map admits the stand-in port only');
    const direct = await client('direct', `127.0.0.1:${standIns.endpointPort}`);
    assert.equal(direct.out, 'ERROR ECONNREFUSED');
    assert.equal(standIns.endpointConnections(), 0);
  });

  it('a program that ignores the proxy variables gets no network: only the loopback of its own namespace', async () => {
    const direct = await client('direct', `127.0.0.1:${standIns.httpPort}`);
    assert.equal(direct.out, 'ERROR ECONNREFUSED', 'the stand-in on the host loopback is not there');
    const ifaces = await run(['sh', '-c', "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"]);
    assert.equal(ifaces.out, 'lo');
  });

  it('a relay that cannot start refuses commands with EXEC_DISABLED naming why; auto never runs them unsandboxed instead', async () => {
    await f.dispose();
    const broken = path.join(fs.realpathSync(os.tmpdir()), `codespace-broken-relay-${process.pid}.js`);
    fs.writeFileSync(broken, "process.stderr.write('relay exploded\\n'); process.exit(1);\n");
    try {
      f = await processToolsFixture({ logger, isolation: { mode: () => 'auto', network: () => 'domains', allowedDomains: () => [HTTP_NAME], relayScript: broken } });
      const info = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as { execution: { isolation: { command_sandbox: { enabled: boolean; reason?: string } }; process: { available: boolean }; network: string }; notes: string[] };
      assert.equal(info.execution.isolation.command_sandbox.enabled, true);
      assert.equal(info.execution.network, 'domains');
      assert.equal(info.execution.process.available, false);
      assert.match(info.execution.isolation.command_sandbox.reason ?? '', /network relay cannot start.*relay exploded/);
      assert.ok(info.notes.some((n) => /Commands are refused: .*relay exploded/.test(n)), info.notes.join('\n'));
      for (const tty of [false, true]) {
        await assert.rejects(
          f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'echo ran > ran.txt'], tty }),
          (err: unknown) => ToolError.is(err) && err.code === 'EXEC_DISABLED' && /relay exploded/.test(err.message),
        );
      }
      assert.equal(fs.existsSync(path.join(f.root, 'ran.txt')), false);
    } finally {
      fs.rmSync(broken, { force: true });
    }
  });
});
