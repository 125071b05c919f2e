/**
 * What the two halves of `npm run bench:editor` share: the runner in plain Node (bench/editor/run.ts) and the module
 * it loads into the extension host as `extensionTestsPath` (bench/editor/host/index.ts). No vscode here.
 *
 * The runner writes BENCH_INFO_FILE at the root of the first workspace folder (the browser-launched extension host
 * gets no environment from us); the host answers with the control file it names, once the extension is active and
 * the floor and the control endpoint listen.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Written by the runner at the root of the first workspace folder. */
export const BENCH_INFO_FILE = '.codespace-bench.json';

export interface BenchInfo {
  /** Absolute path where the host writes its ControlInfo (temp file + rename, mode 0600). */
  readonly controlFile: string;
  /** Workspace-relative path of the 4 KiB sample the floor answers with. */
  readonly sampleFile: string;
  /** The host gives up waiting for `done` after this long (a runner that died must not keep VS Code alive). */
  readonly idleTimeoutMs: number;
}

export interface ControlInfo {
  /** Set instead of the rest when the host could not start. */
  readonly error?: string;
  readonly controlUrl: string;
  readonly controlToken: string;
  /** The floor, served from the extension host. */
  readonly floorUrl: string;
  /** The extension's endpoint and token, obtained as a user does (Copy Connection Settings, clipboard). */
  readonly mcpUrl: string;
  readonly mcpToken: string;
  readonly hostPid: number;
  readonly hostNode: string;
  readonly vscodeVersion: string;
}

/** Control requests: POST <controlUrl> with a bearer token and one of these as JSON. */
export type ControlRequest =
  | { readonly op: 'sampler-start' }
  | { readonly op: 'sampler-stop' }
  | { readonly op: 'bare-pty'; readonly command: readonly string[]; readonly cwd: string }
  | { readonly op: 'find-files'; readonly root: string; readonly pattern: string; readonly maxResults: number }
  | { readonly op: 'probe-fs'; readonly file: string; readonly iterations: number }
  /** The writes of a many-file apply alone (replaceLoop.ts), in the extension host; answers a ReplaceLoopReport. */
  | { readonly op: 'replace-loop'; readonly listFile: string; readonly way: 'rename' | 'recreate' }
  | { readonly op: 'rss' }
  /** A full garbage collection in the extension host (node:inspector), so a measurement starts from live memory only. */
  | { readonly op: 'collect-garbage' }
  /** --profile: the extension host's own CPU profiler (node:inspector) around one group; stop writes `file`. */
  | { readonly op: 'profile-start' }
  | { readonly op: 'profile-stop'; readonly file: string }
  | { readonly op: 'done' };

/** What a sampler saw in the extension host between sampler-start and sampler-stop. */
/** process.memoryUsage() without rss, in bytes. */
export interface MemoryBreakdown {
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** V8's heap by space (v8.getHeapSpaceStatistics): bytes used in each (new_space, old_space, large_object_space, …). */
  readonly spaces?: Readonly<Record<string, number>>;
}

export interface SamplerReport {
  readonly ms: number;
  readonly rssBaselineBytes: number;
  readonly rssPeakBytes: number;
  readonly rssFinalBytes: number;
  readonly rssSamples: number;
  /** perf_hooks.monitorEventLoopDelay, in milliseconds. */
  readonly loopMaxMs: number;
  readonly loopP99Ms: number;
  readonly loopMeanMs: number;
  /** Where the memory was, at the start and at the RSS peak: V8's heap and the memory outside it (array buffers, external strings). */
  readonly memoryBaseline: MemoryBreakdown;
  readonly memoryAtPeak: MemoryBreakdown;
  /** The largest value each figure reached while sampling (each at its own moment). */
  readonly memoryMax?: MemoryBreakdown;
  /** Garbage collections while sampling (perf_hooks 'gc' entries): young (scavenges) and full (mark-compact). */
  readonly gc?: { readonly young: number; readonly full: number; readonly other: number; readonly pauseMs: number };
  /** Characters the CodeSpace terminals (the mirror) were given to show while sampling. */
  readonly mirrorChars: number;
  /** CodeSpace terminals opened while sampling. */
  readonly mirrorTerminals: number;
}

export interface BarePtyReport {
  readonly ms: number;
  readonly bytes: number;
}

/** `vscode.workspace.findFiles` timed in the host: what the extension's `find` is built on. */
export interface FindFilesReport {
  readonly ms: number;
  readonly count: number;
}

/**
 * The same file operations through `vscode.workspace.fs` and through node:fs in the extension host, interleaved,
 * one sample per iteration each (ms). `writeRename` is a temp-file write plus a rename over the file.
 */
export interface FsProbeReport {
  readonly vscodeStat: number[];
  readonly nodeStat: number[];
  readonly vscodeRead: number[];
  readonly nodeRead: number[];
  readonly vscodeWriteRename: number[];
  readonly nodeWriteRename: number[];
}

export interface JsonFloor {
  readonly url: string;
  readonly server: http.Server;
  close(): Promise<void>;
}

/**
 * The floor: a bare node:http server that parses a JSON POST and answers with a JSON-RPC-shaped result carrying
 * `payload` (the 4 KiB file), keep-alive on. Nothing of ours, no express, no SDK: the least any JSON-over-HTTP tool
 * call can cost in the process that serves it.
 */
export function startJsonFloor(payload: string): Promise<JsonFloor> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let id: unknown = null;
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown }).id ?? null;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const body = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: payload }] } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
