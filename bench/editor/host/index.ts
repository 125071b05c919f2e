/**
 * The half of `npm run bench:editor` that runs inside the extension host, loaded as `extensionTestsPath` by
 * bench/editor/run.ts. VS Code calls run() and ends the host when it settles.
 *
 * It activates the extension, gets its endpoint and token as a user does (Copy Connection Settings, then the
 * clipboard), starts the floor (a bare node:http JSON server) in this same host, and serves a small control
 * endpoint on 127.0.0.1 (OS-assigned port, random bearer token) through which the runner starts and stops samplers
 * of this host's RSS and event-loop delay and runs bare node-pty here. Everything the runner needs is written to
 * the control file named in BENCH_INFO_FILE. run() settles on `done`, or after the idle timeout.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as inspector from 'node:inspector';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { PerformanceObserver, constants as perfConstants, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import type * as NodePty from 'node-pty';
import * as vscode from 'vscode';
import type { BarePtyReport, BenchInfo, ControlInfo, ControlRequest, FindFilesReport, FsProbeReport, JsonFloor, MemoryBreakdown, SamplerReport } from '../protocol';
import { BENCH_INFO_FILE, startJsonFloor } from '../protocol';
import { readReplaceList, replaceLoop } from '../replaceLoop';

const EXTENSION_ID = 'codespace.codespace-vscode';
const RSS_SAMPLE_MS = 20;
/** monitorEventLoopDelay's timer resolution (the runner's idle probe uses the same): the max is exact to about this. */
const LOOP_RESOLUTION_MS = 2;

function log(line: string): void {
  console.log(`[bench-host] ${line}`);
}

function readInfo(): { info: BenchInfo; root: string } {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    const file = path.join(folder.uri.fsPath, BENCH_INFO_FILE);
    if (fs.existsSync(file)) return { info: JSON.parse(fs.readFileSync(file, 'utf8')) as BenchInfo, root: folder.uri.fsPath };
  }
  throw new Error(`no ${BENCH_INFO_FILE} in any workspace folder: start this through npm run bench:editor`);
}

function writeControl(file: string, info: ControlInfo | { error: string }): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Counts what the extension's terminals (the process mirror) are given to show. */
class MirrorCounter {
  chars = 0;
  terminals = 0;
  private readonly subscription: vscode.Disposable;
  private readonly writes: vscode.Disposable[] = [];

  constructor() {
    const attach = (terminal: vscode.Terminal): void => {
      if (!terminal.name.startsWith('CodeSpace: ')) return;
      const pty = (terminal.creationOptions as vscode.ExtensionTerminalOptions).pty as vscode.Pseudoterminal | undefined;
      if (!pty) return;
      this.terminals++;
      this.writes.push(pty.onDidWrite((data) => (this.chars += data.length)));
    };
    this.subscription = vscode.window.onDidOpenTerminal(attach);
  }

  dispose(): void {
    this.subscription.dispose();
    for (const w of this.writes) w.dispose();
  }
}

function breakdown(): MemoryBreakdown {
  const m = process.memoryUsage();
  const spaces: Record<string, number> = {};
  for (const s of v8.getHeapSpaceStatistics()) spaces[s.space_name] = s.space_used_size;
  return { heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, spaces };
}

/** Each figure of `a` and `b` at its larger value. */
function larger(a: MemoryBreakdown, b: MemoryBreakdown): MemoryBreakdown {
  const spaces: Record<string, number> = { ...a.spaces };
  for (const [name, used] of Object.entries(b.spaces ?? {})) spaces[name] = Math.max(spaces[name] ?? 0, used);
  return {
    heapTotal: Math.max(a.heapTotal, b.heapTotal),
    heapUsed: Math.max(a.heapUsed, b.heapUsed),
    external: Math.max(a.external, b.external),
    arrayBuffers: Math.max(a.arrayBuffers, b.arrayBuffers),
    spaces,
  };
}

