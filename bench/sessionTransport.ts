/**
 * The server transport of one MCP session, four ways, each behind the same bare express app with express.json()
 * and the real tool server (createToolServer over the real catalogue), driven by the SDK client:
 *  - the SDK's StreamableHTTPServerTransport with JSON responses, as SDK 1.32.2 ships it (keeps every response:
 *    typescript-sdk issue #2559);
 *  - the same with the upstream fix (PR #2747: release the request's stream entry once its JSON response is
 *    handed out), applied to the instance at run time, which is what a tracked patch to the SDK would do;
 *  - the SDK's transport with SSE responses (the SDK's default; releases its entries);
 *  - ours: JsonSessionTransport, on the SDK's public Transport interface (what McpHttpHost uses).
 * Latency of `read` of a 4 KiB and of a 256 KiB file, interleaved; then the heap each session keeps, measured
 * after a full GC around a run of 256 KiB reads in a fresh session per contender.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import express from 'express';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonSessionTransport } from '../src/mcp/jsonSessionTransport';
import { createToolServer } from '../src/mcp/toolServer';
import type { ServedCore } from '../src/mcp/toolServer';
import { WORKSPACE_ID, benchServices, connectHttpClient } from './host';
import type { BenchGroup, Contender, Row } from './lib';
import { Resources, interleave, ratio, summarize } from './lib';
import { sampleText } from './readLatency';

const WARMUP_ROUNDS = 2;
const ROUNDS = 10;
const PER_ROUND_SMALL = 50;
const PER_ROUND_BIG = 10;
const MEMORY_CALLS = 200;
const MiB = 1024 * 1024;

type Mode = 'sdkJson' | 'sdkJsonFixed' | 'sdkSse' | 'ours';

const NAMES: Record<Mode, string> = {
  sdkJson: 'SDK transport, JSON responses (1.32.2 as shipped)',
  sdkJsonFixed: 'SDK transport, JSON responses + upstream fix (PR #2747)',
  sdkSse: 'SDK transport, SSE responses',
  ours: 'ours: JsonSessionTransport (public Transport interface)',
};

interface SdkInternals {
  _webStandardTransport: {
    _streamMapping: Map<string, { cleanup(): void }>;
    _requestToStreamMapping: Map<unknown, string>;
    send(message: JSONRPCMessage, options?: unknown): Promise<void>;
  };
}

/** The change of PR #2747 for the JSON branch of send(): clean the stream entry up once its response is out. */
function applyUpstreamFix(t: StreamableHTTPServerTransport): void {
  const inner = (t as unknown as SdkInternals)._webStandardTransport;
  const send = inner.send.bind(inner);
  inner.send = async (message, options) => {
    const id = 'id' in message ? message.id : undefined;
    const streamId = id === undefined ? undefined : inner._requestToStreamMapping.get(id);
    await send(message, options);
    if (streamId !== undefined && !inner._requestToStreamMapping.has(id)) inner._streamMapping.get(streamId)?.cleanup();
  };
}

/** Sessions of one transport kind behind a bare express app: no guards, so only the transport differs. */
async function startEndpoint(mode: Mode, served: ServedCore): Promise<{ url: URL; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: '32mb' }));
  const sessions = new Map<string, { handle(req: express.Request, res: express.Response): Promise<void>; close(): Promise<void> }>();
  app.all('/mcp', (req, res) => {
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      const existing = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (existing) return existing.handle(req, res);
      const server = createToolServer({ ...served, version: '0.0.0-bench' });
      if (mode === 'ours') {
        const t: JsonSessionTransport = new JsonSessionTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, { handle: (q, s) => t.handle(q, s, q.body), close: () => server.close() }),
        });
        await server.connect(t);
        return t.handle(req, res, req.body);
      }
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: mode !== 'sdkSse',
        onsessioninitialized: (id) => void sessions.set(id, { handle: (q, s) => t.handleRequest(q, s, q.body), close: () => server.close() }),
      });
      if (mode === 'sdkJsonFixed') applyUpstreamFix(t);
      await server.connect(t);
      return t.handleRequest(req, res, req.body);
    })().catch(() => {
      if (!res.headersSent) res.status(500).end();
    });
  });
  const httpServer = http.createServer(app);
  httpServer.keepAliveTimeout = 5000;
  const port = await new Promise<number>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(0, '127.0.0.1', () => resolve((httpServer.address() as AddressInfo).port));
  });
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((s) => s.close()));
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}

function exposeGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}

