import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { RawResponse, RunningHost } from './helpers/httpFixture';
import { silentLogger } from '../../src/base/logger';
import { McpHttpHost } from '../../src/mcp/httpHost';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

/** A request whose body is sent in pieces (Transfer-Encoding: chunked), `total` bytes of `fill`. */
function chunkedRequest(port: number, path: string, headers: Record<string, string>, total: number, fill: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    // Both paths read what is sent after the limit and drop it, so the client never meets a closed connection.
    req.on('error', reject);
    const piece = Buffer.alloc(1024 * 1024, fill);
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/**
 * The HTTP host serves a plain /mcp request on its own listener and hands everything else to an express app. Both
 * must give the same answer to the same request: each case is sent to `/mcp` (the listener) and to `/mcp?via=app`
 * (the express app, which routes on the path alone), and the two answers are compared.
 */
describe('HTTP host: the /mcp listener and the express app answer alike', function () {
  this.timeout(60000);
  let root: string;
  let h: RunningHost;
  const host = () => `127.0.0.1:${h.port}`;
  const auth = () => ({ ...MCP_HEADERS, authorization: `Bearer ${h.token.value}`, host: host() });

  before(async () => {
    root = await makeTree({ 'hello.txt': 'hi\n' }, 'codespace-body-');
    h = await startHost(root);
  });
  after(async () => {
    await h.stop();
    await removeTree(root);
  });

  const both = async (send: (path: string) => Promise<RawResponse>): Promise<[RawResponse, RawResponse]> => [await send('/mcp'), await send('/mcp?via=app')];
  const rpcError = (r: RawResponse) => (JSON.parse(r.body) as { error: { code: number; message: string } }).error;

  const cases: [string, () => { method?: string; headers: Record<string, string>; body?: string }, number, number | undefined][] = [
    ['no token', () => ({ headers: { ...MCP_HEADERS, host: host() }, body: INIT_BODY }), 401, -32001],
    ['a foreign Host', () => ({ headers: { ...auth(), host: `evil.example:${h.port}` }, body: INIT_BODY }), 403, -32000],
    ['an Origin', () => ({ headers: { ...auth(), origin: 'http://evil.example' }, body: INIT_BODY }), 403, -32000],
    ['Sec-Fetch-Site: cross-site', () => ({ headers: { ...auth(), 'sec-fetch-site': 'cross-site' }, body: INIT_BODY }), 403, -32000],
    ['a body that is not JSON', () => ({ headers: auth(), body: '{not json' }), 400, -32700],
    ['a JSON string (strict: objects and arrays only)', () => ({ headers: auth(), body: '"initialize"' }), 400, -32700],
    ['a body of white space', () => ({ headers: auth(), body: ' \n\t ' }), 400, -32700],
    // express.json reads an empty body as {}: no JSON-RPC message, so the 2026-era handler refuses it as such.
    ['an empty body', () => ({ headers: { ...auth(), 'content-length': '0' }, body: '' }), 400, -32600],
    ['a text/plain body (a browser simple request)', () => ({ headers: { ...auth(), 'content-type': 'text/plain' }, body: INIT_BODY }), 400, -32000],
    ['a GET without a session', () => ({ method: 'GET', headers: { ...auth(), accept: 'text/event-stream' } }), 400, -32000],
    ['a DELETE of an unknown session', () => ({ method: 'DELETE', headers: { ...auth(), 'mcp-session-id': 'nope' } }), 404, -32001],
    ['a body over the 32 MiB limit, its length declared', () => ({ headers: auth(), body: ' '.repeat(33 * 1024 * 1024) }), 413, -32603],
    ['initialize, with the charset spelled out', () => ({ headers: { ...auth(), 'content-type': 'application/json; charset=UTF-8' }, body: INIT_BODY }), 200, undefined],
  ];
  for (const [name, make, status, code] of cases) {
    it(`${name} → ${status}${code === undefined ? '' : ` (${code})`} on both paths`, async () => {
      const before = h.host.sessionCount;
      const [listener, app] = await both((path) => {
        const { method, headers, body } = make();
        return rawRequest(h.port, { ...(method ? { method } : {}), path, headers, ...(body !== undefined ? { body } : {}) });
      });
      for (const [which, r] of [['listener', listener], ['app', app]] as const) {
        assert.equal(r.status, status, `${which}: ${r.body}`);
        if (code !== undefined) assert.equal(rpcError(r).code, code, which);
        assert.ok(!/at .*\.js:\d+/.test(r.body), `${which} leaked a stack: ${r.body}`);
      }
      if (code !== undefined) assert.equal(rpcError(listener).message, rpcError(app).message);
      if (status === 401) assert.equal(listener.headers['www-authenticate'], app.headers['www-authenticate']);
      if (status === 200) assert.equal(h.host.sessionCount, before + 2);
      else assert.equal(h.host.sessionCount, before);
    });
  }

  it('a chunked body that grows past the limit → 413 on both paths', async () => {
    const [listener, app] = await both((path) => chunkedRequest(h.port, path, { ...auth(), 'transfer-encoding': 'chunked' }, 40 * 1024 * 1024, ' '));
    for (const r of [listener, app]) {
      assert.equal(r.status, 413, r.body);
      assert.equal(rpcError(r).code, -32603);
      assert.match(rpcError(r).message, /too large/);
    }
  });

  it('a gzip-compressed initialize is handed to the express app, which inflates it', async () => {
    const body = gzipSync(INIT_BODY);
    const r = await new Promise<RawResponse>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: h.port, method: 'POST', path: '/mcp', headers: { ...auth(), 'content-encoding': 'gzip', 'content-length': String(body.length) }, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(r.status, 200, r.body);
    assert.equal(typeof r.headers['mcp-session-id'], 'string');
  });

  it('a body with a byte order mark is read as its JSON', async () => {
    const r = await rawRequest(h.port, { headers: auth(), body: `\uFEFF${INIT_BODY}` });
    assert.equal(r.status, 200, r.body);
  });

  it('a client that hangs up mid-body leaves nothing behind and the listener goes on serving', async () => {
    const before = h.host.sessionCount;
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: h.port, method: 'POST', path: '/mcp', headers: { ...auth(), 'content-length': '1000' }, agent: false });
      req.on('error', () => resolve());
      req.write('{"jsonrpc":');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50);
    });
    const r = await rawRequest(h.port, { headers: auth(), body: INIT_BODY });
    assert.equal(r.status, 200, r.body);
    assert.equal(h.host.sessionCount, before + 1);
  });
});

