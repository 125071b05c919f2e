/**
 * `npm run bench:editor`: the path users run. The extension inside a real VS Code (code-server in headless Chromium,
 * offline, as the integration tests run it), driven by a real MCP SDK client from this Node process, each figure
 * side by side with its baseline in the same run:
 *
 *   read 4 KiB          ours vs a bare node:http JSON floor served from the same extension host
 *   find **\/*.ts        ours over a 50,000-file workspace folder vs `rg --files`
 *   apply_patch         5 MB file / 200 files vs `git apply`
 *   read_process        200 MiB of PTY output vs bare node-pty in the same extension host
 *   flood               extension host RSS growth and event-loop delay during a 1 GiB flood, terminal mirror on
 *   sessions            extension host event-loop delay during 32 sessions × 1,000 calls
 *   toollist            the tools/list size against its budget (bench/editor/toolList.ts)
 *   activation          activate() to listening of the packaged VSIX in fresh windows; bundle and VSIX sizes
 *                       (bench/editor/activation.ts; runs first and leaves dist/ holding the production build)
 *
 * The module that runs inside the extension host is bench/editor/host/index.ts (loaded as extensionTestsPath); it
 * serves the floor, samples the host's RSS and event-loop delay and runs bare node-pty on request.
 *
 * Usage: node out/bench/editor/run.js [group…] [--quick] [--no-budget] [--profile] [--verbose]. Prints Markdown to stdout
 * (progress to stderr) and writes .bench/editor.md and .bench/editor.json. --quick shrinks every size (a smoke run,
 * not the targets' sizes); --no-budget lifts the time budgets that keep a full run under 10 minutes; --profile runs the
 * extension host's CPU profiler around each group and writes .bench/editor-<group>.cpuprofile, and its heap sampler
 * (allocations that only a full collection frees) into .bench/editor-<group>.heapprofile.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { TREE_DIR, ensureTree, runRg } from '../findThroughput';
import { SEARCH_QUERY, runRgSearch } from '../searchThroughput';
import type { Contender, GroupResult, Row, Stats } from '../lib';
import { Resources, fmtMs, interleave, markdownTable, renderGroup, summarize } from '../lib';
import type { Case } from '../patchApply';
import { bigCase, gitApply, oneLineCase, sha256, smallCase, verify } from '../patchApply';
import { flood } from '../processThroughput';
import { ProcessCpu, cpuLine } from './processCpu';
import { sampleText } from '../readLatency';
import type { BarePtyReport, BenchInfo, ControlInfo, ControlRequest, FindFilesReport, FsProbeReport, MemoryBreakdown, SamplerReport } from './protocol';
import { BENCH_INFO_FILE } from './protocol';
import type { ReplaceLoopReport, ReplaceWay } from './replaceLoop';
import { ACTIVATION_BUDGET_MS, BUNDLE_BUDGET_BYTES, measureActivation } from './activation';
import { toolListGroup } from './toolList';

/** Repo root: this file compiles to out/bench/editor/run.js. */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const HOST_INDEX = path.join(REPO_ROOT, 'out', 'bench', 'editor', 'host', 'index.js');
const MIB = 1024 * 1024;
const MB = 1e6;

/**
 * Time budgets that keep the whole run under 10 minutes on a slow, shared machine: past them the flood is ended
 * (terminate_process), the sessions stop calling and no PTY round starts. The report then says how far they got.
 */
const BUDGETS = { ptyBudgetMs: 90_000, floodBudgetMs: 100_000, sessionsBudgetMs: 100_000 } as const;
const NO_BUDGETS = { ptyBudgetMs: Number.POSITIVE_INFINITY, floodBudgetMs: Number.POSITIVE_INFINITY, sessionsBudgetMs: Number.POSITIVE_INFINITY } as const;

interface Sizes {
  readonly readWarmupRounds: number;
  readonly readRounds: number;
  readonly readPerRound: number;
  readonly findWarmupRounds: number;
  readonly findRounds: number;
  readonly patchWarmupRounds: number;
  readonly patchRounds: number;
  readonly ptyBytes: number;
  /** One unmeasured run of each contender at this size first. */
  readonly ptyWarmupBytes: number;
  readonly ptyRounds: number;
  readonly floodBytes: number;
  readonly sessions: number;
  readonly callsPerSession: number;
  readonly fsProbeIterations: number;
  /** Windows opened, each a fresh extension host, to time activation. */
  readonly activationRounds: number;
  /** Time budgets (see BUDGETS); --no-budget makes them infinite. */
  readonly ptyBudgetMs: number;
  readonly floodBudgetMs: number;
  readonly sessionsBudgetMs: number;
}

const FULL: Sizes = {
  readWarmupRounds: 1,
  readRounds: 8,
  readPerRound: 100,
  findWarmupRounds: 1,
  findRounds: 6,
  patchWarmupRounds: 2,
  patchRounds: 8,
  ptyBytes: 200 * MIB,
  ptyWarmupBytes: 32 * MIB,
  ptyRounds: 5,
  floodBytes: 1024 * MIB,
  sessions: 32,
  callsPerSession: 1000,
  fsProbeIterations: 100,
  activationRounds: 7,
  ...BUDGETS,
};

const QUICK: Sizes = {
  readWarmupRounds: 1,
  readRounds: 3,
  readPerRound: 30,
  findWarmupRounds: 1,
  findRounds: 2,
  patchWarmupRounds: 1,
  patchRounds: 2,
  ptyBytes: 32 * MIB,
  ptyWarmupBytes: 8 * MIB,
  ptyRounds: 1,
  floodBytes: 128 * MIB,
  sessions: 8,
  callsPerSession: 100,
  fsProbeIterations: 20,
  activationRounds: 3,
  ...BUDGETS,
};

const SAMPLE_FILE = 'sample.ts';
const SAMPLE_BYTES = 4096;
const FIND_PATTERN = '**/*.ts';
const FIND_MAX_RESULTS = 100_000;
/** read_process as an agent streaming output calls it: the most it may return, waiting for output. */
const READ_MAX_BYTES = MIB;
const READ_WAIT_MS = 1000;
/** Pause after resetting patch targets (both contenders), so file-watcher events do not land in a timed call. */
const PATCH_SETTLE_MS = 300;
/**
 * After that pause the patch group waits until the machine is quiet (`untilQuiet`), at most this long. A reset rewrites
 * up to 200 files in the workspace, and the editor reacts to it (its file watcher, the documents it reloads, the
 * TypeScript server) for seconds on two cores; the previous apply's diagnostics follow-up runs in the background just
 * as long. An agent's next patch comes a model turn later, when both are over; timed earlier, the apply measured the
 * bench's own reset. Both contenders get the same wait (git applies to the same files, in the workspace).
 */
const PATCH_QUIET_MAX_MS = 10_000;
/** Quiet: the machine's CPUs at most this busy over one QUIET_WINDOW_MS window (`/proc/stat`, all CPUs). */
const QUIET_BUSY = 0.25;
const QUIET_WINDOW_MS = 250;
/**
 * The same pause in the one-line edit group: longer than the TypeScript extension waits after a change to an open
 * file before it asks its server for a check (300 ms for a small file) plus that check on a loaded machine. The reset
 * rewrites a file the editor has open, and at 300 ms the check of that rewrite (not an agent's edit) ran during the
 * timed edit. An agent's edits come a model turn apart, seconds, not 300 ms.
 */
const EDIT_SETTLE_MS = 1000;
const RSS_BUDGET_MIB = 64;
const LOOP_BUDGET_MS = 50;
const READY_TIMEOUT_MS = 180_000;
/** Timer resolution of every event-loop delay monitor here (the host's and the idle probe's). */
const LOOP_RESOLUTION_MS = 2;
const HOST_IDLE_TIMEOUT_MS = 10 * 60_000;
/** Workbench noise without network; hidden unless --verbose. */
const NOISE = [/marketplace/i, /gallery/i, /ERR_NAME_NOT_RESOLVED/, /ERR_INTERNET_DISCONNECTED/, /Failed to load resource/, /update.code.visualstudio.com/, /open-vsx/i];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const log = (line: string): void => void process.stderr.write(`[bench:editor] ${line}\n`);

/** Busy and total jiffies of all CPUs (`/proc/stat`), or undefined where there is no such file. */
function cpuTimes(): { busy: number; total: number } | undefined {
  let line: string | undefined;
  try {
    line = fs.readFileSync('/proc/stat', 'latin1').split('\n', 1)[0];
  } catch {
    return undefined;
  }
  const f = (line ?? '').trim().split(/\s+/).slice(1).map(Number);
  if (f.length < 5 || f.some((n) => !Number.isFinite(n))) return undefined;
  const idle = (f[3] as number) + (f[4] as number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * Waits until the machine's CPUs were at most QUIET_BUSY busy over one QUIET_WINDOW_MS window, or `maxMs` passed.
 * Returns how long it waited and whether it found quiet (without `/proc/stat`: at once, not found).
 */
async function untilQuiet(maxMs: number): Promise<{ ms: number; quiet: boolean }> {
  const t0 = performance.now();
  let before = cpuTimes();
  if (!before) return { ms: 0, quiet: false };
  while (performance.now() - t0 < maxMs) {
    await sleep(QUIET_WINDOW_MS);
    const now = cpuTimes();
    if (!now) break;
    const share = now.total > before.total ? (now.busy - before.busy) / (now.total - before.total) : 1;
    if (share <= QUIET_BUSY) return { ms: performance.now() - t0, quiet: true };
    before = now;
  }
  return { ms: performance.now() - t0, quiet: false };
}
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;
const mbps = (bytes: number, ms: number): number => bytes / MB / (ms / 1000);

// ---------------------------------------------------------------------------------------------------------------
// The VS Code host (scripts/vscodeHost.mjs, loaded at run time as test/e2e/host.ts does)

interface VsCodeHostModule {
  ensureVsCodeHost(): Promise<void>;
  makeTmpRoot(prefix?: string): string;
  removeDir(dir: string): void;
  startCodeServer(options: { tmpRoot: string; openPath?: string; onOutput?: (line: string) => void }): Promise<{
    port: number;
    base: string;
    userDataDir: string;
    pid: number;
    stop(): Promise<void>;
  }>;
  launchBrowser(): Promise<Browser>;
  workbenchUrl(options: { base: string; port: number; openPath: string; kind: 'folder' | 'workspace'; extensionDevelopmentPath: string; extensionTestsPath?: string }): string;
  openWorkbench(
    browser: Browser,
    options: { url: string; onLog?: (type: string, message: string) => void; onExit?: (code: number) => void },
  ): Promise<Page>;
}

function loadHostModule(): Promise<VsCodeHostModule> {
  return import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'vscodeHost.mjs')).href) as Promise<VsCodeHostModule>;
}