/** RSS every 20 ms and the event-loop delay histogram of this thread, between start and stop. */
class Sampler {
  private readonly t0 = performance.now();
  private readonly baseline = process.memoryUsage.rss();
  private readonly memoryBaseline = breakdown();
  private memoryAtPeak = this.memoryBaseline;
  private memoryMax = this.memoryBaseline;
  private peak = this.baseline;
  private samples = 1;
  private readonly timer: NodeJS.Timeout;
  private readonly loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private readonly gc = { young: 0, full: 0, other: 0, pauseMs: 0 };
  private readonly gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) this.gc.young++;
      else if (kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) this.gc.full++;
      else this.gc.other++;
      this.gc.pauseMs += e.duration;
    }
  });
  private readonly mirrorChars0: number;
  private readonly mirrorTerminals0: number;

  constructor(private readonly mirror: MirrorCounter) {
    this.mirrorChars0 = mirror.chars;
    this.mirrorTerminals0 = mirror.terminals;
    this.loop.enable();
    this.gcObserver.observe({ entryTypes: ['gc'] });
    this.timer = setInterval(() => {
      const rss = process.memoryUsage.rss();
      const now = breakdown();
      this.memoryMax = larger(this.memoryMax, now);
      if (rss > this.peak) {
        this.peak = rss;
        this.memoryAtPeak = now;
      }
      this.samples++;
    }, RSS_SAMPLE_MS);
  }

  stop(): SamplerReport {
    clearInterval(this.timer);
    this.loop.disable();
    this.gcObserver.disconnect();
    const final = process.memoryUsage.rss();
    const ns = 1e6;
    const report: SamplerReport = {
      ms: performance.now() - this.t0,
      rssBaselineBytes: this.baseline,
      rssPeakBytes: Math.max(this.peak, final),
      rssFinalBytes: final,
      rssSamples: this.samples + 1,
      memoryBaseline: this.memoryBaseline,
      memoryAtPeak: this.memoryAtPeak,
      memoryMax: this.memoryMax,
      gc: { ...this.gc },
      loopMaxMs: this.loop.max / ns,
      loopP99Ms: this.loop.percentile(99) / ns,
      loopMeanMs: this.loop.mean / ns,
      mirrorChars: this.mirror.chars - this.mirrorChars0,
      mirrorTerminals: this.mirror.terminals - this.mirrorTerminals0,
    };
    return report;
  }
}

/** `command` on bare node-pty, counting bytes in onData: spawn to exit, in this host. */
function barePty(command: readonly string[], cwd: string): Promise<BarePtyReport> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pty = require('node-pty') as typeof NodePty;
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const t0 = performance.now();
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', LANG: 'C.UTF-8', TERM: 'xterm-256color' };
    const term = pty.spawn(command[0] as string, command.slice(1), { name: 'xterm-256color', cols: 80, rows: 24, cwd, env, encoding: null });
    term.onData((data: string | Buffer) => {
      bytes += data.length;
    });
    term.onExit(({ exitCode }) => {
      if (exitCode !== 0) reject(new Error(`bare node-pty: the command exited with ${exitCode}`));
      else setImmediate(() => resolve({ ms: performance.now() - t0, bytes }));
    });
  });
}

async function findFiles(root: string, pattern: string, maxResults: number): Promise<FindFilesReport> {
  const t0 = performance.now();
  const uris = await vscode.workspace.findFiles(new vscode.RelativePattern(vscode.Uri.file(root), pattern), undefined, maxResults);
  return { ms: performance.now() - t0, count: uris.length };
}

async function timed(out: number[], fn: () => PromiseLike<unknown>): Promise<void> {
  const t0 = performance.now();
  await fn();
  out.push(performance.now() - t0);
}

/** stat, read and temp-write + rename of `file`, through vscode.workspace.fs and through node:fs, interleaved. */
async function probeFs(file: string, iterations: number): Promise<FsProbeReport> {
  const r: FsProbeReport = { vscodeStat: [], nodeStat: [], vscodeRead: [], nodeRead: [], vscodeWriteRename: [], nodeWriteRename: [] };
  const uri = vscode.Uri.file(file);
  const data = await fs.promises.readFile(file);
  const tmp = `${file}.probe-tmp`;
  const tmpUri = vscode.Uri.file(tmp);
  for (let i = 0; i < iterations; i++) {
    await timed(r.vscodeStat, () => vscode.workspace.fs.stat(uri));
    await timed(r.nodeStat, () => fs.promises.stat(file));
    await timed(r.vscodeRead, () => vscode.workspace.fs.readFile(uri));
    await timed(r.nodeRead, () => fs.promises.readFile(file));
    await timed(r.vscodeWriteRename, async () => {
      await vscode.workspace.fs.writeFile(tmpUri, data);
      await vscode.workspace.fs.rename(tmpUri, uri, { overwrite: true });
    });
    await timed(r.nodeWriteRename, async () => {
      await fs.promises.writeFile(tmp, data);
      await fs.promises.rename(tmp, file);
    });
  }
  return r;
}

/** The extension host's CPU profiler and heap sampler, through the inspector protocol of its own process. */
class CpuProfiler {
  private readonly session = new inspector.Session();

  constructor() {
    this.session.connect();
  }

