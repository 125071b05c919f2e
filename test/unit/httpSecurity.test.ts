import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { secretsEqual } from '../../src/base/node/httpRequest';
import type { RunningHost } from './helpers/httpFixture';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

describe('HTTP endpoint security (real port on 127.0.0.1)', function () {
  this.timeout(60000);
  let root: string;
  let h: RunningHost;
  const auth = () => ({ ...MCP_HEADERS, authorization: `Bearer ${h.token.value}` });
  const host = () => `127.0.0.1:${h.port}`;

  async function initSession(): Promise<string> {
    const r = await rawRequest(h.port, { headers: { ...auth(), host: host() }, body: INIT_BODY });
    assert.equal(r.status, 200, r.body);
    const id = r.headers['mcp-session-id'];
    assert.equal(typeof id, 'string');
    return id as string;
  }

  before(async () => {
    root = await makeTree({ 'hello.txt': 'hi\n' }, 'codespace-http-');
    h = await startHost(root);
  });
  after(async () => {
    await h.stop();
    await removeTree(root);
  });

  it('listens on 127.0.0.1 only; other loopback addresses are refused', async () => {
    const refused = (address: string) =>
      new Promise<boolean>((resolve) => {
        const s = net.connect({ host: address, port: h.port });
        s.once('connect', () => { s.destroy(); resolve(false); });
        s.once('error', () => resolve(true));
      });
    assert.equal(await refused('::1'), true);
    assert.equal(await refused('127.0.0.2'), true);
    assert.equal(await refused('127.0.0.1'), false);
  });

  for (const badHost of ['evil.example:PORT', '0.0.0.0:PORT', '127.0.0.1:1', 'localhost.evil.example:PORT']) {
    for (const withOrigin of [false, true]) {
      it(`Host ${badHost}${withOrigin ? ' with an Origin' : ''} → 403 before any handler`, async () => {
        const headers: Record<string, string> = { ...auth(), host: badHost.replace('PORT', String(h.port)) };
        if (withOrigin) headers.origin = 'http://evil.example';
        const before = h.host.sessionCount;
        const r = await rawRequest(h.port, { headers, body: INIT_BODY });
        assert.equal(r.status, 403);
        assert.equal(h.host.sessionCount, before);
      });
    }
  }

  it('accepts Host localhost:PORT and [::1]:PORT spellings of the loopback', async () => {
    for (const hh of [`localhost:${h.port}`, `[::1]:${h.port}`]) {
      const r = await rawRequest(h.port, { headers: { ...auth(), host: hh }, body: INIT_BODY });
      assert.equal(r.status, 200, hh);
    }
  });

  for (const origin of ['http://evil.example', 'null', 'http://127.0.0.1:1', `http://localhost:${1}`, 'vscode-webview://abc']) {
    it(`Origin ${origin} → 403 even with a valid token`, async () => {
      const r = await rawRequest(h.port, { headers: { ...auth(), host: host(), origin }, body: INIT_BODY });
      assert.equal(r.status, 403);
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    });
  }

  it('OPTIONS preflight from a foreign origin gets no Access-Control-Allow-Origin', async () => {
    const r = await rawRequest(h.port, { method: 'OPTIONS', headers: { host: host(), origin: 'http://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });
    assert.ok(r.status >= 400);
    assert.equal(r.headers['access-control-allow-origin'], undefined);
  });

  const badAuth: [string, (t: string) => Record<string, string>, string?][] = [
    ['no token', () => ({})],
    ['wrong token of the same length', (t) => ({ authorization: `Bearer ${'x'.repeat(t.length)}` })],
    ['a shorter token (prefix)', (t) => ({ authorization: `Bearer ${t.slice(0, -1)}` })],
    ['a longer token', (t) => ({ authorization: `Bearer ${t}x` })],
    ['Basic auth', (t) => ({ authorization: `Basic ${Buffer.from(`u:${t}`).toString('base64')}` })],
    ['lower-case scheme with extra spaces', (t) => ({ authorization: `bearer  ${t}` })],
    ['the token in the query string', () => ({}), '/mcp?token=TOKEN&access_token=TOKEN'],
  ];
  for (const [name, headers, pathTemplate] of badAuth) {
    it(`${name} → 401 with WWW-Authenticate: Bearer, no session, token not echoed`, async () => {
      const before = h.host.sessionCount;
      const r = await rawRequest(h.port, {
        path: (pathTemplate ?? '/mcp').replace(/TOKEN/g, h.token.value),
        headers: { ...MCP_HEADERS, host: host(), ...headers(h.token.value) },
        body: INIT_BODY,
      });
      assert.equal(r.status, 401);
      assert.match(String(r.headers['www-authenticate']), /^Bearer /);
      assert.equal(r.headers['mcp-session-id'], undefined);
      assert.equal(h.host.sessionCount, before);
      assert.ok(!r.body.includes(h.token.value));
    });
  }

  it('compares tokens correctly (constant-time helper)', () => {
    assert.equal(secretsEqual('abc', 'abc'), true);
    assert.equal(secretsEqual('abd', 'abc'), false);
    assert.equal(secretsEqual('ab', 'abc'), false);
    assert.equal(secretsEqual('', 'abc'), false);
  });

  it('a valid session id without the token → 401 (a session is not authentication)', async () => {
    const id = await initSession();
    const r = await rawRequest(h.port, { headers: { ...MCP_HEADERS, host: host(), 'mcp-session-id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(r.status, 401);
  });

  it('unknown or deleted session → 404; non-initialize without a session → 400', async () => {
    const unknown = await rawRequest(h.port, { headers: { ...auth(), host: host(), 'mcp-session-id': '00000000-0000-4000-8000-000000000000', 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(unknown.status, 404);
    const id = await initSession();
    const del = await rawRequest(h.port, { method: 'DELETE', headers: { ...auth(), host: host(), 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(del.status, 200);
    const after = await rawRequest(h.port, { headers: { ...auth(), host: host(), 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
    assert.equal(after.status, 404);
    const noSession = await rawRequest(h.port, { headers: { ...auth(), host: host() }, body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }) });
    assert.equal(noSession.status, 400);
  });

  it('unsupported MCP-Protocol-Version → 400', async () => {
    const id = await initSession();
    const r = await rawRequest(h.port, { headers: { ...auth(), host: host(), 'mcp-session-id': id, 'mcp-protocol-version': '1999-01-01' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    assert.equal(r.status, 400);
  });

  it('a browser "simple request" (text/plain POST) changes nothing', async () => {
    const before = h.host.sessionCount;
    const r = await rawRequest(h.port, { headers: { host: host(), 'content-type': 'text/plain', authorization: `Bearer ${h.token.value}`, accept: 'application/json, text/event-stream' }, body: INIT_BODY });
    assert.ok(r.status >= 400, String(r.status));
    assert.equal(h.host.sessionCount, before);
  });

  it('session ids are random UUIDs, unique over 1,000 sessions', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 1000; i++) ids.add(await initSession());
    assert.equal(ids.size, 1000);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(h.host.sessionCount <= 64, 'open sessions stay bounded');
  });

  it('a real SDK client connects with the token, lists tools and reads a file', async () => {
    const client = new Client({ name: 'unit-http', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token.value}` } } });
    await client.connect(transport);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'read'));
    const r = await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'hello.txt' } });
    assert.equal((r.structuredContent as { content: string }).content, 'hi\n');
    await client.close();
  });

  it('after rotating the token, the old one is refused', async () => {
    const old = h.token.value;
    h.token.value = 'N'.repeat(43);
    try {
      const r = await rawRequest(h.port, { headers: { ...MCP_HEADERS, host: host(), authorization: `Bearer ${old}` }, body: INIT_BODY });
      assert.equal(r.status, 401);
      const ok = await rawRequest(h.port, { headers: { ...MCP_HEADERS, host: host(), authorization: `Bearer ${h.token.value}` }, body: INIT_BODY });
      assert.equal(ok.status, 200);
    } finally {
      h.token.value = old;
    }
  });

  it('closing the sessions twice at once (a rotation: the command and the token\'s change event) leaves both eras serving', async () => {
    const old = await initSession();
    await Promise.all([h.host.closeSessions(), h.host.closeSessions(), h.host.closeSessions()]);
    const gone = await rawRequest(h.port, { headers: { ...auth(), host: host(), 'mcp-session-id': old }, body: '{"jsonrpc":"2.0","id":2,"method":"ping"}' });
    assert.equal(gone.status, 404, 'the old session is closed');
    await initSession();
    const modern = new ClientV2({ name: 'after-close', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new TransportV2(new URL(`http://127.0.0.1:${h.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${h.token.value}` } } }));
    try {
      const r = await modern.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'hello.txt' } });
      assert.equal((r.structuredContent as { content: string }).content, 'hi\n');
    } finally {
      await modern.close();
    }
  });

  it('falls back to a system-chosen port when the preferred one is taken', async () => {
    const second = await startHost(root, h.port);
    try {
      assert.notEqual(second.port, h.port);
      assert.equal(second.host.state.kind === 'running' && second.host.state.fellBack, true);
    } finally {
      await second.stop();
    }
  });

  it('answers unknown paths with 404 and bad JSON with a parse error, never a stack trace', async () => {
    const nf = await rawRequest(h.port, { path: '/other', headers: { ...auth(), host: host() }, body: '{}' });
    assert.equal(nf.status, 404);
    const bad = await rawRequest(h.port, { headers: { ...auth(), host: host() }, body: '{not json' });
    assert.equal(bad.status, 400);
    assert.ok(!/at .*\.js:\d+/.test(bad.body), bad.body);
  });
});