// ---------------------------------------------------------------------------------------------------------------
// Talking to the extension host: the control endpoint and the MCP endpoint

class Control {
  constructor(private readonly info: ControlInfo) {}

  async call<T>(request: ControlRequest, timeoutMs = 300_000): Promise<T> {
    const r = await fetch(this.info.controlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.info.controlToken}` },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`control ${request.op}: HTTP ${r.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  /** Samples the host's RSS and event-loop delay while `fn` runs. */
  async sample<T>(fn: () => Promise<T>): Promise<{ value: T; report: SamplerReport }> {
    await this.call({ op: 'sampler-start' });
    let value: T;
    try {
      value = await fn();
    } catch (err) {
      await this.call({ op: 'sampler-stop' }).catch(() => undefined);
      throw err;
    }
    return { value, report: await this.call<SamplerReport>({ op: 'sampler-stop' }) };
  }
}

interface LoopDelay {
  readonly maxMs: number;
  readonly p99Ms: number;
}

/**
 * The machine's own noise floor for event-loop delay: an idle Node process running the same monitor while the host
 * is measured. On a shared machine a thread that is not scheduled shows up as delay in both.
 */
class IdleProbe {
  private readonly child: ChildProcess;
  private readonly output: Promise<string>;

  constructor(resources: Resources) {
    const script = [
      "const { monitorEventLoopDelay } = require('node:perf_hooks');",
      `const h = monitorEventLoopDelay({ resolution: ${LOOP_RESOLUTION_MS} });`,
      'h.enable();',
      "process.stdin.once('data', () => {",
      '  h.disable();',
      '  process.stdout.write(JSON.stringify({ maxMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 }), () => process.exit(0));',
      '});',
    ].join('\n');
    this.child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'ignore'] });
    const child = this.child;
    resources.add(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    this.output = new Promise((resolve, reject) => {
      let text = '';
      child.stdout?.on('data', (c: Buffer) => (text += c.toString()));
      child.on('error', reject);
      child.on('close', () => resolve(text));
    });
  }

  async stop(): Promise<LoopDelay> {
    this.child.stdin?.end('stop\n');
    return JSON.parse(await this.output) as LoopDelay;
  }
}

/** The floor of protocol.ts in a child Node process of its own: out of the extension host, still a process hop. */
async function startFloorProcess(sampleFile: string, resources: Resources): Promise<{ url: string }> {
  const script = [
    `const fs = require('node:fs');`,
    `const { startJsonFloor } = require(${JSON.stringify(path.join(__dirname, 'protocol.js'))});`,
    `startJsonFloor(fs.readFileSync(${JSON.stringify(sampleFile)}, 'utf8')).then((f) => console.log(f.url));`,
    `process.stdin.on('end', () => process.exit(0)).resume();`,
  ].join('\n');
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  resources.add(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
      const m = /^(http:\S+)$/m.exec(text);
      if (m) resolve(m[1] as string);
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`the floor process exited (${code})`)));
  });
  return { url };
}

interface Mcp {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

async function connectMcp(info: ControlInfo, name: string): Promise<Mcp> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(info.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${info.mcpToken}` } } });
  await client.connect(transport);
  // As an agent does: list tools once (the client then checks structuredContent against each outputSchema).
  await client.listTools();
  return { client, transport };
}

async function closeMcp(m: Mcp): Promise<void> {
  await m.transport.terminateSession().catch(() => undefined);
  await m.client.close().catch(() => undefined);
}

async function call<T>(client: Client, name: string, args: Record<string, unknown>, timeoutMs = 120_000): Promise<T> {
  const r = (await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.type === 'text' ? r.content[0].text.slice(0, 500) : '?'}`);
  return r.structuredContent as T;
}

// ---------------------------------------------------------------------------------------------------------------
// Results

/** One line of the summary table: a target and what this run measured against it. */
interface Verdict {
  readonly what: string;
  readonly against: string;
  readonly ours: string;
  readonly baseline: string;
  /** The ratio (ours / baseline, or throughput ours / baseline) or the absolute value, formatted. */
  readonly result: string;
  readonly target: string;
  readonly pass: boolean;
  /** The number the verdict was taken on. */
  readonly value: number;
}

interface GroupOutput {
  readonly group: GroupResult;
  readonly verdicts: readonly Verdict[];
}

const msCell = (s: Stats): string => `${fmtMs(s.median)} / ${fmtMs(s.p99)} ms`;

function loopVerdict(what: string, hostMaxMs: number, idle: LoopDelay): Verdict {
  return {
    what,
    against: 'an idle Node process on the same machine (noise floor)',
    ours: `max ${hostMaxMs.toFixed(1)} ms`,
    baseline: `max ${idle.maxMs.toFixed(1)} ms`,
    result: `${hostMaxMs.toFixed(1)} ms`,
    target: `< ${LOOP_BUDGET_MS} ms`,
    pass: hostMaxMs < LOOP_BUDGET_MS,
    value: hostMaxMs,
  };
}

function ratioVerdict(what: string, against: string, ours: Stats, base: Stats, target: number): Verdict {
  const value = ours.median / base.median;
  return { what, against, ours: msCell(ours), baseline: msCell(base), result: `${value.toFixed(2)}x`, target: `≤ ${target}x`, pass: value <= target, value };
}

// ---------------------------------------------------------------------------------------------------------------
// The groups

interface Rig {
  readonly sizes: Sizes;
  readonly info: ControlInfo;
  readonly control: Control;
  readonly mcp: Mcp;
  readonly workDir: string;
  readonly treeDir: string;
  readonly scratchDir: string;
  readonly workId: string;
  readonly treeId: string;
  readonly treeTs: number;
  readonly sample: string;
  readonly resources: Resources;
}

