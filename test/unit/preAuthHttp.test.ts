/**
 * /mcp and /inbox before authentication, on a real port: a request without the token (or too large by its
 * Content-Length, or for another Host) is answered while its client is still sending a large body slowly, and the
 * server reads no more of that body than had arrived (counted on the server's own sockets); a silent connection and
 * oversized headers are closed; an authenticated client is unaffected.
 */
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import * as net from 'node:net';
import { PRE_AUTH_LIMITS } from '../../src/mcp/security';
import type { RunningHost } from './helpers/httpFixture';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

const MIB = 1024 * 1024;

interface Outcome {
  /** The status line the server answered with ('' when it answered nothing). */
  readonly status: string;
  readonly headers: string;
  /** Body bytes the client had written when the answer arrived. */
  readonly sentAtAnswer: number;
  /** Whether the server closed the connection before the client finished. */
  readonly closedEarly: boolean;
}

describe('HTTP listeners before authentication (real port on 127.0.0.1)', function () {
  this.timeout(90_000);
  let root: string;
  let h: RunningHost;
  /** Every connection the server accepted, to count what it read of each. */
  const accepted: net.Socket[] = [];

  before(async () => {
    root = await makeTree({ 'a.txt': 'a\n' }, 'codespace-preauth-');
    h = await startHost(root);
    const server = (h.host as unknown as { httpServer: http.Server }).httpServer;
    server.on('connection', (s: net.Socket) => accepted.push(s));
  });
  after(async () => {
    await h.stop();
    await removeTree(root);
  });

  /**
   * Sends `head` (request line and headers), then a body of `total` bytes in 64 KiB pieces every 10 ms (chunked
   * when `chunked`), until the server answers and closes or all is sent.
   */
  function trickle(head: string, total: number, chunked: boolean): Promise<Outcome & { serverRead: number }> {
    return new Promise((resolve) => {
      const before = accepted.length;
      const s = net.connect(h.port, '127.0.0.1');
      let sent = 0;
      let answer = '';
      let sentAtAnswer = -1;
      let timer: ReturnType<typeof setInterval> | undefined;
      s.on('error', () => undefined);
      s.on('connect', () => {
        s.write(head);
        const piece = Buffer.alloc(64 * 1024, 0x20);
        timer = setInterval(() => {
          if (s.destroyed || !s.writable || sent >= total) return clearInterval(timer);
          s.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
          sent += piece.length;
        }, 10);
      });
      s.on('data', (d: Buffer) => {
        if (sentAtAnswer < 0) sentAtAnswer = sent;
        answer += d.toString('latin1');
      });
      s.on('close', () => {
        clearInterval(timer);
        const serverSocket = accepted[before];
        const [headers = ''] = answer.split('\r\n\r\n');
        resolve({ status: headers.split('\r\n')[0] ?? '', headers, sentAtAnswer, closedEarly: sent < total, serverRead: serverSocket?.bytesRead ?? -1 });
      });
    });
  }

  const host = (): string => `127.0.0.1:${h.port}`;
  const head = (path: string, headers: Record<string, string>): string => `POST ${path} HTTP/1.1\r\n${Object.entries({ host: host(), 'content-type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`;
  const TOTAL = 64 * MIB;

  const cases: [string, () => string, RegExp][] = [
    ['/mcp, no token, a chunked body', () => head('/mcp', { 'transfer-encoding': 'chunked' }), / 401 /],
    ['/mcp, a wrong token, a declared 64 MiB body', () => head('/mcp', { authorization: 'Bearer wrong-token-value-000000', 'content-length': String(TOTAL) }), / 413 /],
    ['/mcp, a wrong token, a declared 16 MiB body (under the limit)', () => head('/mcp', { authorization: 'Bearer wrong-token-value-000000', 'content-length': String(16 * MIB) }), / 401 /],
    ['/mcp with a query (the express path), no token, chunked', () => head('/mcp?x=1', { 'transfer-encoding': 'chunked' }), / 401 /],
    ['/inbox, no token, chunked', () => head('/inbox/works/w1/instructions', { 'transfer-encoding': 'chunked' }), / 401 /],
    ['/inbox, the /mcp token (not its own), a declared 1 MiB body', () => head('/inbox/works/w1/instructions', { authorization: `Bearer ${h.token.value}`, 'content-length': String(MIB) }), / 401 /],
    ['/inbox, a declared 64 MiB body', () => head('/inbox/works/w1/instructions', { 'content-length': String(TOTAL) }), / 413 /],
    ['another Host, chunked', () => head('/mcp', { host: 'evil.test', 'transfer-encoding': 'chunked' }), / 403 /],
  ];
  for (const [name, make, status] of cases) {
    it(`${name}: answered while the client still sends, and the body is not read`, async () => {
      const chunked = make().includes('transfer-encoding: chunked');
      const declared = /content-length: (\d+)/.exec(make())?.[1];
      const r = await trickle(make(), declared ? Math.min(Number(declared), TOTAL) : TOTAL, chunked);
      assert.match(r.status, status, r.headers);
      assert.match(r.headers, /connection: close/i);
      assert.ok(r.sentAtAnswer >= 0 && r.sentAtAnswer < 4 * MIB, `the answer came after ${r.sentAtAnswer} bytes of body`);
      assert.ok(r.closedEarly, 'the server closed the connection before the client finished');
      assert.ok(r.serverRead >= 0 && r.serverRead < 8 * MIB, `the server read ${r.serverRead} bytes of a ${TOTAL}-byte body`);
    });
  }

  it('headers over the bound are refused (431) and the connection closed', async () => {
    const r = await trickle(head('/mcp', { 'x-filler': 'f'.repeat(PRE_AUTH_LIMITS.maxHeaderBytes + 1024), 'content-length': '2' }), 0, false);
    assert.match(r.status, / 431 /);
  });

  it('a connection that sends nothing is answered 408 and closed after the headers timeout', async () => {
    const t0 = Date.now();
    const r = await trickle('', 0, false);
    assert.match(r.status, / 408 /);
    assert.ok(Date.now() - t0 >= PRE_AUTH_LIMITS.headersTimeoutMs - 500, 'not before the timeout');
  });

  it('an authenticated client is unaffected: initialize, then a 1 MiB JSON body in its session; the inbox with its own token', async () => {
    const init = await rawRequest(h.port, { headers: { ...MCP_HEADERS, host: host(), authorization: `Bearer ${h.token.value}` }, body: INIT_BODY });
    assert.equal(init.status, 200, init.body);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: { filler: 'p'.repeat(MIB) } } });
    const session = init.headers['mcp-session-id'] as string;
    const r = await rawRequest(h.port, { headers: { ...MCP_HEADERS, host: host(), authorization: `Bearer ${h.token.value}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: big });
    assert.equal(r.status, 200, r.body);
    // The inbox with its own token answers as before.
    const inbox = await rawRequest(h.port, { method: 'GET', path: '/inbox/works', headers: { host: host(), authorization: `Bearer ${h.inboxToken.value}` } });
    assert.equal(inbox.status, 200, inbox.body);
  });
});
