/**
 * `read` of a 4 KiB file: our full MCP HTTP path (SDK client → McpHttpHost → read tool) against
 *  - the floor: a bare express app with express.json() answering a JSON POST, driven by global fetch (the HTTP
 *    client the SDK transport uses, with the same keep-alive behaviour);
 *  - @modelcontextprotocol/server-filesystem over stdio (read_text_file), the reference most agents know.
 * Diagnostic rows split our cost: raw fetch JSON-RPC to our host (no SDK client), the bare SDK server transport
 * with a trivial tool (no guards, no tool logic), and the read handler called in-process (no transport at all).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import express from 'express';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { readTool } from '../src/features/files/common/read';
import { WORKSPACE_ID, benchTool, connectHttpClient, startBenchHost } from './host';
import type { BenchGroup, Contender, GroupResult, Row } from './lib';
import { Resources, interleave, ratio, summarize } from './lib';

const FILE_BYTES = 4096;
const FILE_NAME = 'sample.ts';
const WARMUP_ROUNDS = 2;
const ROUNDS = 20;
const PER_ROUND = 100;

const NAMES = {
  ours: 'ours: SDK client → McpHttpHost `read`',
  floor: 'floor: fetch → bare express.json() echo',
  fsStdio: 'server-filesystem over stdio `read_text_file`',
  oursRaw: 'diag: raw fetch JSON-RPC → McpHttpHost `read`',
  sdkBare: 'diag: SDK client → bare SDK transport, trivial tool',
  handler: 'diag: read handler in-process (no transport)',
} as const;

/** Deterministic ASCII source text of exactly `bytes` bytes, ending in a newline. */
export function sampleText(bytes: number): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `export const value_${String(i).padStart(4, '0')} = 'lorem ipsum dolor sit amet';\n`;
  return s.slice(0, bytes - 1) + '\n';
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Counts TCP connections and HTTP requests a server sees, so we can tell whether keep-alive holds. */
function countTraffic(server: http.Server | undefined): { connections: number; requests: number; reset(): void } {
  const c = {
    connections: 0,
    requests: 0,
    reset() {
      c.connections = 0;
      c.requests = 0;
    },
  };
  server?.on('connection', () => c.connections++);
  server?.on('request', () => c.requests++);
  return c;
}

