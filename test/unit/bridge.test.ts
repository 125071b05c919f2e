// The codespace-mcp stdio bridge, run as its own process (out/src/bridge/main.js) under a real MCP SDK client,
// against real CodeSpace HTTP hosts that publish real discovery records.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { silentLogger } from '../../src/base/logger';
import type { ServerControl, ServerState } from '../../src/kernel/serverControl';
import { DISCOVERY_DIR_ENV, discoveryDir } from '../../src/features/connect/node/discoveryFiles';
import { WindowPublisher } from '../../src/features/connect/node/windowPublisher';
import { exactEnvClient } from './helpers/exactEnvClient';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';

const BRIDGE = path.join(__dirname, '..', '..', 'src', 'bridge', 'main.js');

interface Window {
  readonly host: RunningHost;
  readonly publisher: WindowPublisher;
  close(): Promise<void>;
}

describe('codespace-mcp bridge', function () {
  this.timeout(120_000);
  let tmp: string;
  let runtime: string;
  let dir: string;
  let rootA: string;
  let rootB: string;
  const windows: Window[] = [];
  const clients: Client[] = [];
  const stderr: string[] = [];

  async function openWindow(root: string, port = 0, publishToken = true, publishIn = dir): Promise<Window> {
    const host = await startHost(root, port);
    const publisher = new WindowPublisher({ server: host.host, folders: () => [root], token: () => host.token.value, publishToken: () => publishToken, version: 't', logger: silentLogger, dir: publishIn });
    publisher.refresh();
    const w: Window = {
      host,
      publisher,
      close: async () => {
        publisher.dispose();
        await host.stop();
      },
    };
    windows.push(w);
    return w;
  }

  async function bridgeClient(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE, '--reconnect-timeout', '30', '--window-timeout', '2', ...args],
      cwd: options.cwd ?? tmp,
      env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: dir, ...options.env },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
    const client = new Client({ name: 'bridge-test', version: '1' });
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  /** The bridge starts (it answers initialize itself); its first call gets the error `matches`. */
  async function firstCallFails(args: string[], options: { cwd?: string; env?: Record<string, string> }, matches: (e: unknown) => boolean, label?: string): Promise<void> {
    const client = await bridgeClient(args, options);
    await assert.rejects(client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } }), (e: unknown) => e instanceof McpError && e.code === -32030 && matches(e), label);
  }

  async function readText(client: Client, file: string): Promise<string> {
    const r = (await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: file } })) as CallToolResult;
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    return (r.structuredContent as { content: string }).content;
  }

  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bridge-')));
    runtime = path.join(tmp, 'run');
    fs.mkdirSync(runtime, { mode: 0o700 });
    dir = path.join(runtime, 'codespace');
    rootA = path.join(tmp, 'alpha');
    rootB = path.join(tmp, 'beta');
    for (const [root, text] of [[rootA, 'alpha'], [rootB, 'beta']] as const) {
      fs.mkdirSync(path.join(root, 'src'), { recursive: true });
      fs.writeFileSync(path.join(root, 'which.txt'), text);
    }
    stderr.length = 0;
  });

  afterEach(async function () {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await Promise.allSettled(windows.splice(0).map((w) => w.close()));
    if (this.currentTest?.state === 'failed') console.log(stderr.join(''));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('carries 2026-07-28 requests: a v2 client negotiating the modern era over stdio reads through the bridge', async () => {
    await openWindow(rootA);
    const transport = new StdioClientTransportV2({ command: process.execPath, args: [BRIDGE, '--reconnect-timeout', '30'], cwd: rootA, env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: dir }, stderr: 'pipe' });
    transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
    const client = new ClientV2({ name: 'bridge-test-2026', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await client.connect(transport);
      assert.equal(client.getProtocolEra(), 'modern');
      const r = (await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } })) as CallToolResult;
      assert.equal((r.structuredContent as { content: string }).content, 'alpha');
      // No session was opened for it on the window.
      assert.equal(windows[0]?.host.host.sessionCount, 0);
    } finally {
      await client.close();
    }
  });

  it('picks the window by --workspace, by the working directory and by the terminal environment', async () => {
    const a = await openWindow(rootA);
    const b = await openWindow(rootB);
    assert.notEqual(a.host.port, b.host.port);
    assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.json')).length, 2, 'two windows, two records');

    const byPath = await bridgeClient(['--workspace', path.join(rootB, 'src')]);
    assert.equal(await readText(byPath, 'which.txt'), 'beta');
    const tools = await byPath.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'apply_patch'), 'the same tools as over HTTP');
    assert.equal(tools.tools.find((t) => t.name === 'read')?.annotations?.readOnlyHint, true);

    const byCwd = await bridgeClient([], { cwd: rootA });
    assert.equal(await readText(byCwd, 'which.txt'), 'alpha');

    // A terminal of window B, with the working directory in A: the environment names the window.
    const byEnv = await bridgeClient([], { cwd: rootA, env: { CODESPACE_MCP_URL: `http://127.0.0.1:${b.host.port}/mcp`, CODESPACE_MCP_TOKEN: b.host.token.value } });
    assert.equal(await readText(byEnv, 'which.txt'), 'beta');

    // Closing a window removes its record.
    await a.close();
    assert.equal(fs.readdirSync(dir).filter((n) => n.endsWith('.json')).length, 1);
  });

  it('says clearly when no window matches and when several do', async () => {
    await openWindow(rootA);
    await firstCallFails(['--workspace', rootB], {}, (e) => /No VS Code window with CodeSpace has a workspace folder containing .*beta/.test((e as Error).message));
    await openWindow(rootA);
    await firstCallFails(['--workspace', rootA], {}, (e) => /2 VS Code windows have a workspace folder containing/.test((e as Error).message));
  });

  it('without a token file, only a client with the terminal environment gets in, and a stripped token is named as such', async () => {
    const w = await openWindow(rootA, 0, false);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.token')), [], 'no token file published');
    const url = `http://127.0.0.1:${w.host.port}/mcp`;
    // Nothing of the terminal reached the bridge (not started from one, or an agent such as Codex dropped it all).
    await firstCallFails(
      ['--workspace', rootA],
      {},
      (e) => /publishes no token file \(codespace\.discovery\.tokenFile is off\)\. Neither CODESPACE_MCP_URL nor CODESPACE_MCP_TOKEN reached the bridge.*Codex: env_vars = \["CODESPACE_MCP_URL", "CODESPACE_MCP_TOKEN"\]/.test((e as Error).message),
    );
    // Started from the window's terminal, but the agent removed the *_TOKEN variable (Gemini CLI): said as such,
    // whichever way the bridge finds the window.
    for (const args of [[], ['--workspace', rootA]]) {
      await firstCallFails(
        args,
        { cwd: rootA, env: { CODESPACE_MCP_URL: url } },
        (e) => /CODESPACE_MCP_URL reached the bridge but CODESPACE_MCP_TOKEN did not: the agent was started from a VS Code terminal and removed the token.*Turn codespace\.discovery\.tokenFile on.*Gemini CLI: "env": \{"CODESPACE_MCP_URL": "\$CODESPACE_MCP_URL", "CODESPACE_MCP_TOKEN": "\$CODESPACE_MCP_TOKEN"\}/.test((e as Error).message),
        JSON.stringify(args),
      );
    }
    // A terminal's URL that no record names (a window whose records this user cannot see), its token dropped.
    await firstCallFails([], { cwd: rootA, env: { CODESPACE_MCP_URL: 'http://127.0.0.1:1/mcp' } }, (e) =>
      /No CodeSpace window record matches http:\/\/127\.0\.0\.1:1\/mcp, so its token file cannot be read\. CODESPACE_MCP_URL reached the bridge but CODESPACE_MCP_TOKEN did not/.test((e as Error).message),
    );
    const withEnv = await bridgeClient([], { cwd: rootA, env: { CODESPACE_MCP_URL: url, CODESPACE_MCP_TOKEN: w.host.token.value } });
    assert.equal(await readText(withEnv, 'which.txt'), 'alpha');
  });

  it('finds its window from the user alone: under Codex\'s reduced environment with another TMPDIR, and under an empty one', async () => {
    // The window publishes where the extension host computes from its own environment (a desktop session has
    // XDG_RUNTIME_DIR and maybe TMPDIR); the agent gives the bridge another environment.
    const otherTmp = path.join(tmp, 'agent-tmp');
    fs.mkdirSync(otherTmp);
    const windowDir = discoveryDir({ env: { XDG_RUNTIME_DIR: runtime, TMPDIR: path.join(tmp, 'window-tmp') } });
    await openWindow(rootA, 0, true, windowDir);
    const user = os.userInfo();
    // Exactly what Codex gives an MCP server (HOME LANG LOGNAME PATH SHELL TERM TMPDIR USER), in its working directory.
    const codexEnv = { HOME: user.homedir, LANG: 'C.UTF-8', LOGNAME: user.username, PATH: process.env.PATH ?? '/usr/bin:/bin', SHELL: '/bin/sh', TERM: 'xterm', TMPDIR: otherTmp, USER: user.username };
    for (const [label, env, args] of [
      ['codex', codexEnv, []],
      ['empty', {}, ['--workspace', rootA]],
      ['empty, by cwd', {}, []],
    ] as const) {
      const c = await exactEnvClient(process.execPath, [BRIDGE, ...args], { env: { ...env }, cwd: rootA });
      try {
        const r = (await c.client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } })) as CallToolResult;
        assert.equal((r.structuredContent as { content: string }).content, 'alpha', `${label}: ${c.stderr.join('')}`);
      } finally {
        await c.close();
      }
    }
  });

  it('keeps the client session across a window reload that changes the port, and across a token rotation', async () => {
    const first = await openWindow(rootA);
    const client = await bridgeClient(['--workspace', rootA]);
    assert.equal(await readText(client, 'which.txt'), 'alpha');
    const oldPort = first.host.port;

    // The window reloads: its endpoint and record go away; another server takes the old port meanwhile (it knows
    // no session: 404), so the reloaded window gets another port.
    await first.close();
    const squatter = http.createServer((_req, res) => res.writeHead(404).end('not here'));
    await new Promise<void>((resolve) => squatter.listen(oldPort, '127.0.0.1', resolve));
    try {
      const pending = readText(client, 'which.txt');
      await new Promise((r) => setTimeout(r, 1500));
      const second = await openWindow(rootA, oldPort);
      assert.notEqual(second.host.port, oldPort, 'the reloaded window listens on another port');
      assert.equal(await pending, 'alpha', 'a call made while the window was away completes on the new one');
      assert.equal(await readText(client, 'which.txt'), 'alpha');
      assert.match(stderr.join(''), /session re-initialized/);

      // Token rotation: sessions closed, new token published; the bridge reconnects with it.
      second.host.token.value = 'N'.repeat(43);
      second.publisher.refresh();
      await second.host.host.closeSessions();
      assert.equal(await readText(client, 'which.txt'), 'alpha');
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it('resends an in-flight read whose answer was lost, and reports an in-flight command as unknown', async () => {
    const w = await openWindow(rootA);
    // A relay in front of the window that forwards a request, lets the window answer, then cuts the connection
    // before the answer reaches the bridge: the request ran, its answer is lost.
    let cut = new Set<string>();
    const relay = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const tool = /"name":"([a-z_]+)"/.exec(body.toString('utf8'))?.[1];
        const up = http.request({ host: '127.0.0.1', port: w.host.port, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${w.host.port}` } }, (ures) => {
          if (req.method === 'GET') {
            // The session's event stream (server-sent events) never ends: relay it as it comes.
            res.writeHead(ures.statusCode ?? 500, ures.headers);
            ures.pipe(res);
            return;
          }
          const out: Buffer[] = [];
          ures.on('data', (c: Buffer) => out.push(c));
          ures.on('end', () => {
            if (tool && cut.has(tool)) {
              cut.delete(tool);
              req.socket.destroy();
              return;
            }
            res.writeHead(ures.statusCode ?? 500, ures.headers);
            res.end(Buffer.concat(out));
          });
        });
        up.end(body);
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayPort = (relay.address() as AddressInfo).port;
    const state: ServerState = { kind: 'running', port: relayPort, fellBack: false };
    const relayControl = { state, sessionCount: 0, onDidChangeState: () => ({ dispose() {} }) } as unknown as ServerControl;
    // The window's own record goes; the relay's takes its place.
    w.publisher.dispose();
    const relayed = new WindowPublisher({ server: relayControl, folders: () => [rootA], token: () => w.host.token.value, publishToken: () => true, version: 't', logger: silentLogger, dir });
    relayed.refresh();
    try {
      const client = await bridgeClient(['--workspace', rootA]);
      await client.listTools();
      cut = new Set(['read']);
      assert.equal(await readText(client, 'which.txt'), 'alpha', 'a read is safe to resend');

      cut = new Set(['exec_command']);
      await assert.rejects(
        client.callTool({ name: 'exec_command', arguments: { workspace_id: 'demo', command: ['sh', '-c', 'echo ran >> marker.txt'] } }),
        (e: unknown) => e instanceof McpError && e.code === -32031 && /may or may not have run/.test(e.message),
      );
      for (let i = 0; i < 100 && !fs.existsSync(path.join(rootA, 'marker.txt')); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(fs.readFileSync(path.join(rootA, 'marker.txt'), 'utf8'), 'ran\n', 'the command ran once and was not resent');
      assert.equal(await readText(client, 'which.txt'), 'alpha', 'the session goes on');
    } finally {
      relayed.dispose();
      relay.closeAllConnections();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });
});