async function readGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes, info, mcp } = rig;
  const args = { workspace_id: rig.workId, path: SAMPLE_FILE };
  const first = await call<{ content: string }>(mcp.client, 'read', args);
  if (first.content !== rig.sample) throw new Error('read did not return the sample file');

  const jsonHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const rpc = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read', arguments: args } });

  // Raw JSON-RPC over fetch against the extension, its own session: no SDK client.
  const baseHeaders = { ...jsonHeaders, authorization: `Bearer ${info.mcpToken}` };
  const init = await fetch(info.mcpUrl, {
    method: 'POST',
    headers: baseHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
  });
  const sid = init.headers.get('mcp-session-id');
  await init.text();
  if (!sid) throw new Error(`raw initialize returned no session id (HTTP ${init.status})`);
  const rawHeaders = { ...baseHeaders, 'mcp-session-id': sid, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  await (await fetch(info.mcpUrl, { method: 'POST', headers: rawHeaders, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  rig.resources.add(() => fetch(info.mcpUrl, { method: 'DELETE', headers: rawHeaders }).then((r) => r.text()));
  let rawId = 1;
  const raw = async (): Promise<string> => (await fetch(info.mcpUrl, { method: 'POST', headers: rawHeaders, body: rpc(rawId++) })).text();
  const ping = async (): Promise<string> => (await fetch(info.mcpUrl, { method: 'POST', headers: rawHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: rawId++, method: 'ping' }) })).text();

  // The floor in the extension host, and the same floor in this process (out of the host).
  let floorId = 1;
  const floorCall = (url: string) => async (): Promise<unknown> => (await fetch(url, { method: 'POST', headers: jsonHeaders, body: rpc(floorId++) })).json();
  const outside = await startFloorProcess(path.join(rig.workDir, SAMPLE_FILE), rig.resources);

  // The same call over the 2026-07-28 revision (stateless, the SDK's v2 handler), from the v2 client.
  const modern = new ClientV2({ name: 'bench-2026', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await modern.connect(new TransportV2(new URL(info.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${info.mcpToken}` } } }));
  if (modern.getProtocolEra() !== 'modern') throw new Error('the v2 client did not negotiate 2026-07-28');
  rig.resources.add(() => modern.close());

  const oursBytes = Buffer.byteLength(await raw());
  const floorBytes = Buffer.byteLength(JSON.stringify(await floorCall(info.floorUrl)()));

  const NAMES = {
    ours: 'ours: SDK client → extension `read`',
    modern: 'ours, 2026-07-28: v2 SDK client → extension `read` (stateless)',
    floor: 'floor: fetch → bare node:http JSON server in the extension host',
    raw: 'diag: raw fetch JSON-RPC → extension `read`',
    outside: 'diag: the same floor in a separate, idle Node process',
    ping: 'diag: raw fetch JSON-RPC `ping` → extension (no tool)',
    clientPing: 'diag: SDK client `ping` → extension (no tool)',
  } as const;
  const contenders: Contender[] = [
    { name: NAMES.ours, run: () => mcp.client.callTool({ name: 'read', arguments: args }) },
    { name: NAMES.modern, run: () => modern.callTool({ name: 'read', arguments: args }) },
    { name: NAMES.floor, run: floorCall(info.floorUrl) },
    { name: NAMES.raw, run: raw },
    { name: NAMES.outside, run: floorCall(outside.url) },
    { name: NAMES.ping, run: ping },
    { name: NAMES.clientPing, run: () => mcp.client.ping() },
  ];
  const samples = await interleave(contenders, {
    warmupRounds: sizes.readWarmupRounds,
    rounds: sizes.readRounds,
    perRound: sizes.readPerRound,
    onRound: (r, total) => log(`read: round ${r}/${total}`),
  });
  const s = (k: keyof typeof NAMES): Stats => summarize(samples.get(NAMES[k]) ?? []);
  const rows: Row[] = [
    { contender: NAMES.ours, stats: s('ours'), note: `2025-11-25 session; response ${oursBytes} B (text + structuredContent)` },
    { contender: NAMES.modern, stats: s('modern'), note: 'a server instance per request, envelope and standard headers checked' },
    { contender: NAMES.floor, stats: s('floor'), note: `response ${floorBytes} B; JSON.parse of the request, JSON.stringify of the answer` },
    { contender: NAMES.raw, stats: s('raw'), note: 'no SDK client: fetch + response.text()' },
    { contender: NAMES.outside, stats: s('outside'), note: 'the floor out of the extension host, still one process hop away' },
    { contender: NAMES.ping, stats: s('ping'), note: 'the same session as the raw row: HTTP host, transport and SDK protocol, no tool' },
    { contender: NAMES.clientPing, stats: s('clientPing'), note: 'the SDK on both ends and the HTTP host, no tool: what any tool call pays before its own work' },
  ];
  const r = (a: keyof typeof NAMES, b: keyof typeof NAMES, label: string) => ({ label, value: s(a).median / s(b).median });
  return {
    group: {
      title: 'read: 4 KiB file',
      description: 'Latency of one call, client to client, interleaved in rounds with a rotating start. Lower is better.',
      rows,
      ratios: [
        r('ours', 'floor', 'ours / in-host floor'),
        r('modern', 'ours', 'ours 2026-07-28 / ours 2025-11-25'),
        r('raw', 'floor', 'diag: raw fetch → ours / in-host floor (cost without the SDK client)'),
        r('ours', 'raw', 'diag: SDK client → ours / raw fetch → ours (the SDK client)'),
        r('floor', 'outside', 'diag: in-host floor / floor in an idle process (what sharing the extension host costs)'),
        r('ping', 'floor', 'diag: raw fetch `ping` / in-host floor (the path without the tool)'),
        r('clientPing', 'floor', 'diag: SDK client `ping` / in-host floor (the protocol on both ends, no tool)'),
      ],
      notes: [`${sizes.readWarmupRounds * sizes.readPerRound} warm-up calls, then ${sizes.readRounds * sizes.readPerRound} measured calls per contender in rounds of ${sizes.readPerRound}.`],
    },
    verdicts: [ratioVerdict('`read` of 4 KiB', 'bare HTTP JSON POST floor in the same extension host', s('ours'), s('floor'), 1.5)],
  };
}

async function findGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes, mcp } = rig;
  const args = { workspace_id: rig.treeId, pattern: FIND_PATTERN, max_results: FIND_MAX_RESULTS };
  const ours = async (): Promise<string[]> => {
    const r = await call<{ paths: string[]; truncated: boolean }>(mcp.client, 'find', args, 300_000);
    if (r.truncated) throw new Error(`find truncated its result at ${r.paths.length} paths: is codespace.limits.findResults ${FIND_MAX_RESULTS}?`);
    return r.paths;
  };
  const oursPaths = await ours();
  const rgPaths = await runRg(rig.treeDir);
  const notes = [`Workspace folder: 50,000 files in 2,047 folders (bench/findThroughput.ts ensureTree), ${rig.treeTs} of them .ts; max_results ${FIND_MAX_RESULTS}.`];
  const rgSet = new Set(rgPaths);
  const same = oursPaths.length === rgPaths.length && oursPaths.every((p) => rgSet.has(p));
  if (oursPaths.length !== rig.treeTs || !same) notes.push(`WARNING: ours returned ${oursPaths.length} paths, rg ${rgPaths.length}, the generator wrote ${rig.treeTs}.`);
  else notes.push(`Both return the same ${oursPaths.length} paths.`);

  const NAMES = {
    ours: 'ours: SDK client → extension `find`',
    rg: "rg --files -g '*.ts' (child process, spawn included)",
    findFiles: 'diag: vscode.workspace.findFiles in the extension host (what `find` is built on)',
  } as const;
  const hostFindFiles: FindFilesReport[] = [];
  const findFiles = async (): Promise<void> => {
    hostFindFiles.push(await rig.control.call<FindFilesReport>({ op: 'find-files', root: rig.treeDir, pattern: FIND_PATTERN, maxResults: FIND_MAX_RESULTS + 1 }));
  };
  const { value: samples, report } = await rig.control.sample(() =>
    interleave(
      [
        { name: NAMES.ours, run: ours },
        { name: NAMES.rg, run: () => runRg(rig.treeDir) },
        { name: NAMES.findFiles, run: findFiles },
      ],
      { warmupRounds: sizes.findWarmupRounds, rounds: sizes.findRounds, perRound: 1, onRound: (r, total) => log(`find: round ${r}/${total}`) },
    ),
  );
  const s = (k: keyof typeof NAMES): Stats =>
    // findFiles: the host's own time, without the control round trip.
    k === 'findFiles' ? summarize(hostFindFiles.slice(sizes.findWarmupRounds).map((r) => r.ms)) : summarize(samples.get(NAMES[k]) ?? []);
  notes.push(`Extension host during the find rounds: event-loop delay max ${report.loopMaxMs.toFixed(1)} ms, p99 ${report.loopP99Ms.toFixed(1)} ms; RSS ${mib(report.rssBaselineBytes)} → peak ${mib(report.rssPeakBytes)}.`);
  return {
    group: {
      title: `find: '${FIND_PATTERN}' over 50,000 files`,
      description: 'Time of one complete listing, client to client. Lower is better.',
      rows: [
        { contender: NAMES.ours, stats: s('ours'), note: `${oursPaths.length} paths` },
        { contender: NAMES.rg, stats: s('rg'), note: `${rgPaths.length} paths` },
        { contender: NAMES.findFiles, stats: s('findFiles'), note: `${hostFindFiles[0]?.count ?? 0} URIs; timed inside the host; VS Code's search service (ripgrep behind the workbench)` },
      ],
      ratios: [
        { label: 'ours / rg', value: s('ours').median / s('rg').median },
        { label: 'diag: findFiles / rg (VS Code\'s own search path)', value: s('findFiles').median / s('rg').median },
        { label: 'diag: ours / findFiles (what the tool adds on top)', value: s('ours').median / s('findFiles').median },
      ],
      notes,
    },
    verdicts: [ratioVerdict(`\`find ${FIND_PATTERN}\` over 50,000 files`, '`rg --files`', s('ours'), s('rg'), 1.5)],
  };
}

/** Puts the case's files back in place (the patch only updates them, so overwriting restores the start state). */
function restore(dir: string, files: ReadonlyMap<string, string>): void {
  for (const [rel, content] of files) {
    const abs = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

interface CaseMeasure {
  readonly ours: Stats;
  readonly git: Stats;
  readonly reports: readonly SamplerReport[];
  readonly idle: LoopDelay;
  /** Our warm-up applies (with `untilChecked`: the first of this kind in the window). */
  readonly warmOurs: readonly number[];
  /** With `untilChecked`: from the end of the warm-up until `diagnostics` answered settled for the files. */
  readonly checkedAfterMs?: number;
  /** With `quiet`: each measured round's wait for a quiet machine after the pause (both contenders), and the misses. */
  readonly quietWaits: readonly number[];
  readonly notQuiet: number;
}

let patchKey = 0;

/**
 * One patch case, `apply_patch` against `git apply` of the same change, interleaved in rounds with a rotating start.
 * Both start from the same files, rewritten before each apply (then PATCH_SETTLE_MS for the file watcher).
 */
async function measureCase(rig: Rig, c: Case, tag: string, options: { untilChecked?: boolean; settleMs?: number; quiet?: boolean } = {}): Promise<CaseMeasure> {
  const settleMs = options.settleMs ?? PATCH_SETTLE_MS;
  const quietWaits: number[] = [];
  let notQuiet = 0;
  let measuring = false;
  const settle = async (): Promise<void> => {
    await sleep(settleMs);
    if (!options.quiet) return;
    const q = await untilQuiet(PATCH_QUIET_MAX_MS);
    if (!measuring) return;
    quietWaits.push(q.ms);
    if (!q.quiet) notQuiet++;
  };
  const { sizes, mcp } = rig;
  const patchFile = path.join(rig.scratchDir, `change-${tag}.diff`);
  fs.writeFileSync(patchFile, c.gitDiff);
  const expected: Record<string, string> = {};
  for (const [rel, content] of c.files) expected[rel] = sha256(content);
  const samples = { ours: [] as number[], git: [] as number[] };
  const warmOurs: number[] = [];
  let checkedAfterMs: number | undefined;
  const reports: SamplerReport[] = [];
  const contenders: Record<keyof typeof samples, () => Promise<number>> = {
    ours: async () => {
      restore(rig.workDir, c.files);
      await settle();
      let ms = 0;
      const { value, report } = await rig.control.sample(async () => {
        const t0 = performance.now();
        const r = await call<{ status: string; reason?: string }>(mcp.client, 'apply_patch', {
          workspace_id: rig.workId,
          patch: c.v4a,
          expected_versions: expected,
          operation_key: `bench-editor-${process.pid}-${patchKey++}`,
        });
        ms = performance.now() - t0;
        return r;
      });
      if (value.status !== 'applied') throw new Error(`apply_patch answered ${value.status} (${value.reason ?? ''}) on ${c.name}`);
      reports.push(report);
      verify(rig.workDir, c.after, 'apply_patch');
      return ms;
    },
    // git applies the same change to the same files, in the same folders, so both pay what those folders cost: the
    // editor's file watcher reacting to each write, and creating a file, which on one ext4 disk here cost from 17 µs
    // to 516 µs depending on the folder. A copy of git's own, in fresh folders no watcher sees, measured something else.
    git: async () => {
      restore(rig.workDir, c.files);
      await settle();
      const t0 = performance.now();
      await gitApply(rig.workDir, patchFile);
      const ms = performance.now() - t0;
      verify(rig.workDir, c.after, 'git apply');
      return ms;
    },
  };
  const order = Object.keys(contenders) as (keyof typeof samples)[];
  const total = sizes.patchWarmupRounds + sizes.patchRounds;
  let idle: IdleProbe | undefined;
  for (let round = 0; round < total; round++) {
    const warm = round < sizes.patchWarmupRounds;
    if (round === sizes.patchWarmupRounds) {
      measuring = true;
      if (options.untilChecked) checkedAfterMs = await untilChecked(rig, [...c.files.keys()]);
      idle = new IdleProbe(rig.resources);
    }
    for (let k = 0; k < order.length; k++) {
      const name = order[(round + k) % order.length] as keyof typeof samples;
      const ms = await contenders[name]();
      if (!warm) samples[name].push(ms);
      else if (name === 'ours') warmOurs.push(ms);
    }
    if (warm) reports.length = 0;
    log(`${c.name}: round ${round + 1}/${total}${warm ? ' (warm-up)' : ''}`);
  }
  return { ours: summarize(samples.ours), git: summarize(samples.git), reports, idle: await (idle as IdleProbe).stop(), warmOurs, ...(checkedAfterMs !== undefined ? { checkedAfterMs } : {}), quietWaits, notQuiet };
}

/**
 * Untimed, after the warm-up: `diagnostics { paths, wait_ms }` until the files' last edit has a settled report, so a
 * language server the warm-up edits started (the TypeScript server, on the window's first .ts edit) has started and
 * checked them before the measured rounds. Files no server reports on answer at once. Returns how long it took.
 */
async function untilChecked(rig: Rig, rels: readonly string[]): Promise<number> {
  const t0 = performance.now();
  for (let attempt = 0; attempt < 3; attempt++) {
    const d = await call<{ settled: boolean }>(rig.mcp.client, 'diagnostics', { workspace_id: rig.workId, paths: rels, wait_ms: 10_000 });
    if (d.settled) break;
  }
  return performance.now() - t0;
}

/** The kinds of small file of the one-line edit group. */
const EDIT_KINDS = ['txt', 'md', 'json', 'ts', 'py'] as const;
const EDIT_TARGET = 3;

async function editGroup(rig: Rig): Promise<GroupOutput> {
  const rows: Row[] = [];
  const verdicts: Verdict[] = [];
  const ratios: { label: string; value: number; target: number }[] = [];
  for (const kind of EDIT_KINDS) {
    const c = oneLineCase(kind);
    const m = await measureCase(rig, c, `edit-${kind}`, { untilChecked: true, settleMs: EDIT_SETTLE_MS });
    rows.push(
      { contender: `ours: SDK client → extension \`apply_patch\` — ${c.name}`, stats: m.ours, note: 'default settings: diagnostics followed in the background where a language server reports on the file' },
      { contender: `git apply — ${c.name}`, stats: m.git, note: 'child process per apply' },
      {
        contender: `diag: ours, the ${m.warmOurs.length} warm-up applies — ${c.name}`,
        stats: summarize([...m.warmOurs]),
        note: `the first edits of this kind in the window (a language server that reports on it starts then); its first settled check came ${fmtMs(m.checkedAfterMs ?? 0)} ms after them`,
      },
    );
    ratios.push({ label: `ours / git apply, .${kind}`, value: m.ours.median / m.git.median, target: EDIT_TARGET });
    verdicts.push(ratioVerdict(`\`apply_patch\`, ${c.name}`, '`git apply`', m.ours, m.git, EDIT_TARGET));
  }
  return {
    group: {
      title: 'apply_patch vs git apply: a one-line edit of a small file, by kind of file',
      description: 'Same change, same start state, median wall time per apply, default settings. Lower is better.',
      rows,
      ratios,
      notes: [`Each file is rewritten and ${EDIT_SETTLE_MS} ms pass before each timed apply (both contenders: longer than the TypeScript extension's 300 ms delay before it checks a changed open file, plus the check); results are verified byte for byte outside the timed region. ${rig.sizes.patchWarmupRounds} warm-up + ${rig.sizes.patchRounds} measured rounds per kind, interleaved.`,
        'Between the warm-up and the measured rounds, untimed: `diagnostics { paths, wait_ms }` until the file has a settled report. The first edit of a kind that a language server reports on starts that server if nothing had started it (the TypeScript server: its extension activates in the extension host, the server process loads its libraries and builds the project), which takes the two CPUs for seconds, once per window; the measured rounds are the steady state of an agent editing, the `diag:` rows the first edits.',
      ],
    },
    verdicts,
  };
}

/** The TypeScript file of the time-to-see group: 20 clean lines, then line 10 made a type error and back. */
const SEE_FILE = 'see/probe.ts';
const SEE_CLEAN = 'export const value10: number = 10;';
const SEE_BROKEN = 'export const value10: number = "ten";';
/** Seeing the error should cost no more than every edit used to wait for the settle (1.7–1.8 s, one run). */
const SEE_TARGET_MS = 2000;
const SEE_DEADLINE_MS = 60_000;

interface SeenUpdate {
  readonly path: string;
  readonly items: { severity: string; code?: string }[];
}

async function seeGroup(rig: Rig): Promise<GroupOutput> {
  const { mcp } = rig;
  const lines = Array.from({ length: 20 }, (_, i) => `export const value${i}: number = ${i};`);
  fs.mkdirSync(path.join(rig.workDir, 'see'), { recursive: true });
  fs.writeFileSync(path.join(rig.workDir, ...SEE_FILE.split('/')), `${lines.join('\n')}\n`);
  const version = async (): Promise<string> => (await call<{ version: string }>(mcp.client, 'read', { workspace_id: rig.workId, path: SEE_FILE })).version;
  const edit = async (from: string, to: string): Promise<{ ms: number; pending: boolean }> => {
    const v = await version();
    const t0 = performance.now();
    const r = await call<{ status: string; diagnostics?: { pending: boolean } }>(mcp.client, 'apply_patch', {
      workspace_id: rig.workId,
      patch: `*** Begin Patch\n*** Update File: ${SEE_FILE}\n@@\n-${from}\n+${to}\n*** End Patch`,
      expected_versions: { [SEE_FILE]: v },
      operation_key: `bench-see-${process.pid}-${patchKey++}`,
    });
    if (r.status !== 'applied') throw new Error(`apply_patch answered ${r.status}`);
    return { ms: performance.now() - t0, pending: r.diagnostics?.pending === true };
  };
  const hasError = (items: { severity: string; code?: string }[]): boolean => items.some((d) => d.severity === 'error' && d.code === '2322');
  /** Back to the clean file, and every report about it taken (so the next round starts from nothing pending). */
  const reset = async (): Promise<void> => {
    await edit(SEE_BROKEN, SEE_CLEAN);
    const deadline = performance.now() + SEE_DEADLINE_MS;
    for (;;) {
      const d = await call<{ diagnostics: { severity: string; code?: string }[]; settled: boolean }>(mcp.client, 'diagnostics', { workspace_id: rig.workId, paths: [SEE_FILE], wait_ms: 30_000 });
      if (d.settled && !hasError(d.diagnostics)) return;
      if (performance.now() > deadline) throw new Error('the fixed file still reports the type error');
    }
  };
  // Through the next result: the agent keeps working (a cheap `read` every 20 ms) and looks at diagnostics_update.
  const viaNextResult = async (): Promise<{ seen: number; edit: number; pending: boolean }> => {
    const t0 = performance.now();
    const e = await edit(SEE_CLEAN, SEE_BROKEN);
    for (;;) {
      const r = await call<{ diagnostics_update?: SeenUpdate[] }>(mcp.client, 'read', { workspace_id: rig.workId, path: SAMPLE_FILE });
      if (r.diagnostics_update?.some((u) => u.path === SEE_FILE && hasError(u.items))) return { seen: performance.now() - t0, edit: e.ms, pending: e.pending };
      if (performance.now() - t0 > SEE_DEADLINE_MS) throw new Error('the type error never reached a result');
      await sleep(20);
    }
  };
  // Through diagnostics: the agent asks right after the edit, and diagnostics waits for the report.
  const viaDiagnostics = async (): Promise<{ seen: number; edit: number; pending: boolean }> => {
    const t0 = performance.now();
    const e = await edit(SEE_CLEAN, SEE_BROKEN);
    for (;;) {
      const d = await call<{ diagnostics: { severity: string; code?: string }[] }>(mcp.client, 'diagnostics', { workspace_id: rig.workId, paths: [SEE_FILE], wait_ms: 30_000 });
      if (hasError(d.diagnostics)) return { seen: performance.now() - t0, edit: e.ms, pending: e.pending };
      if (performance.now() - t0 > SEE_DEADLINE_MS) throw new Error('diagnostics never showed the type error');
    }
  };
  // The file starts clean: make it broken once so the first reset has something to fix, and warm the server up.
  await edit(SEE_CLEAN, SEE_BROKEN);
  const rounds = Math.max(3, Math.ceil(rig.sizes.patchRounds / 2) + 1);
  const next: { seen: number; edit: number; pending: boolean }[] = [];
  const asked: { seen: number; edit: number; pending: boolean }[] = [];
  for (let round = 0; round < rounds + 1; round++) {
    const warm = round === 0;
    for (const [list, run] of round % 2 === 0 ? ([[next, viaNextResult], [asked, viaDiagnostics]] as const) : ([[asked, viaDiagnostics], [next, viaNextResult]] as const)) {
      await reset();
      const r = await run();
      if (!warm) list.push(r);
    }
    log(`see: round ${round + 1}/${rounds + 1}${warm ? ' (warm-up)' : ''}`);
  }
  const nextSeen = summarize(next.map((x) => x.seen));
  const askedSeen = summarize(asked.map((x) => x.seen));
  const edits = summarize([...next, ...asked].map((x) => x.edit));
  const allPending = [...next, ...asked].every((x) => x.pending);
  const seenVerdict = (what: string, st: Stats): Verdict => ({
    what,
    against: 'the settle every edit waited for before',
    ours: msCell(st),
    baseline: '—',
    result: `${fmtMs(st.median)} ms`,
    target: `≤ ${SEE_TARGET_MS} ms`,
    pass: st.median <= SEE_TARGET_MS,
    value: st.median,
  });
  return {
    group: {
      title: 'Time until the agent has seen a type error its edit introduced (TypeScript, default settings)',
      description: `A one-line \`apply_patch\` of a 20-line .ts file in the workspace makes \`${SEE_BROKEN}\` (TS2322). Timed from sending the edit to the first answer that shows the error. Lower is better.`,
      rows: [
        { contender: 'ours: edit, then the next results (a `read` every 20 ms) until `diagnostics_update` shows the error', stats: nextSeen, note: '' },
        { contender: 'ours: edit, then `diagnostics { paths, wait_ms }` until it shows the error', stats: askedSeen, note: '' },
        { contender: 'ours: the edit itself (`apply_patch` of the .ts file, answered before the report)', stats: edits, note: allPending ? 'every edit answered with diagnostics.pending: true' : 'WARNING: some edit answered without pending' },
      ],
      ratios: [],
      notes: [`1 warm-up + ${rounds} measured rounds of each way, alternating which goes first; before each, the file is fixed again and diagnostics confirms it clean.`],
    },
    verdicts: [seenVerdict('type error seen on the next result after the edit', nextSeen), seenVerdict('type error seen through `diagnostics` right after the edit', askedSeen)],
  };
}

/** A case with at least this many files also times its writes alone (replaceLoop.ts). */
const MANY_FILES = 100;

/**
 * A diagnosis of the many-file case: the writes of the apply alone, with nothing around them (no reading, planning,
 * journal, confinement or MCP), on the same files in the workspace, in rounds: temp + rename over each file in the
 * extension host (where `apply_patch` runs them), the same loop in a plain Node process, and `git apply`'s way of
 * writing (remove, create anew) in a plain Node process. Each run starts as a timed apply does: files reset, the
 * settle pause, a quiet machine; each result is checked byte for byte.
 */
async function measureReplaceLoops(rig: Rig, c: Case, tag: string): Promise<{ rows: Row[]; hostRename: Stats; plainRename: Stats; plainRecreate: Stats }> {
  const listFile = path.join(rig.scratchDir, `replace-${tag}.json`);
  fs.writeFileSync(listFile, JSON.stringify([...c.after].map(([rel, content]) => [path.join(rig.workDir, ...rel.split('/')), content])));
  const script = path.join(__dirname, 'replaceLoop.js');
  const plain = (way: ReplaceWay): ReplaceLoopReport => JSON.parse(execFileSync(process.execPath, [script, listFile, way], { encoding: 'utf8' })) as ReplaceLoopReport;
  const runs: Record<'hostRename' | 'plainRename' | 'plainRecreate', () => Promise<ReplaceLoopReport>> = {
    hostRename: () => rig.control.call<ReplaceLoopReport>({ op: 'replace-loop', listFile, way: 'rename' }),
    plainRename: async () => plain('rename'),
    plainRecreate: async () => plain('recreate'),
  };
  const keys = Object.keys(runs) as (keyof typeof runs)[];
  const samples = new Map<keyof typeof runs, number[]>(keys.map((k) => [k, []]));
  const total = rig.sizes.patchWarmupRounds + rig.sizes.patchRounds;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < keys.length; k++) {
      const key = keys[(round + k) % keys.length] as keyof typeof runs;
      restore(rig.workDir, c.files);
      await sleep(PATCH_SETTLE_MS);
      await untilQuiet(PATCH_QUIET_MAX_MS);
      const report = await runs[key]();
      if (report.files !== c.after.size) throw new Error(`the ${key} loop wrote ${report.files} of ${c.after.size} files`);
      verify(rig.workDir, c.after, `the ${key} loop`);
      if (round >= rig.sizes.patchWarmupRounds) samples.get(key)?.push(report.ms);
    }
    log(`${c.name}: the writes alone, round ${round + 1}/${total}`);
  }
  const st = (k: keyof typeof runs): Stats => summarize(samples.get(k) ?? []);
  const n = c.after.size;
  return {
    rows: [
      { contender: `diag: the writes alone, in the extension host — ${c.name}`, stats: st('hostRename'), note: `temp file + rename over each of the ${n} files, nothing else; how apply_patch writes` },
      { contender: `diag: the same writes in a plain Node process — ${c.name}`, stats: st('plainRename'), note: 'the same loop, same files, out of the editor' },
      { contender: `diag: git apply's way of writing, in a plain Node process — ${c.name}`, stats: st('plainRecreate'), note: `remove each of the ${n} files, create it anew (missing in between)` },
    ],
    hostRename: st('hostRename'),
    plainRename: st('plainRename'),
    plainRecreate: st('plainRecreate'),
  };
}

async function patchGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes } = rig;
  const rows: Row[] = [];
  const verdicts: Verdict[] = [];
  const notes: string[] = [];
  const cases: Case[] = [bigCase(), smallCase()];
  const replaceRatios: { label: string; value: number }[] = [];
  for (const [i, c] of cases.entries()) {
    const { ours, git, reports, idle: idleDelay, quietWaits, notQuiet } = await measureCase(rig, c, String(i), { quiet: true });
    rows.push(
      { contender: `ours: SDK client → extension \`apply_patch\` — ${c.name}`, stats: ours, note: `V4A patch ${(c.v4a.length / 1024).toFixed(0)} KiB; validate, ledger, ${c.files.size} atomic write(s) through confined node:fs; default settings` },
      { contender: `git apply — ${c.name}`, stats: git, note: `child process per apply; diff ${(c.gitDiff.length / 1024).toFixed(0)} KiB` },
    );
    const loopMax = Math.max(...reports.map((r) => r.loopMaxMs));
    const rssGrowth = Math.max(...reports.map((r) => r.rssPeakBytes - r.rssBaselineBytes));
    notes.push(`${c.name}: extension host event-loop delay max ${loopMax.toFixed(1)} ms over the ${reports.length} measured applies (p99 of the worst ${Math.max(...reports.map((r) => r.loopP99Ms)).toFixed(1)} ms); RSS growth during one apply at most ${mib(rssGrowth)}; an idle Node process over the same rounds: max ${idleDelay.maxMs.toFixed(1)} ms.`);
    const waits = summarize(quietWaits);
    notes.push(
      `${c.name}: the wait for a quiet machine before each measured apply (both contenders) took ${fmtMs(waits.median)} ms median, ${fmtMs(waits.max)} ms at most${notQuiet ? `; ${notQuiet} of ${quietWaits.length} waits ended at the ${PATCH_QUIET_MAX_MS / 1000} s limit without quiet` : ''}.`,
    );
    verdicts.push(ratioVerdict(`\`apply_patch\`, ${c.name}`, '`git apply`', ours, git, 1.5));
    if (i === 0) verdicts.push(loopVerdict(`extension host event-loop delay during \`apply_patch\` of the ${c.name}`, loopMax, idleDelay));
    if (c.files.size >= MANY_FILES) {
      const loops = await measureReplaceLoops(rig, c, String(i));
      rows.push(...loops.rows);
      replaceRatios.push(
        { label: `diag: ${c.name}, the writes alone (temp + rename) in the extension host / \`git apply\`'s whole run`, value: loops.hostRename.median / git.median },
        { label: `diag: ${c.name}, the writes alone (temp + rename), extension host / plain Node process`, value: loops.hostRename.median / loops.plainRename.median },
        { label: `diag: ${c.name}, temp + rename / remove + create, both in a plain Node process`, value: loops.plainRename.median / loops.plainRecreate.median },
      );
    }
  }
  // Where the time of a patch goes: the same file operations through vscode.workspace.fs and node:fs, in the host.
  const probeFile = path.join(rig.workDir, 'probe.ts');
  fs.writeFileSync(probeFile, rig.sample);
  log(`patch: file-system probe, ${sizes.fsProbeIterations} iterations…`);
  const probe = await rig.control.call<FsProbeReport>({ op: 'probe-fs', file: probeFile, iterations: sizes.fsProbeIterations });
  const probeRows: [string, number[], string][] = [
    ['diag: vscode.workspace.fs.stat in the extension host', probe.vscodeStat, '4 KiB file'],
    ['diag: fs.promises.stat in the extension host', probe.nodeStat, ''],
    ['diag: vscode.workspace.fs.readFile in the extension host', probe.vscodeRead, ''],
    ['diag: fs.promises.readFile in the extension host', probe.nodeRead, ''],
    ['diag: vscode.workspace.fs writeFile + rename in the extension host', probe.vscodeWriteRename, 'temp file, then rename over the file'],
    ['diag: fs.promises writeFile + rename in the extension host', probe.nodeWriteRename, ''],
  ];
  for (const [contender, ms, note] of probeRows) rows.push({ contender, stats: summarize(ms), note });
  const pr = (a: number[], b: number[]) => summarize(a).median / summarize(b).median;
  const ratios = [
    { label: 'diag: stat, vscode.workspace.fs / node:fs', value: pr(probe.vscodeStat, probe.nodeStat) },
    { label: 'diag: readFile, vscode.workspace.fs / node:fs', value: pr(probe.vscodeRead, probe.nodeRead) },
    { label: 'diag: writeFile + rename, vscode.workspace.fs / node:fs', value: pr(probe.vscodeWriteRename, probe.nodeWriteRename) },
    ...replaceRatios,
  ];
  notes.push(
    `Targets are reset (files rewritten in place; git applies the same change to the same files in the workspace), ${PATCH_SETTLE_MS} ms pass, and then the bench waits until the machine's CPUs are at most ${QUIET_BUSY * 100}% busy over ${QUIET_WINDOW_MS} ms (at most ${PATCH_QUIET_MAX_MS / 1000} s) before each timed apply: the editor's reaction to the reset and the previous apply's diagnostics follow-up are over, as they are when an agent's next patch comes a model turn later. Results are verified byte for byte outside the timed region. ${sizes.patchWarmupRounds} warm-up + ${sizes.patchRounds} measured rounds per case, interleaved.`,
  );
  return { group: { title: 'apply_patch vs git apply', description: 'Same change, same start state, median wall time per apply. Lower is better.', rows, ratios, notes }, verdicts };
}

interface Streamed {
  readonly ms: number;
  readonly received: number;
  readonly written: number;
  readonly reads: number;
  readonly lost: boolean;
  /** Bytes read_process reported lost (its `lost` ranges): with `received`, all of `written`. */
  readonly lostBytes: number;
  /** Ended by terminate_process when over its time budget. */
  readonly cut: boolean;
}

/**
 * exec_command on a PTY, then read_process until eof, as an agent streaming the output does. `maxBytes` is the page
 * asked for; `'default'` leaves `max_bytes` out, so the agent gets the default page (64 KiB).
 */
async function streamThroughExtension(rig: Rig, bytes: number, budgetMs = Number.POSITIVE_INFINITY, maxBytes: number | 'default' = READ_MAX_BYTES): Promise<Streamed> {
  const { client } = rig.mcp;
  const t0 = performance.now();
  const { process_id } = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: rig.workId, command: flood(bytes), tty: true });
  let cursor = 0;
  let received = 0;
  let reads = 0;
  let lost = false;
  let lostBytes = 0;
  let cut = false;
  for (;;) {
    const r = await call<{ chunk: string; cursor: number; eof: boolean; output_lost: boolean; lost?: { from: number; to: number } }>(client, 'read_process', { process_id, cursor, ...(maxBytes !== 'default' ? { max_bytes: maxBytes } : {}), wait_ms: READ_WAIT_MS });
    reads++;
    received += r.chunk.length;
    lost ||= r.output_lost;
    lostBytes += r.lost ? r.lost.to - r.lost.from : 0;
    cursor = r.cursor;
    if (r.eof) break;
    if (!cut && performance.now() - t0 > budgetMs) {
      cut = true;
      log(`the flood is over its time budget after ${mib(cursor)}: terminate_process`);
      await call(client, 'terminate_process', { process_id });
    }
  }
  const ms = performance.now() - t0;
  const status = await call<{ termination?: string; exit_code?: number }>(client, 'process_status', { process_id });
  const ok = cut ? status.termination !== undefined : status.termination === 'exited' && status.exit_code === 0;
  if (!ok) throw new Error(`the flood ended badly: ${JSON.stringify(status)}`);
  return { ms, received, written: cursor, reads, lost, lostBytes, cut };
}