/** The floor: express.json() plus a JSON answer carrying a 4 KiB string, the shape of a JSON-RPC result. */
async function startFloor(payload: string): Promise<{ url: string; server: http.Server }> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: '32mb' }));
  app.post('/mcp', (req, res) => {
    const id = (req.body as { id?: unknown }).id ?? null;
    res.json({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: payload }] } });
  });
  const server = http.createServer(app);
  server.keepAliveTimeout = 5000;
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/mcp`, server };
}

/** The bare SDK server transport (stateful, JSON responses) with one trivial tool returning the payload. */
async function startSdkBare(payload: string): Promise<{ url: URL; server: http.Server; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: '32mb' }));
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  app.all('/mcp', (req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
      if (!transport) {
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => void transports.set(id, t),
        });
        const server = new McpServer({ name: 'bare', version: '1.0.0' });
        server.registerTool('read', { inputSchema: { path: z.string() } }, () => ({ content: [{ type: 'text', text: payload }] }));
        servers.push(server);
        await server.connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, req.body);
    })().catch(() => {
      if (!res.headersSent) res.status(500).end();
    });
  });
  const server = http.createServer(app);
  server.keepAliveTimeout = 5000;
  const port = await listen(server);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    server,
    close: async () => {
      await Promise.allSettled(servers.map((s) => s.close()));
      await closeServer(server);
    },
  };
}

function structuredText(result: unknown, key: 'content'): string | undefined {
  const sc = (result as { structuredContent?: Record<string, unknown> }).structuredContent;
  const v = sc?.[key];
  return typeof v === 'string' ? v : undefined;
}

export const readLatency: BenchGroup = async (log) => {
  const res = new Resources();
  try {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-read-')));
    res.add(() => fs.rmSync(dir, { recursive: true, force: true }));
    const text = sampleText(FILE_BYTES);
    const abs = path.join(dir, FILE_NAME);
    fs.writeFileSync(abs, text);

    // Ours.
    const h = await startBenchHost(dir);
    res.add(() => h.stop());
    const hostTraffic = countTraffic(h.httpServer);
    const client = await connectHttpClient(h.url, h.token);
    res.add(() => client.close());

    // Raw JSON-RPC over fetch against our host, own session.
    const baseHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${h.token}` };
    const initRes = await fetch(h.url, {
      method: 'POST',
      headers: baseHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    const sid = initRes.headers.get('mcp-session-id');
    await initRes.text();
    if (!sid) throw new Error(`raw initialize returned no session id (HTTP ${initRes.status})`);
    const rawHeaders = { ...baseHeaders, 'mcp-session-id': sid, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
    await (await fetch(h.url, { method: 'POST', headers: rawHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
    let rawId = 1;
    const rawCall = async (): Promise<string> => {
      const r = await fetch(h.url, {
        method: 'POST',
        headers: rawHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: rawId++, method: 'tools/call', params: { name: 'read', arguments: { workspace_id: WORKSPACE_ID, path: FILE_NAME } } }),
      });
      return r.text();
    };

    // Floor.
    const floor = await startFloor(text);
    res.add(() => closeServer(floor.server));
    const floorTraffic = countTraffic(floor.server);
    const floorHeaders = { ...baseHeaders, 'mcp-session-id': randomUUID(), 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
    let floorId = 1;
    const floorCall = async (): Promise<unknown> => {
      const r = await fetch(floor.url, {
        method: 'POST',
        headers: floorHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: floorId++, method: 'tools/call', params: { name: 'read', arguments: { workspace_id: WORKSPACE_ID, path: FILE_NAME } } }),
      });
      return r.json();
    };

    // Bare SDK server transport.
    const bare = await startSdkBare(text);
    res.add(() => bare.close());
    const bareClient = await connectHttpClient(bare.url, 'unused');
    res.add(() => bareClient.close());

    // server-filesystem over stdio.
    const fsPkgDir = path.dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json'));
    const fsPkg = JSON.parse(fs.readFileSync(path.join(fsPkgDir, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> | string };
    const binRel = typeof fsPkg.bin === 'string' ? fsPkg.bin : (Object.values(fsPkg.bin)[0] as string);
    const fsClient = new Client({ name: 'codespace-bench', version: '1.0.0' });
    const stdio = new StdioClientTransport({ command: process.execPath, args: [path.join(fsPkgDir, binRel), dir], stderr: 'ignore' });
    await fsClient.connect(stdio);
    res.add(() => fsClient.close());
    await fsClient.listTools();

    // In-process handler.
    const signal = new AbortController().signal;
    const handlerCall = () => benchTool(h.services, readTool).handler({ workspace_id: WORKSPACE_ID, path: FILE_NAME }, { signal });

    // Sanity: every contender returns the file.
    const oursFirst = await client.callTool({ name: 'read', arguments: { workspace_id: WORKSPACE_ID, path: FILE_NAME } });
    if (structuredText(oursFirst, 'content') !== text) throw new Error('ours: read did not return the file content');
    const fsFirst = await fsClient.callTool({ name: 'read_text_file', arguments: { path: abs } });
    if (structuredText(fsFirst, 'content') !== text) throw new Error('server-filesystem: read_text_file did not return the file content');
    const oursBytes = Buffer.byteLength(await rawCall());
    const floorBytes = Buffer.byteLength(JSON.stringify(await floorCall()));

    const contenders: Contender[] = [
      { name: NAMES.ours, run: () => client.callTool({ name: 'read', arguments: { workspace_id: WORKSPACE_ID, path: FILE_NAME } }) },
      { name: NAMES.floor, run: floorCall },
      { name: NAMES.fsStdio, run: () => fsClient.callTool({ name: 'read_text_file', arguments: { path: abs } }) },
      { name: NAMES.oursRaw, run: rawCall },
      { name: NAMES.sdkBare, run: () => bareClient.callTool({ name: 'read', arguments: { path: FILE_NAME } }) },
      { name: NAMES.handler, run: handlerCall },
    ];

    // Warm-up separately so the traffic counters cover measured calls only.
    await interleave(contenders, { rounds: WARMUP_ROUNDS, perRound: PER_ROUND, warmupRounds: 0 });
    hostTraffic.reset();
    floorTraffic.reset();
    const samples = await interleave(contenders, {
      rounds: ROUNDS,
      perRound: PER_ROUND,
      warmupRounds: 0,
      onRound: (r, total) => {
        if (r % 5 === 0 || r === total) log(`  read: round ${r}/${total}`);
      },
    });

    const stats = new Map([...samples].map(([k, v]) => [k, summarize(v)]));
    const s = (k: keyof typeof NAMES) => stats.get(NAMES[k]) as ReturnType<typeof summarize>;
    // Calls against our host during the measured phase: `ours` and `oursRaw` each made ROUNDS * PER_ROUND.
    const hostCalls = 2 * ROUNDS * PER_ROUND;
    const floorCalls = ROUNDS * PER_ROUND;
    const rows: Row[] = [
      { contender: NAMES.ours, stats: s('ours'), note: `response ${oursBytes} B (text + structuredContent)` },
      { contender: NAMES.floor, stats: s('floor'), note: `response ${floorBytes} B` },
      { contender: NAMES.fsStdio, stats: s('fsStdio'), note: `v${fsPkg.version}, child process` },
      { contender: NAMES.oursRaw, stats: s('oursRaw'), note: 'no SDK client: fetch + response.text()' },
      { contender: NAMES.sdkBare, stats: s('sdkBare'), note: 'express.json + StreamableHTTPServerTransport, no guards' },
      { contender: NAMES.handler, stats: s('handler'), note: 'confine + stat + readFile + sha256 + line split' },
    ];
    const notes = [
      `${FILE_BYTES}-byte file; ${WARMUP_ROUNDS * PER_ROUND} warm-up calls then ${ROUNDS * PER_ROUND} measured calls per contender, interleaved in rounds of ${PER_ROUND} with a rotating start.`,
      `Our host saw ${hostTraffic.requests} HTTP requests over ${hostTraffic.connections} new TCP connections for ${hostCalls} measured calls (ours + raw) → ${(hostTraffic.requests / hostCalls).toFixed(2)} requests per call.`,
      `The floor saw ${floorTraffic.requests} HTTP requests over ${floorTraffic.connections} new TCP connections for ${floorCalls} measured calls.`,
    ];
    if (hostTraffic.requests > hostCalls) notes.push('WARNING: more than one HTTP request per tool call reached our host.');
    if (hostTraffic.connections > 2 || floorTraffic.connections > 2) notes.push('WARNING: keep-alive is not holding (new connections during the measured phase).');
    const result: GroupResult = {
      title: 'read: 4 KiB file, full MCP HTTP path',
      description: 'Latency of one tool call, client to client. Lower is better.',
      rows,
      ratios: [
        ratio('ours / floor (fetch → express.json)', s('ours'), s('floor'), 1.25),
        ratio('ours / server-filesystem stdio', s('ours'), s('fsStdio')),
        ratio('diag: raw fetch → ours / floor', s('oursRaw'), s('floor')),
        ratio('diag: bare SDK transport / floor', s('sdkBare'), s('floor')),
        ratio('diag: ours / bare SDK transport', s('ours'), s('sdkBare')),
      ],
      notes,
    };
    return result;
  } finally {
    await res.dispose();
  }
};
