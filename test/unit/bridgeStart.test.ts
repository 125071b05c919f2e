// The bridge's start (src/bridge): it answers initialize and tools/list before any window exists, from the catalogue
// it ships with (the same definition the window serves), finds the window in the background, says when the window's
// list differs, and holds calls until the window is found (timeout, cancellation). Real bridge processes under real
// SDK clients, against real CodeSpace HTTP hosts publishing real discovery records.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import type { ShippedCatalogue } from '../../src/bridge/catalogueSource';
import { silentLogger } from '../../src/base/logger';
import { DISCOVERY_DIR_ENV } from '../../src/features/connect/node/discoveryFiles';
import { WindowPublisher } from '../../src/features/connect/node/windowPublisher';
import type { RunningHost } from './helpers/httpFixture';
import { MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';

const BRIDGE = path.join(__dirname, '..', '..', 'src', 'bridge', 'main.js');
const REPO_ROOT = path.join(__dirname, '..', '..', '..');
const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

/** apply_patch arguments adding one file. */
function addFile(file: string, line: string, key: string): Record<string, unknown> {
  return { workspace_id: 'demo', operation_key: key, expected_versions: {}, patch: `*** Begin Patch\n*** Add File: ${file}\n+${line}\n*** End Patch` };
}

/** A result without the server's version (the bridge ships its own; the test host says 0.0.0-test). */
function withoutVersion(result: unknown): unknown {
  return JSON.parse(JSON.stringify(result), (key, value: unknown) => (key === 'version' && typeof value === 'string' ? '<version>' : value));
}

/** One JSON-RPC answer from a host, 2025 era (after initialize, on its session) or 2026-07-28 (stateless). */
async function ask(host: RunningHost, method: string, era: 'legacy' | 'modern', session?: string, params: Record<string, unknown> = {}): Promise<{ result: unknown; session?: string }> {
  const headers: Record<string, string> = { ...MCP_HEADERS, authorization: `Bearer ${host.token.value}` };
  if (era === 'modern') Object.assign(headers, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });
  if (session) Object.assign(headers, { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: era === 'modern' ? { ...params, _meta: MODERN_META } : params });
  const r = await rawRequest(host.port, { headers, body });
  assert.equal(r.status, 200, r.body);
  const text = r.body.startsWith('{') ? r.body : (/^data: (.*)$/m.exec(r.body)?.[1] ?? '');
  const sid = r.headers['mcp-session-id'];
  return { result: (JSON.parse(text) as { result: unknown }).result, ...(typeof sid === 'string' ? { session: sid } : {}) };
}