/** The PTY group's CPU diagnosis: ms of CPU per second of each contender's measured runs, by kind of process. */
function cpuNotes(ours: ProcessCpu, bare: ProcessCpu): string[] {
  const o = ours.result();
  const b = bare.result();
  if (!o || !b) return [];
  return [
    `Diagnosis, CPU by process in ms per second of the runs (two cores give 2,000; \`/proc\` sampled every 250 ms, an idle process every second, by this runner, which counts its own sampling), during our runs: ${cpuLine(o)}.`,
    `The same during the bare runs: ${cpuLine(b)}.`,
  ];
}

async function ptyGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes } = rig;
  const command = flood(sizes.ptyBytes);
  const flows: Streamed[] = [];
  const bare: BarePtyReport[] = [];
  const NAMES = { ours: 'ours: exec_command tty + read_process loop (1 MiB, wait_ms 1000)', bare: 'bare node-pty in the extension host, onData counting bytes' } as const;
  log(`read_process: warm-up, ${mib(sizes.ptyWarmupBytes)} each`);
  await streamThroughExtension(rig, sizes.ptyWarmupBytes);
  await rig.control.call<BarePtyReport>({ op: 'bare-pty', command: flood(sizes.ptyWarmupBytes), cwd: rig.workDir });
  // Rounds alternate which contender goes first; past the time budget no further round starts.
  // Where the CPU goes during the measured runs of each contender (a diagnosis: /proc, sampled by this runner).
  const oursCpu = new ProcessCpu({ extensionHost: rig.info.hostPid });
  const bareCpu = new ProcessCpu({ extensionHost: rig.info.hostPid });
  const t0 = performance.now();
  let rounds = 0;
  while (rounds < sizes.ptyRounds && (rounds === 0 || performance.now() - t0 < sizes.ptyBudgetMs)) {
    const runOurs = async () => flows.push(await oursCpu.during(() => streamThroughExtension(rig, sizes.ptyBytes)));
    const runBare = async () => bare.push(await bareCpu.during(() => rig.control.call<BarePtyReport>({ op: 'bare-pty', command, cwd: rig.workDir })));
    for (const run of rounds % 2 === 0 ? [runOurs, runBare] : [runBare, runOurs]) await run();
    rounds++;
    log(`read_process: round ${rounds}/${sizes.ptyRounds}`);
  }
  const cut = rounds < sizes.ptyRounds ? ` (the ${sizes.ptyBudgetMs / 1000} s budget stopped it after ${rounds} of ${sizes.ptyRounds} rounds)` : '';
  // The bare contender's time is the host's own spawn-to-exit (no control round trip); ours is client to client.
  const bareMeasured = bare;
  const ours = summarize(flows.map((f) => f.ms));
  const base = summarize(bareMeasured.map((b) => b.ms));
  const throughput = base.median / ours.median;
  // Each round's own ratio: both runs of a round share the machine's load of that moment, which moves the bare
  // runs alone between 33 and 66 MB/s from one round to the next on a shared 2-core machine.
  const paired = summarize(flows.slice(0, bareMeasured.length).map((f, i) => (bareMeasured[i] as BarePtyReport).ms / f.ms));
  const last = flows[flows.length - 1] as Streamed;
  const shortBare = bareMeasured.filter((b) => b.bytes < sizes.ptyBytes).length;
  return {
    group: {
      title: `read_process: ${mib(sizes.ptyBytes)} of PTY output`,
      description: `\`${command.join(' ')}\` on a 24×80 PTY, spawn to eof. Lower is better.`,
      rows: [
        {
          contender: NAMES.ours,
          stats: ours,
          note: `${mbps(sizes.ptyBytes, ours.median).toFixed(0)} MB/s; the agent received ${mib(last.received)} of ${mib(last.written)} in ${last.reads} reads${last.lost ? ' (output_lost: the retained buffer overtook the reader)' : ''}; terminal mirror on`,
        },
        { contender: NAMES.bare, stats: base, note: `${mbps(sizes.ptyBytes, base.median).toFixed(0)} MB/s${shortBare ? `; ${shortBare} run(s) ended short (node-pty lost the tail)` : ''}` },
      ],
      ratios: [
        { label: 'throughput ours / bare node-pty (medians)', value: throughput },
        { label: `diag: each round's throughput ratio, median of ${paired.n} (from ${paired.min.toFixed(2)}x to ${paired.max.toFixed(2)}x)`, value: paired.median },
      ],
      notes: [`One ${mib(sizes.ptyWarmupBytes)} warm-up run of each, then ${rounds} measured rounds, alternating which goes first${cut}.`, ...cpuNotes(oursCpu, bareCpu)],
    },
    verdicts: [
      {
        what: `${mib(sizes.ptyBytes)} of PTY output through \`read_process\``,
        against: 'bare node-pty (throughput)',
        ours: `${mbps(sizes.ptyBytes, ours.median).toFixed(0)} MB/s (${fmtMs(ours.median)} / ${fmtMs(ours.p99)} ms)`,
        baseline: `${mbps(sizes.ptyBytes, base.median).toFixed(0)} MB/s (${fmtMs(base.median)} / ${fmtMs(base.p99)} ms)`,
        result: `${throughput.toFixed(2)}x`,
        target: '≥ 0.8x',
        pass: throughput >= 0.8,
        value: throughput,
      },
    ],
  };
}