  private post<T>(method: string, params?: object): Promise<T> {
    return new Promise((resolve, reject) => this.session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))));
  }

  async start(): Promise<void> {
    await this.post('Profiler.enable');
    await this.post('Profiler.setSamplingInterval', { interval: 200 });
    await this.post('Profiler.start');
    // Beside it, where the memory that only a full collection frees was allocated: what outlived the young
    // generation (the growth of the old one, and so of RSS, between two full collections).
    await this.post('HeapProfiler.enable');
    await this.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
  }

  async stop(file: string): Promise<void> {
    const { profile } = await this.post<{ profile: unknown }>('Profiler.stop');
    fs.writeFileSync(file, JSON.stringify(profile));
    const heap = await this.post<{ profile: unknown }>('HeapProfiler.stopSampling');
    fs.writeFileSync(file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap.profile));
  }
}

/** A full collection, through the inspector of this process (the extension host runs without --expose-gc). */
async function collectGarbage(): Promise<void> {
  const session = new inspector.Session();
  session.connect();
  try {
    await new Promise<void>((resolve, reject) => session.post('HeapProfiler.collectGarbage', (err) => (err ? reject(err) : resolve())));
  } finally {
    session.disconnect();
  }
}

/** URL and token the way a user gets them: the Copy Connection Settings command, then the clipboard. */
async function connection(): Promise<{ url: string; token: string }> {
  const ext = vscode.extensions.getExtension<{ endpointUrl(): string | undefined }>(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not loaded`);
  await ext.activate();
  const result = await vscode.commands.executeCommand<{ url: string } | undefined>('codespace.copyConnectionSettings');
  const text = await vscode.env.clipboard.readText();
  const token = /^Token: (\S+)$/m.exec(text)?.[1];
  if (!result?.url || !token) throw new Error('Copy Connection Settings gave no URL or token (is the endpoint running?)');
  return { url: result.url, token };
}

function sameToken(header: string | undefined, token: string): boolean {
  const got = Buffer.from(header ?? '');
  const want = Buffer.from(`Bearer ${token}`);
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function run(): Promise<void> {
  const { info, root } = readInfo();
  const mirror = new MirrorCounter();
  let floor: JsonFloor | undefined;
  let control: http.Server | undefined;
  let sampler: Sampler | undefined;
  let profiler: CpuProfiler | undefined;
  try {
    const { url, token } = await connection();
    floor = await startJsonFloor(fs.readFileSync(path.join(root, info.sampleFile), 'utf8'));
    const controlToken = randomBytes(32).toString('base64url');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let idle = setTimeout(finish, info.idleTimeoutMs);

    const handle = async (request: ControlRequest): Promise<unknown> => {
      switch (request.op) {
        case 'sampler-start':
          sampler?.stop();
          sampler = new Sampler(mirror);
          return { ok: true };
        case 'sampler-stop': {
          if (!sampler) throw new Error('no sampler running');
          const report = sampler.stop();
          sampler = undefined;
          return report;
        }
        case 'bare-pty':
          return barePty(request.command, request.cwd);
        case 'find-files':
          return findFiles(request.root, request.pattern, request.maxResults);
        case 'probe-fs':
          return probeFs(request.file, request.iterations);
        case 'replace-loop':
          return replaceLoop(readReplaceList(request.listFile), request.way);
        case 'rss':
          return { rss: process.memoryUsage.rss() };
        case 'collect-garbage':
          await collectGarbage();
          return { rss: process.memoryUsage.rss(), heapUsed: process.memoryUsage().heapUsed };
        case 'profile-start':
          profiler ??= new CpuProfiler();
          await profiler.start();
          return { ok: true };
        case 'profile-stop':
          if (!profiler) throw new Error('no profiler running');
          await profiler.stop(request.file);
          return { ok: true };
        case 'done':
          setImmediate(finish);
          return { ok: true };
      }
    };
    control = http.createServer((req, res) => {
      clearTimeout(idle);
      idle = setTimeout(finish, info.idleTimeoutMs);
      if (req.method !== 'POST' || !sameToken(req.headers.authorization, controlToken)) {
        res.writeHead(401).end();
        req.resume();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          try {
            const answer = await handle(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ControlRequest);
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
          } catch (err) {
            res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
          }
        })();
      });
    });
    const server = control;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = control.address() as AddressInfo;
    writeControl(info.controlFile, {
      controlUrl: `http://127.0.0.1:${port}/control`,
      controlToken,
      floorUrl: floor.url,
      mcpUrl: url,
      mcpToken: token,
      hostPid: process.pid,
      hostNode: process.version,
      vscodeVersion: vscode.version,
    });
    log(`ready: control on 127.0.0.1:${port}, floor ${floor.url}, extension endpoint ${url}`);
    await finished;
    clearTimeout(idle);
    log('done');
  } catch (err) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    log(`failed: ${message}`);
    try {
      writeControl(info.controlFile, { error: message });
    } catch {
      // the runner times out instead
    }
    throw err;
  } finally {
    sampler?.stop();
    mirror.dispose();
    if (control) {
      control.closeAllConnections();
      control.close();
    }
    await floor?.close();
  }
}