describe('HTTP host: a check that throws', function () {
  this.timeout(30000);

  it('answers 500 on both paths, logs it, and the host goes on serving', async () => {
    const errors: string[] = [];
    let broken = true;
    const host = new McpHttpHost({
      createServer: () => {
        throw new Error('unused');
      },
      token: () => {
        if (broken) throw new Error('the token store failed');
        return 'T'.repeat(43);
      },
      logger: { ...silentLogger, error: (m: string | Error) => void errors.push(String(m)) },
    });
    const port = await host.start(0);
    try {
      const headers = { ...MCP_HEADERS, authorization: `Bearer ${'T'.repeat(43)}`, host: `127.0.0.1:${port}` };
      for (const path of ['/mcp', '/mcp?via=app']) {
        const r = await rawRequest(port, { path, headers, body: '{}' });
        assert.equal(r.status, 500, `${path}: ${r.body}`);
        assert.equal((JSON.parse(r.body) as { error: { code: number } }).error.code, -32603);
        assert.ok(!r.body.includes('token store'), r.body);
      }
      assert.ok(errors.some((e) => /request failed/.test(e)), errors.join('\n'));
      broken = false;
      const ok = await rawRequest(port, { headers: { ...headers, 'mcp-session-id': 'none' }, body: '{}' });
      assert.equal(ok.status, 404, ok.body);
    } finally {
      await host.stop();
    }
  });
});