/** One flood read by an agent asking for `maxBytes` pages (`'default'`: the default page), sampled by the extension host. */
async function floodOnce(rig: Rig, maxBytes: number | 'default'): Promise<{ flow: Streamed; report: SamplerReport; idleDelay: LoopDelay; growth: number }> {
  // Each flood starts from the extension host's live memory: a full collection first, so the growth is the flood's
  // and not the garbage an earlier group (or the other flood) left for V8 to collect when it chooses.
  await rig.control.call({ op: 'collect-garbage' });
  const idle = new IdleProbe(rig.resources);
  const { value: flow, report } = await rig.control.sample(() => streamThroughExtension(rig, rig.sizes.floodBytes, rig.sizes.floodBudgetMs, maxBytes));
  const idleDelay = await idle.stop();
  return { flow, report, idleDelay, growth: (report.rssPeakBytes - report.rssBaselineBytes) / MIB };
}

/**
 * Two floods, one after the other: the headline is an agent reading with the default page (64 KiB, what an agent
 * gets unless it asks for more); the second, a diagnosis, is an agent asking for the largest page (1 MiB, which the
 * 256 KiB retained output caps), the worst case for the answers' size.
 */
async function floodGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes } = rig;
  log(`flood: ${mib(sizes.floodBytes)}, an agent reading with the default page, terminal mirror on…`);
  const byDefault = await floodOnce(rig, 'default');
  log(`flood (diagnosis): ${mib(sizes.floodBytes)}, an agent asking for ${mib(READ_MAX_BYTES)} pages…`);
  const largest = await floodOnce(rig, READ_MAX_BYTES);
  const cutNote = (flow: Streamed): string => (flow.cut ? ` (cut by the ${sizes.floodBudgetMs / 1000} s budget after ${mib(flow.written)})` : '');
  const notes = (label: string, { flow, report, idleDelay, growth }: Awaited<ReturnType<typeof floodOnce>>): string[] => [
    `${label}: extension host RSS ${mib(report.rssBaselineBytes)} → peak ${mib(report.rssPeakBytes)} (growth ${growth.toFixed(1)} MiB), final ${mib(report.rssFinalBytes)}; ${report.rssSamples} samples.`,
    `${label}, at the RSS peak (diagnostic): V8 heap ${mib(report.memoryBaseline.heapTotal)} → ${mib(report.memoryAtPeak.heapTotal)} (used ${mib(report.memoryBaseline.heapUsed)} → ${mib(report.memoryAtPeak.heapUsed)}), outside the heap ${mib(report.memoryBaseline.external)} → ${mib(report.memoryAtPeak.external)} (of it array buffers ${mib(report.memoryBaseline.arrayBuffers)} → ${mib(report.memoryAtPeak.arrayBuffers)}).`,
    `${label}, V8 heap by space (diagnostic), start → at the RSS peak: ${spaceLine(report.memoryBaseline, report.memoryAtPeak)}; the most each reached while sampling: heap used ${mib(report.memoryMax?.heapUsed ?? 0)}, outside the heap ${mib(report.memoryMax?.external ?? 0)}, array buffers ${mib(report.memoryMax?.arrayBuffers ?? 0)}, ${spaceLine(undefined, report.memoryMax)}${report.gc ? `; collections: ${report.gc.young} young, ${report.gc.full} full, ${report.gc.other} other, ${report.gc.pauseMs.toFixed(0)} ms in all` : ''}.`,
    `${label}: event-loop delay max ${report.loopMaxMs.toFixed(1)} ms, p99 ${report.loopP99Ms.toFixed(1)} ms, mean ${report.loopMeanMs.toFixed(2)} ms (an idle Node process meanwhile: max ${idleDelay.maxMs.toFixed(1)} ms, p99 ${idleDelay.p99Ms.toFixed(1)} ms).`,
    `${label}: the agent received ${mib(flow.received)} of ${mib(flow.written)} in ${flow.reads} reads${flow.lost ? `, output_lost set (the reader fell behind the retained buffer); the lost ranges it was told of add up to ${mib(flow.lostBytes)}, received + lost ${flow.received + flow.lostBytes === flow.written ? '=' : '≠'} written` : ''}${cutNote(flow)}; terminal mirror: ${report.mirrorTerminals} CodeSpace terminal(s), ${mib(report.mirrorChars)} of characters handed to them.`,
  ];
  const DEFAULT_ROW = 'ours: exec_command tty + read_process loop (default page, wait_ms 1000)';
  const LARGEST_ROW = `diagnosis: the same, asking for ${mib(READ_MAX_BYTES)} pages`;
  return {
    group: {
      title: `Flood: ${mib(sizes.floodBytes)} of PTY output read by an agent, terminal mirror on`,
      description: 'The extension host sampled itself: RSS every 20 ms, event-loop delay with perf_hooks.monitorEventLoopDelay. Each flood starts right after a full garbage collection. The headline reads with the default page; the diagnosis asks for the largest page.',
      rows: [
        { contender: DEFAULT_ROW, stats: summarize([byDefault.flow.ms]), note: `${mbps(byDefault.flow.written, byDefault.flow.ms).toFixed(0)} MB/s${cutNote(byDefault.flow)}` },
        { contender: LARGEST_ROW, stats: summarize([largest.flow.ms]), note: `${mbps(largest.flow.written, largest.flow.ms).toFixed(0)} MB/s${cutNote(largest.flow)}` },
      ],
      ratios: [],
      notes: [...notes('Default page', byDefault), ...notes(`Diagnosis, ${mib(READ_MAX_BYTES)} pages`, largest)],
    },
    verdicts: [
      rssVerdict(`extension host RSS growth during a ${mib(sizes.floodBytes)} flood${cutNote(byDefault.flow)} read by an agent (default page), terminal mirror on`, byDefault.growth),
      loopVerdict('extension host event-loop delay during the flood (default page)', byDefault.report.loopMaxMs, byDefault.idleDelay),
      rssVerdict(`diagnosis: RSS growth during the same flood read with ${mib(READ_MAX_BYTES)} pages`, largest.growth),
    ],
  };
}