export const sessionTransport: BenchGroup = async (log) => {
  const res = new Resources();
  try {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-session-')));
    res.add(() => fs.rmSync(dir, { recursive: true, force: true }));
    const small = sampleText(4 * 1024);
    const big = sampleText(256 * 1024);
    fs.writeFileSync(path.join(dir, 'small.ts'), small);
    fs.writeFileSync(path.join(dir, 'big.ts'), big);
    const assembled = await benchServices(dir);
    res.add(() => assembled.shutdown());
    const modes = Object.keys(NAMES) as Mode[];
    const endpoints = new Map<Mode, URL>();
    for (const mode of modes) {
      const e = await startEndpoint(mode, assembled.serving);
      res.add(() => e.close());
      endpoints.set(mode, e.url);
    }
    const connect = async (mode: Mode): Promise<Client> => {
      const c = await connectHttpClient(endpoints.get(mode) as URL, 'unused');
      res.add(() => c.close());
      return c;
    };
    const read = async (c: Client, file: string, text: string): Promise<void> => {
      const r = await c.callTool({ name: 'read', arguments: { workspace_id: WORKSPACE_ID, path: file } });
      if ((r.structuredContent as { content?: string } | undefined)?.content !== text) throw new Error(`read ${file} did not return the file`);
    };

    // Latency: one long-lived session per contender, as an agent has.
    const clients = new Map<Mode, Client>();
    for (const mode of modes) clients.set(mode, await connect(mode));
    const latency = async (file: string, text: string, perRound: number) => {
      const contenders: Contender[] = modes.map((m) => ({ name: NAMES[m], run: () => read(clients.get(m) as Client, file, text) }));
      return interleave(contenders, {
        rounds: ROUNDS,
        perRound,
        warmupRounds: WARMUP_ROUNDS,
        onRound: (r, total) => {
          if (r % 4 === 0 || r === total) log(`  session (${file}): round ${r}/${total}`);
        },
      });
    };
    const smallSamples = await latency('small.ts', small, PER_ROUND_SMALL);
    const bigSamples = await latency('big.ts', big, PER_ROUND_BIG);
    // The latency sessions have served their calls; close them so the leaking one does not skew the memory runs.
    for (const c of clients.values()) await c.close();

    // Memory: a fresh session per contender, MEMORY_CALLS reads of the 256 KiB file, heap after GC before/after.
    const gc = exposeGc();
    const kept = new Map<Mode, number>();
    for (const mode of modes) {
      const c = await connect(mode);
      for (let i = 0; i < 10; i++) await read(c, 'big.ts', big);
      gc();
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < MEMORY_CALLS; i++) await read(c, 'big.ts', big);
      gc();
      kept.set(mode, (process.memoryUsage().heapUsed - before) / MEMORY_CALLS);
      await c.close();
      gc();
      log(`  session memory: ${mode} done`);
    }

    const sSmall = new Map([...smallSamples].map(([k, v]) => [k, summarize(v)]));
    const sBig = new Map([...bigSamples].map(([k, v]) => [k, summarize(v)]));
    const st = (m: Map<string, ReturnType<typeof summarize>>, mode: Mode) => m.get(NAMES[mode]) as ReturnType<typeof summarize>;
    const keptNote = (mode: Mode) => {
      const perCall = kept.get(mode) ?? Number.NaN;
      return `heap kept per 256 KiB call: ${(perCall / 1024).toFixed(1)} KiB (→ ${((perCall * 10_000) / MiB).toFixed(0)} MiB per 10,000 calls)`;
    };
    const rows: Row[] = [
      ...modes.map((m) => ({ contender: `4 KiB · ${NAMES[m]}`, stats: st(sSmall, m) })),
      ...modes.map((m) => ({ contender: `256 KiB · ${NAMES[m]}`, stats: st(sBig, m), note: keptNote(m) })),
    ];
    return {
      title: 'session: server transport of one MCP session (memory and latency)',
      description: 'Same express app, same tool server, same SDK client; only the server transport differs. Lower is better.',
      rows,
      ratios: [
        ratio('4 KiB: ours / SDK JSON + upstream fix', st(sSmall, 'ours'), st(sSmall, 'sdkJsonFixed')),
        ratio('4 KiB: ours / SDK SSE', st(sSmall, 'ours'), st(sSmall, 'sdkSse')),
        ratio('4 KiB: SDK SSE / SDK JSON + upstream fix', st(sSmall, 'sdkSse'), st(sSmall, 'sdkJsonFixed')),
        ratio('256 KiB: ours / SDK JSON + upstream fix', st(sBig, 'ours'), st(sBig, 'sdkJsonFixed')),
        ratio('256 KiB: ours / SDK SSE', st(sBig, 'ours'), st(sBig, 'sdkSse')),
        ratio('256 KiB: SDK SSE / SDK JSON + upstream fix', st(sBig, 'sdkSse'), st(sBig, 'sdkJsonFixed')),
      ],
      notes: [
        `Latency: ${WARMUP_ROUNDS} warm-up then ${ROUNDS} measured rounds, ${PER_ROUND_SMALL} (4 KiB) or ${PER_ROUND_BIG} (256 KiB) calls per contender per round, interleaved with a rotating start.`,
        `Memory: ${MEMORY_CALLS} reads of the 256 KiB file in a fresh session per contender; heap used after two full GCs, after minus before, divided by the calls.`,
      ],
    };
  } finally {
    await res.dispose();
  }
};
