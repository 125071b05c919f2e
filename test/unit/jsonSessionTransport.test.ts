import * as assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { JsonSessionTransport } from '../../src/mcp/jsonSessionTransport';
import { INIT_BODY, MCP_HEADERS, rawRequest } from './helpers/httpFixture';

/** One session's transport behind a bare node:http + express.json server, with a tool that waits until released. */
async function startEndpoint(): Promise<{
  port: number;
  transport: () => JsonSessionTransport | undefined;
  release: () => void;
  entered: () => Promise<void>;
  close(): Promise<void>;
}> {
  let transport: JsonSessionTransport | undefined;
  let server: McpServer | undefined;
  let release: () => void = () => undefined;
  let gate = new Promise<void>((r) => (release = r));
  let enteredResolve: () => void = () => undefined;
  let entered = new Promise<void>((r) => (enteredResolve = r));
  const app = express();
  app.use(express.json());
  app.all('/mcp', (req, res) => {
    void (async () => {
      if (!transport) {
        server = new McpServer({ name: 't', version: '1' });
        server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
        server.registerTool('wait', { inputSchema: {} }, async () => {
          enteredResolve();
          await gate;
          return { content: [{ type: 'text', text: 'released' }] };
        });
        transport = new JsonSessionTransport({ sessionIdGenerator: () => randomUUID() });
        await server.connect(transport);
      }
      await transport.handle(req, res, req.body);
    })();
  });
  const httpServer = http.createServer(app);
  const port = await new Promise<number>((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve((httpServer.address() as AddressInfo).port)));
  return {
    port,
    transport: () => transport,
    release: () => {
      release();
      gate = new Promise<void>((r) => (release = r));
      entered = new Promise<void>((r) => (enteredResolve = r));
    },
    entered: () => entered,
    close: async () => {
      release();
      await server?.close();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}

const rpc = (id: number | string, method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: '2.0', id, method, params });

describe('JsonSessionTransport (our Streamable HTTP server transport)', () => {
  let e: Awaited<ReturnType<typeof startEndpoint>>;
  let sid: string;
  const headers = () => ({ ...MCP_HEADERS, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
  const post = (body: unknown, extra: Record<string, string> = {}) => rawRequest(e.port, { headers: { ...headers(), ...extra }, body: JSON.stringify(body) });

  beforeEach(async () => {
    e = await startEndpoint();
    const init = await rawRequest(e.port, { headers: MCP_HEADERS, body: INIT_BODY });
    assert.equal(init.status, 200, init.body);
    assert.equal(init.headers['content-type'], 'application/json');
    sid = init.headers['mcp-session-id'] as string;
    assert.match(sid, /^[0-9a-f-]{36}$/);
    const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notified.status, 202);
    assert.equal(notified.body, '');
  });
  afterEach(() => e.close());

  it('answers a request with one JSON body carrying the session id, and keeps nothing once answered', async () => {
    const r = await post(rpc(7, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }));
    assert.equal(r.status, 200);
    assert.equal(r.headers['mcp-session-id'], sid);
    const body = JSON.parse(r.body) as { id: number; result: { content: { text: string }[] } };
    assert.equal(body.id, 7);
    assert.equal(body.result.content[0]?.text, 'hi');
    assert.equal(e.transport()?.pendingCount, 0);
  });

  it('sends an answer as bytes with their exact length, non-ASCII and large alike', async () => {
    for (const text of ['héllo 😀 "quoted" \\ \n', 'é'.repeat(40_000)]) {
      const r = await post(rpc(8, 'tools/call', { name: 'echo', arguments: { text } }));
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body, 'utf8'));
      assert.equal((JSON.parse(r.body) as { result: { content: { text: string }[] } }).result.content[0]?.text, text);
    }
  });

  it('answers a batch with an array in request order once every request is done', async () => {
    const r = await post([rpc('b', 'tools/call', { name: 'echo', arguments: { text: 'two' } }), { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }, rpc('a', 'tools/list')]);
    assert.equal(r.status, 200);
    const body = JSON.parse(r.body) as { id: string }[];
    assert.deepEqual(body.map((m) => m.id), ['b', 'a']);
    assert.equal(e.transport()?.pendingCount, 0);
  });

  it('refuses a request id already in flight, and duplicate ids in one batch', async () => {
    const first = post(rpc(1, 'tools/call', { name: 'wait', arguments: {} }));
    await e.entered();
    const again = await post(rpc(1, 'tools/list'));
    assert.equal(again.status, 400);
    assert.match(again.body, /already in flight/);
    const dup = await post([rpc(2, 'tools/list'), rpc(2, 'tools/list')]);
    assert.equal(dup.status, 400);
    e.release();
    assert.equal((await first).status, 200);
  });

  it('forgets the requests of a client that hung up; the late response goes nowhere', async () => {
    const req = http.request({ host: '127.0.0.1', port: e.port, method: 'POST', path: '/mcp', headers: headers(), agent: false });
    req.on('error', () => undefined);
    req.end(JSON.stringify(rpc(5, 'tools/call', { name: 'wait', arguments: {} })));
    await e.entered();
    assert.equal(e.transport()?.pendingCount, 1);
    req.destroy();
    for (let i = 0; i < 100 && e.transport()?.pendingCount !== 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(e.transport()?.pendingCount, 0);
    e.release();
    const next = await post(rpc(6, 'tools/list'));
    assert.equal(next.status, 200, 'the session still works');
  });

  it('DELETE ends the session and answers requests still running instead of leaving them hanging', async () => {
    const running = post(rpc(1, 'tools/call', { name: 'wait', arguments: {} }));
    await e.entered();
    const del = await rawRequest(e.port, { method: 'DELETE', headers: headers() });
    assert.equal(del.status, 200);
    const r = await running;
    assert.equal(r.status, 404);
    assert.match(r.body, /Session closed/);
    assert.equal(e.transport()?.isClosed, true);
    assert.equal((await post(rpc(2, 'tools/list'))).status, 404);
  });

  it('GET needs Accept: text/event-stream (else 406); other methods are 405', async () => {
    const get = await rawRequest(e.port, { method: 'GET', headers: { ...headers(), accept: 'application/json' } });
    assert.equal(get.status, 406);
    const put = await rawRequest(e.port, { method: 'PUT', headers: headers(), body: '{}' });
    assert.equal(put.status, 405);
    assert.equal(put.headers.allow, 'GET, POST, DELETE');
  });

  it('refuses bad Accept, Content-Type, protocol version, message shape, re-initialize and oversized batches', async () => {
    assert.equal((await post(rpc(1, 'tools/list'), { accept: 'text/html' })).status, 406);
    assert.equal((await post(rpc(1, 'tools/list'), { 'content-type': 'application/jsonx' })).status, 415);
    assert.equal((await post(rpc(1, 'tools/list'), { 'mcp-protocol-version': '1999-01-01' })).status, 400);
    const shape = await post({ hello: 'world' });
    assert.equal(shape.status, 400);
    assert.equal((JSON.parse(shape.body) as { error: { code: number } }).error.code, -32600);
    assert.equal((await post(JSON.parse(INIT_BODY))).status, 400);
    assert.equal((await post([])).status, 400);
    assert.equal((await post(Array.from({ length: 101 }, (_, i) => rpc(i, 'tools/list')))).status, 400);
    assert.equal((await post(rpc(1, 'tools/list'))).status, 200, 'the session is unharmed');
  });

  it('serves the SDK client: connect (its GET opens the event stream), concurrent calls, close', async () => {
    await e.close();
    e = await startEndpoint();
    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${e.port}/mcp`)));
    const texts = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `m${i}` } })));
    assert.deepEqual(texts.map((t) => (t.content as { text: string }[])[0]?.text), Array.from({ length: 20 }, (_, i) => `m${i}`));
    assert.equal(e.transport()?.pendingCount, 0);
    await client.close();
  });
});