/** V8's spaces that hold anything, `start → end` (or only `end`). */
function spaceLine(start: MemoryBreakdown | undefined, end: MemoryBreakdown | undefined): string {
  const names = Object.keys(end?.spaces ?? {}).filter((n) => (end?.spaces?.[n] ?? 0) >= MIB || (start?.spaces?.[n] ?? 0) >= MIB);
  const fig = (m: MemoryBreakdown | undefined, n: string): string => mib(m?.spaces?.[n] ?? 0);
  return names.map((n) => `${n.replace(/_space$/, '')} ${start ? `${fig(start, n)} → ` : ''}${fig(end, n)}`).join(', ') || 'no space over 1 MiB';
}

/** A verdict on RSS growth in MiB against RSS_BUDGET_MIB. */
function rssVerdict(what: string, growth: number): Verdict {
  return { what, against: '—', ours: `+${growth.toFixed(1)} MiB`, baseline: '—', result: `+${growth.toFixed(1)} MiB`, target: `< ${RSS_BUDGET_MIB} MiB`, pass: growth < RSS_BUDGET_MIB, value: growth };
}

async function sessionsGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes } = rig;
  const clients: Mcp[] = [];
  try {
    for (let i = 0; i < sizes.sessions; i++) clients.push(await connectMcp(rig.info, `bench-editor-session-${i}`));
    const args = { workspace_id: rig.workId, path: SAMPLE_FILE };
    log(`sessions: ${sizes.sessions} × ${sizes.callsPerSession} \`read\` calls…`);
    const t0 = performance.now();
    const deadline = t0 + sizes.sessionsBudgetMs;
    const idle = new IdleProbe(rig.resources);
    const { value: latencies, report } = await rig.control.sample(async () => {
      const perSession = await Promise.all(
        clients.map(async ({ client }) => {
          const out: number[] = [];
          for (let i = 0; i < sizes.callsPerSession && performance.now() < deadline; i++) {
            const t = performance.now();
            await call(client, 'read', args);
            out.push(performance.now() - t);
          }
          return out;
        }),
      );
      return perSession.flat();
    });
    const wall = performance.now() - t0;
    const idleDelay = await idle.stop();
    const calls = latencies.length;
    const planned = sizes.sessions * sizes.callsPerSession;
    const cutNote = calls < planned ? ` (cut by the ${sizes.sessionsBudgetMs / 1000} s budget at ${calls.toLocaleString('en-US')} of ${planned.toLocaleString('en-US')} calls)` : '';
    return {
      group: {
        title: `Sessions: ${sizes.sessions} × ${sizes.callsPerSession} \`read\` calls at once`,
        description: `${sizes.sessions} SDK clients, each its own session, each making ${sizes.callsPerSession} calls one after another, all at the same time.`,
        rows: [{ contender: 'ours: one `read` of 4 KiB, under load', stats: summarize(latencies), note: `${(calls / (wall / 1000)).toFixed(0)} calls/s over ${(wall / 1000).toFixed(1)} s${cutNote}` }],
        ratios: [],
        notes: [
          `Extension host event-loop delay: max ${report.loopMaxMs.toFixed(1)} ms, p99 ${report.loopP99Ms.toFixed(1)} ms, mean ${report.loopMeanMs.toFixed(2)} ms (an idle Node process meanwhile: max ${idleDelay.maxMs.toFixed(1)} ms, p99 ${idleDelay.p99Ms.toFixed(1)} ms).`,
          `Extension host RSS ${mib(report.rssBaselineBytes)} → peak ${mib(report.rssPeakBytes)}, final ${mib(report.rssFinalBytes)}.`,
        ],
      },
      verdicts: [
        loopVerdict(`extension host event-loop delay during ${sizes.sessions} sessions × ${sizes.callsPerSession.toLocaleString('en-US')} \`read\` calls${cutNote}`, report.loopMaxMs, idleDelay),
      ],
    };
  } finally {
    await Promise.all(clients.map(closeMcp));
  }
}