describe('codespace-mcp bridge start: answers before the window is found', function () {
  this.timeout(180_000);
  let tmp: string;
  let dir: string;
  let root: string;
  const stops: (() => Promise<void>)[] = [];
  const stderr: string[] = [];

  async function openWindow(options: { disabledToolGroups?: () => readonly unknown[] } = {}): Promise<RunningHost> {
    const host = await startHost(root, 0, options);
    const publisher = new WindowPublisher({ server: host.host, folders: () => [root], token: () => host.token.value, publishToken: () => true, version: 't', logger: silentLogger, dir });
    publisher.refresh();
    stops.push(async () => {
      publisher.dispose();
      await host.stop();
    });
    return host;
  }

  function bridgeArgs(windowTimeout: number): string[] {
    return [BRIDGE, '--window-timeout', String(windowTimeout), '--reconnect-timeout', '30'];
  }

  async function legacyClient(windowTimeout = 120): Promise<Client> {
    const transport = new StdioClientTransport({ command: process.execPath, args: bridgeArgs(windowTimeout), cwd: root, env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: dir }, stderr: 'pipe' });
    transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
    const client = new Client({ name: 'bridge-start-test', version: '1' });
    await client.connect(transport);
    stops.push(() => client.close());
    return client;
  }

  async function modernClient(windowTimeout = 120): Promise<ClientV2> {
    const transport = new StdioClientTransportV2({ command: process.execPath, args: bridgeArgs(windowTimeout), cwd: root, env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: dir }, stderr: 'pipe' });
    transport.stderr?.on('data', (c: Buffer) => stderr.push(c.toString('utf8')));
    const client = new ClientV2({ name: 'bridge-start-test-2026', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport);
    stops.push(() => client.close());
    return client;
  }

  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bridge-start-')));
    dir = path.join(tmp, 'run', 'codespace');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    root = path.join(tmp, 'project');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'which.txt'), 'here');
    stderr.length = 0;
  });

  afterEach(async function () {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    if (this.currentTest?.state === 'failed') console.log(stderr.join(''));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the catalogue built into dist/stdio.js is what a window with the default tool groups serves, in both revisions', async () => {
    const generator = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'shippedCatalogue.mjs')).href)) as { generateShippedCatalogue(root: string): Promise<ShippedCatalogue> };
    const shipped = await generator.generateShippedCatalogue(REPO_ROOT);
    const host = await openWindow();
    const init = await ask(host, 'initialize', 'legacy', undefined, { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    const legacy = await ask(host, 'tools/list', 'legacy', init.session);
    const modern = await ask(host, 'tools/list', 'modern');
    assert.ok(shipped.tools.length > 20, `${shipped.tools.length} tools`);
    assert.deepEqual(shipped.tools, (legacy.result as { tools: unknown[] }).tools);
    assert.deepEqual(shipped.tools, (modern.result as { tools: unknown[] }).tools);
    assert.equal(shipped.serverInfo.version, (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('answers initialize, server/discover and tools/list with no window at all, exactly as the window then answers them (2025-11-25 and 2026-07-28)', async () => {
    const initParams = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } };
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: initParams },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { jsonrpc: '2.0', id: 3, method: 'server/discover', params: { _meta: MODERN_META } },
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: MODERN_META } },
    ];
    const answers = await rawBridge(requests, [1, 2, 3, 4]);
    assert.match(answers.stderr, /window not found yet|^$/, 'no window exists');

    // The window then found answers the same (its version aside).
    const host = await openWindow();
    const init = await ask(host, 'initialize', 'legacy', undefined, initParams);
    const windows = [init.result, (await ask(host, 'tools/list', 'legacy', init.session)).result, (await ask(host, 'server/discover', 'modern')).result, (await ask(host, 'tools/list', 'modern')).result];
    for (const [i, expected] of windows.entries()) assert.deepEqual(withoutVersion(answers.byId.get(i + 1)), withoutVersion(expected), `answer to ${JSON.stringify(requests.filter((r) => 'id' in r)[i])}`);
    assert.ok(((answers.byId.get(2) as { tools: { name: string }[] }).tools ?? []).some((t) => t.name === 'apply_patch'));

    // And an SDK client of either revision reads through the bridge once the window exists.
    for (const client of [await legacyClient(), await modernClient()]) {
      const read = (await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } })) as CallToolResult;
      assert.equal((read.structuredContent as { content: string }).content, 'here');
    }
  });

  it('a call made before the window exists waits for it and runs once; a window serving another list is announced with list_changed', async () => {
    const client = await legacyClient();
    const changed: number[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed.push(Date.now());
    });
    const shipped = await client.listTools();
    assert.ok(shipped.tools.some((t) => t.name === 'exec_command'));
    // Both made while no window exists: they wait.
    const patch = client.callTool({ name: 'apply_patch', arguments: addFile('made.txt', 'once', 'k-made') }) as Promise<CallToolResult>;
    const read = client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } }) as Promise<CallToolResult>;
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(fs.existsSync(path.join(root, 'made.txt')), false, 'nothing ran without a window');
    // The window has the process tools turned off.
    await openWindow({ disabledToolGroups: () => ['process'] });
    const patched = await patch;
    assert.notEqual(patched.isError, true, JSON.stringify(patched.content));
    assert.equal(((await read).structuredContent as { content: string }).content, 'here');
    assert.equal(fs.readFileSync(path.join(root, 'made.txt'), 'utf8'), 'once\n');
    for (let i = 0; i < 600 && changed.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(changed.length, 1, 'one tools/list_changed');
    const now = await client.listTools();
    assert.equal(now.tools.some((t) => t.name === 'exec_command'), false, "tools/list is the window's from then on");
    assert.ok(now.tools.some((t) => t.name === 'read'));
    // Sent once: a second Add File of the same path would have failed, and the ledger holds one operation.
    const again = (await client.callTool({ name: 'apply_patch', arguments: addFile('made.txt', 'twice', 'k-again') })) as CallToolResult;
    assert.match(JSON.stringify(again.content), /FILE_EXISTS/);
  });

  it('the same list is not announced: a window with the default groups sends no list_changed (2026-07-28 client, call waits then succeeds)', async () => {
    const client = await modernClient();
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed++;
    });
    await client.listTools();
    const read = client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } }) as Promise<CallToolResult>;
    await new Promise((r) => setTimeout(r, 1000));
    await openWindow();
    assert.equal(((await read).structuredContent as { content: string }).content, 'here');
    for (let i = 0; i < 100 && !/connected/.test(stderr.join('')); i++) await new Promise((r) => setTimeout(r, 100));
    await client.listTools();
    assert.equal(changed, 0);
    assert.doesNotMatch(stderr.join(''), /another tool list/);
  });

  it('a call that finds no window in time gets a clear error: what it waited for, how long, what to do', async () => {
    const client = await legacyClient(1);
    await client.listTools();
    await assert.rejects(
      client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } }),
      (e: unknown) =>
        e instanceof McpError &&
        e.code === -32030 &&
        e.message.includes(`waited 1 s for a window with a workspace folder containing the working directory ${root}`) &&
        /No VS Code window with CodeSpace has a workspace folder containing/.test(e.message) &&
        /Open VS Code \(with the CodeSpace extension\) on that folder, or check the discovery folder/.test(e.message) &&
        e.message.includes(dir),
    );
    // The next call looks again, and finds the window opened since.
    await openWindow();
    const r = (await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } })) as CallToolResult;
    assert.equal((r.structuredContent as { content: string }).content, 'here');
  });

  it('a call cancelled while it waits for the window is never sent', async () => {
    const client = await legacyClient();
    await client.listTools();
    const abort = new AbortController();
    const cancelled = client.callTool({ name: 'apply_patch', arguments: addFile('cancelled.txt', 'no', 'k-cancelled') }, undefined, { signal: abort.signal });
    await new Promise((r) => setTimeout(r, 500));
    abort.abort('changed my mind');
    await assert.rejects(cancelled);
    for (let i = 0; i < 100 && !/cancelled while it waited/.test(stderr.join('')); i++) await new Promise((r) => setTimeout(r, 100));
    assert.match(stderr.join(''), /a request cancelled while it waited for the window was not sent/);
    await openWindow();
    // A later patch, after the cancelled one in the same queue, is written: the cancelled one never was.
    const later = (await client.callTool({ name: 'apply_patch', arguments: addFile('later.txt', 'yes', 'k-later') })) as CallToolResult;
    assert.notEqual(later.isError, true, JSON.stringify(later.content));
    assert.equal(fs.existsSync(path.join(root, 'cancelled.txt')), false);
  });
});

/** Writes the requests to a fresh bridge with no window (an empty discovery folder) and reads the answers. */
async function rawBridge(requests: readonly object[], ids: readonly number[]): Promise<{ byId: Map<number, unknown>; stderr: string }> {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bridge-none-'));
  const child = spawn(process.execPath, [BRIDGE, '--window-timeout', '60'], { cwd: empty, env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: path.join(empty, 'discovery') }, stdio: ['pipe', 'pipe', 'pipe'] });
  const byId = new Map<number, unknown>();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      let buffer = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        buffer += c;
        for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
          const m = JSON.parse(buffer.slice(0, end)) as { id?: number; result?: unknown; error?: unknown };
          buffer = buffer.slice(end + 1);
          if (m.error) reject(new Error(JSON.stringify(m)));
          if (typeof m.id === 'number') byId.set(m.id, m.result);
          if (ids.every((id) => byId.has(id))) resolve();
        }
      });
      child.once('exit', () => reject(new Error(`the bridge exited: ${stderr}`)));
      for (const r of requests) child.stdin.write(`${JSON.stringify(r)}\n`);
    });
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(empty, { recursive: true, force: true });
  }
  return { byId, stderr };
}