async function activationGroup(rig: Rig): Promise<GroupOutput> {
  const r = await measureActivation({ repoRoot: REPO_ROOT, rounds: rig.sizes.activationRounds, log });
  const row = r.group.rows[0];
  return {
    group: r.group,
    verdicts: [
      {
        what: 'activation: activate() → listening (packaged VSIX)',
        against: 'the budget',
        ours: row ? msCell(row.stats) : '?',
        baseline: '—',
        result: `${r.medianMs.toFixed(1)} ms`,
        target: `< ${ACTIVATION_BUDGET_MS} ms`,
        pass: r.medianMs < ACTIVATION_BUDGET_MS,
        value: r.medianMs,
      },
      {
        what: 'bundle: dist/extension.js (minified)',
        against: 'the budget',
        ours: `${(r.bundleBytes / 1024).toFixed(1)} KiB`,
        baseline: '—',
        result: `${(r.bundleBytes / 1024).toFixed(1)} KiB`,
        target: `< ${(BUNDLE_BUDGET_BYTES / 1024).toFixed(0)} KiB`,
        pass: r.bundleBytes < BUNDLE_BUDGET_BYTES,
        value: r.bundleBytes,
      },
    ],
  };
}

async function searchGroup(rig: Rig): Promise<GroupOutput> {
  const { sizes, mcp } = rig;
  let engine = '';
  const ours = async (): Promise<number> => {
    const r = await call<{ matches: unknown[]; engine: { source: string; path?: string } }>(mcp.client, 'search', { workspace_id: rig.treeId, query: SEARCH_QUERY, max_results: 1000 }, 300_000);
    engine = `${r.engine.source} ${r.engine.path ?? ''}`;
    return r.matches.length;
  };
  const oursCount = await ours();
  const rgCount = await runRgSearch(rig.treeDir);
  const NAMES = { ours: 'ours: SDK client → extension `search`', rg: `rg -F -i ${SEARCH_QUERY} (child process, spawn included)` } as const;
  const { value: samples, report } = await rig.control.sample(() =>
    interleave(
      [
        { name: NAMES.ours, run: ours },
        { name: NAMES.rg, run: () => runRgSearch(rig.treeDir) },
      ],
      { warmupRounds: sizes.findWarmupRounds, rounds: sizes.findRounds + 4, perRound: 1, onRound: (r, total) => log(`search: round ${r}/${total}`) },
    ),
  );
  const s = (k: keyof typeof NAMES): Stats => summarize(samples.get(NAMES[k]) ?? []);
  return {
    group: {
      title: `search: literal "${SEARCH_QUERY}" over 50,000 files`,
      description: 'Time of one complete search, client to client. Lower is better.',
      rows: [
        { contender: NAMES.ours, stats: s('ours'), note: `${oursCount} matching lines; engine: ${engine}` },
        { contender: NAMES.rg, stats: s('rg'), note: `${rgCount} matching lines (the system's rg)` },
      ],
      ratios: [{ label: 'ours / rg', value: s('ours').median / s('rg').median }],
      notes: [
        oursCount === rgCount ? `Both find the same ${oursCount} lines.` : `WARNING: ours ${oursCount} lines, rg ${rgCount}.`,
        `Extension host during the search rounds: event-loop delay max ${report.loopMaxMs.toFixed(1)} ms; RSS ${mib(report.rssBaselineBytes)} → peak ${mib(report.rssPeakBytes)}.`,
      ],
    },
    verdicts: [ratioVerdict(`\`search\` for a literal over 50,000 files`, '`rg -F` run directly', s('ours'), s('rg'), 1.5)],
  };
}

/**
 * In this order: activation first (its own code-server; it rebuilds dist/ as the VSIX's production build), the PTY
 * groups last, since a flood leaves the extension host busy and large for a while.
 */
const GROUPS: Record<string, (rig: Rig) => Promise<GroupOutput>> = {
  activation: activationGroup,
  toollist: (rig) => toolListGroup(rig.info),
  read: readGroup,
  find: findGroup,
  search: searchGroup,
  edit: editGroup,
  see: seeGroup,
  patch: patchGroup,
  sessions: sessionsGroup,
  pty: ptyGroup,
  flood: floodGroup,
};

/** Before a group: wait (up to 30 s) for a 1 s window in which the extension host's event loop stays under budget. */
async function settle(control: Control): Promise<string> {
  const t0 = performance.now();
  let last: SamplerReport | undefined;
  for (let i = 0; i < 30; i++) {
    last = (await control.sample(() => sleep(1000))).report;
    if (last.loopMaxMs < LOOP_BUDGET_MS) {
      return `Before this group the extension host was quiet after ${((performance.now() - t0) / 1000).toFixed(0)} s (event-loop delay max ${last.loopMaxMs.toFixed(1)} ms over 1 s; RSS ${mib(last.rssFinalBytes)}).`;
    }
  }
  return `WARNING: before this group the extension host did not quiet down within 30 s (last 1 s window: event-loop delay max ${last?.loopMaxMs.toFixed(1)} ms; RSS ${mib(last?.rssFinalBytes ?? 0)}).`;
}

// ---------------------------------------------------------------------------------------------------------------
// Setup and report

function version(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8' }).split('\n')[0]?.trim() ?? 'unknown';
  } catch {
    return 'not found';
  }
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'node_modules', ...name.split('/'), 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function environmentTable(info: ControlInfo, quick: boolean, noBudget: boolean, groups: readonly string[]): string {
  const cpus = os.cpus();
  return markdownTable(
    ['Environment', ''],
    [
      ['Date', new Date().toISOString()],
      ['VS Code (code-server, headless Chromium)', info.vscodeVersion],
      ['Extension host', `Node ${info.hostNode}, pid ${info.hostPid}`],
      ['Runner (MCP client, rg, git)', `Node ${process.version}, @modelcontextprotocol/sdk ${packageVersion('@modelcontextprotocol/sdk')}`],
      ['CPU', `${cpus[0]?.model.trim() ?? 'unknown'} × ${cpus.length}`],
      ['Load average (1/5/15 min)', os.loadavg().map((x) => x.toFixed(2)).join(' / ')],
      ['Memory', `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB total, ${(os.freemem() / 2 ** 30).toFixed(1)} GiB free`],
      ['Tools', `${version('/usr/bin/rg', ['--version'])}; ${version('git', ['--version'])}`],
      ['Mode', `${quick ? "QUICK (--quick): reduced sizes, not the targets' sizes" : 'full sizes'}; ${noBudget ? 'no time budgets (--no-budget)' : `time budgets: PTY rounds ${BUDGETS.ptyBudgetMs / 1000} s, flood ${BUDGETS.floodBudgetMs / 1000} s, sessions ${BUDGETS.sessionsBudgetMs / 1000} s`}`],
      ['Groups', groups.join(', ')],
    ],
  );
}

function summaryTable(verdicts: readonly Verdict[]): string {
  return markdownTable(
    ['What', 'Measured against', 'Ours (median / p99)', 'Baseline (median / p99)', 'Ratio or value', 'Target', 'Verdict'],
    verdicts.map((v) => [v.what, v.against, v.ours, v.baseline, v.result, v.target, v.pass ? 'meets' : 'misses']),
  );
}

/**
 * Writes the workspace the extension serves: `work` (sample, patch targets, process cwd) and the 50,000-file tree
 * of bench/findThroughput.ts as a second folder. The tree is only read, so it is the one `npm run bench` generates
 * once and reuses (writing and deleting 50,000 files costs a minute or more on a busy disk).
 */
function makeWorkspace(tmpRoot: string, controlFile: string): { wsFile: string; workDir: string; treeDir: string; scratchDir: string; treeTs: number; sample: string } {
  const wsDir = path.join(tmpRoot, 'workspace');
  const workDir = path.join(wsDir, 'work');
  const treeDir = TREE_DIR;
  const scratchDir = path.join(tmpRoot, 'scratch');
  fs.mkdirSync(workDir, { recursive: true });
  fs.mkdirSync(scratchDir, { recursive: true });
  const sample = sampleText(SAMPLE_BYTES);
  fs.writeFileSync(path.join(workDir, SAMPLE_FILE), sample);
  const info: BenchInfo = { controlFile, sampleFile: SAMPLE_FILE, idleTimeoutMs: HOST_IDLE_TIMEOUT_MS };
  fs.writeFileSync(path.join(workDir, BENCH_INFO_FILE), JSON.stringify(info, null, 2));
  const t0 = performance.now();
  const marker = ensureTree(log);
  log(`50,000-file tree ready in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${treeDir}`);
  const wsFile = path.join(wsDir, 'bench.code-workspace');
  fs.writeFileSync(wsFile, JSON.stringify({ folders: [{ path: 'work' }, { path: treeDir }], settings: {} }, null, 2));
  return { wsFile, workDir, treeDir, scratchDir, treeTs: marker.ts, sample };
}

/**
 * Settings of the bench's VS Code profile. `codespace.limits.findResults` is machine-scoped: code-server's extension
 * host is a remote one and reads it from the Machine settings; the User file gets the same for a local host.
 */
function writeSettings(userDataDir: string): void {
  const settings = {
    'codespace.limits.findResults': FIND_MAX_RESULTS,
    'workbench.startupEditor': 'none',
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
  };
  for (const dir of ['User', 'Machine']) {
    fs.mkdirSync(path.join(userDataDir, dir), { recursive: true });
    fs.writeFileSync(path.join(userDataDir, dir, 'settings.json'), JSON.stringify(settings, null, 2));
  }
}

async function waitForControl(file: string, exited: () => number | undefined): Promise<ControlInfo> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (fs.existsSync(file)) {
      const info = JSON.parse(fs.readFileSync(file, 'utf8')) as ControlInfo;
      if (info.error) throw new Error(`the bench module in the extension host failed: ${info.error}`);
      return info;
    }
    const code = exited();
    if (code !== undefined) throw new Error(`the extension host ended (code ${code}) before the bench module was ready`);
    if (Date.now() > deadline) throw new Error(`the bench module in the extension host was not ready within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(250);
  }
}

async function main(): Promise<number> {
  const started = performance.now();
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const verbose = argv.includes('--verbose') || process.env.CODESPACE_TEST_VERBOSE === '1';
  const requested = argv.filter((a) => !a.startsWith('--'));
  const unknown = requested.filter((g) => !(g in GROUPS));
  if (unknown.length) {
    process.stderr.write(`Unknown group(s): ${unknown.join(', ')}. Known: ${Object.keys(GROUPS).join(', ')}.\n`);
    return 2;
  }
  const names = requested.length ? requested : Object.keys(GROUPS);
  const noBudget = argv.includes('--no-budget');
  const profile = argv.includes('--profile');
  const sizes: Sizes = { ...(quick ? QUICK : FULL), ...(noBudget ? NO_BUDGETS : {}) };
  for (const file of [path.join(REPO_ROOT, 'dist', 'extension.js'), HOST_INDEX]) {
    if (!fs.existsSync(file)) throw new Error(`${path.relative(REPO_ROOT, file)} missing: run npm run build && npm run compile-tests`);
  }
  if (!fs.existsSync('/usr/bin/rg')) throw new Error('/usr/bin/rg not found (Debian package ripgrep)');

  const host = await loadHostModule();
  await host.ensureVsCodeHost();
  const resources = new Resources();
  const tmpRoot = fs.realpathSync(host.makeTmpRoot('codespace-bench-editor-'));
  resources.add(() => host.removeDir(tmpRoot));
  try {
    const controlFile = path.join(tmpRoot, 'control.json');
    const ws = makeWorkspace(tmpRoot, controlFile);
    writeSettings(path.join(tmpRoot, 'user-data'));

    const server = await host.startCodeServer({ tmpRoot, openPath: ws.wsFile, onOutput: (line) => verbose && log(`[code-server] ${line}`) });
    resources.add(() => server.stop());
    log(`code-server on ${server.base} (pid ${server.pid})`);
    const browser = await host.launchBrowser();
    resources.add(() => browser.close().catch(() => undefined));
    let exitCode: number | undefined;
    const url = host.workbenchUrl({
      base: server.base,
      port: server.port,
      openPath: ws.wsFile,
      kind: 'workspace',
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath: HOST_INDEX,
    });
    await host.openWorkbench(browser, {
      url,
      onLog: (type, message) => {
        const text = message.replace(/\s+$/, '');
        if (verbose) log(`[${type}] ${text}`);
        else if (type.startsWith('console.')) return;
        else if (text.includes('[bench-host]')) log(text);
        else if ((type === 'error' || type === 'pageerror') && !NOISE.some((re) => re.test(text))) log(`[${type}] ${text}`);
      },
      onExit: (code) => (exitCode = code),
    });
    const info = await waitForControl(controlFile, () => exitCode);
    const control = new Control(info);
    resources.add(async () => {
      if (exitCode !== undefined) return;
      await control.call({ op: 'done' }, 10_000).catch(() => undefined);
      for (let i = 0; i < 80 && exitCode === undefined; i++) await sleep(250);
    });
    log(`extension ready after ${((performance.now() - started) / 1000).toFixed(1)} s: ${info.mcpUrl}`);

    const mcp = await connectMcp(info, 'codespace-bench-editor');
    resources.add(() => closeMcp(mcp));
    const listed = await call<{ workspaces: { id: string; name: string }[] }>(mcp.client, 'workspace_info', {});
    const idOf = (name: string): string => {
      const w = listed.workspaces.find((x) => x.name === name);
      if (!w) throw new Error(`workspace folder ${name} not served: ${JSON.stringify(listed.workspaces)}`);
      return w.id;
    };
    const treeId = idOf(path.basename(ws.treeDir));
    const limits = (await call<{ limits: { find_results: number } }>(mcp.client, 'workspace_info', { workspace_id: treeId })).limits;
    if (limits.find_results < ws.treeTs) throw new Error(`codespace.limits.findResults is ${limits.find_results}: the Machine settings were not applied`);

    const rig: Rig = { sizes, info, control, mcp, ...ws, workId: idOf('work'), treeId, resources };
    const outputs: { name: string; output?: GroupOutput; error?: string }[] = [];
    for (const name of names) {
      const t0 = performance.now();
      log(`${name}…`);
      try {
        const quiet = await settle(control);
        log(quiet);
        if (profile) await control.call({ op: 'profile-start' });
        const output = await (GROUPS[name] as (r: Rig) => Promise<GroupOutput>)(rig).finally(async () => {
          if (!profile) return;
          const file = path.join(REPO_ROOT, '.bench', `editor-${name}.cpuprofile`);
          fs.mkdirSync(path.dirname(file), { recursive: true });
          await control.call({ op: 'profile-stop', file });
          log(`extension host CPU profile of ${name}: ${path.relative(REPO_ROOT, file)}`);
        });
        outputs.push({ name, output: { ...output, group: { ...output.group, notes: [...output.group.notes, quiet] } } });
      } catch (err) {
        outputs.push({ name, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
        log(`${name} FAILED: ${err instanceof Error ? err.message : String(err)}`);
      }
      log(`${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }

    const verdicts = outputs.flatMap((o) => o.output?.verdicts ?? []);
    const seconds = (performance.now() - started) / 1000;
    const md = [
      '# CodeSpace in the editor: benchmarks',
      '',
      'The extension inside VS Code (code-server, headless Chromium, offline), a real MCP SDK client over Streamable HTTP, each figure side by side with its baseline in the same run. Shared, noisy machine: compare the ratios within a run, not absolute times across runs.',
      '',
      environmentTable(info, quick, noBudget, names),
      '',
      '## Summary',
      '',
      summaryTable(verdicts),
      '',
      ...outputs.map((o) => (o.output ? renderGroup(o.output.group) : `## ${o.name}\n\nFAILED: ${o.error}\n`)),
      `_Total run time ${seconds.toFixed(1)} s._`,
      '',
    ].join('\n');
    process.stdout.write(md);
    const outDir = path.join(REPO_ROOT, '.bench');
    fs.mkdirSync(outDir, { recursive: true });
    fs.writeFileSync(path.join(outDir, 'editor.md'), md);
    const json = {
      date: new Date().toISOString(),
      quick,
      budgets: !noBudget,
      vscode: info.vscodeVersion,
      extensionHostNode: info.hostNode,
      seconds,
      summary: verdicts,
      groups: outputs.map((o) => ({ name: o.name, ...(o.output ? { result: o.output.group } : { error: o.error }) })),
    };
    fs.writeFileSync(path.join(outDir, 'editor.json'), `${JSON.stringify(json, null, 2)}\n`);
    log(`wrote .bench/editor.md and .bench/editor.json`);
    return outputs.some((o) => o.error) ? 1 : 0;
  } finally {
    log('stopping VS Code and removing the temp dir…');
    await resources.dispose();
    log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

// The SDK client's transport adds an abort listener per request to one long-lived signal; Node warns on every call
// past 1,500. Print each kind of warning once instead of thousands of times.
const warned = new Set<string>();
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (warned.has(w.name)) return;
  warned.add(w.name);
  log(`warning (shown once): ${w.name}: ${w.message}`);
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void Resources.disposeAll().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
