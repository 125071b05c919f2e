/**
 * Process output: 200 MB of output on a PTY, read the way read_process reads it (ProcessSupervisor.read by cursor,
 * 1 MiB at most, wait_ms, until eof) against the same command on bare node-pty (an onData listener counting
 * bytes). Then the memory of this Node process during a 1 GiB flood through the supervisor, once with an agent
 * reading and a terminal mirror (every chunk into a bounded TerminalFeed, which decodes what it shows, as the VS Code
 * mirror does, towards a terminal that takes 256 KiB per 16 ms) and once with nobody reading: retention is bounded (the ring
 * buffer, the feed), so RSS should stay flat.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import type * as NodePty from 'node-pty';
import type { Workspace } from '../src/kernel/workspaces';
import { DEFAULT_SUPERVISOR_SETTINGS, ProcessSupervisor } from '../src/features/processes/common/supervisor';
import { TerminalFeed } from '../src/features/processes/common/terminalFeed';
import { DEFAULT_LIMITS } from '../src/kernel/limits';
import { ChildProcessBackend } from '../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../src/features/processes/node/nodePtyBackend';
import type { BenchGroup, Contender, GroupResult, Row } from './lib';
import { Resources, fmtRatio, interleave, ratio, summarize } from './lib';

const MB = 1e6;
const MIB = 1024 * 1024;
const THROUGHPUT_BYTES = 200 * MIB;
const FLOOD_BYTES = 1024 * MIB;
const READ_BYTES = DEFAULT_SUPERVISOR_SETTINGS.maxReadBytes; // 1 MiB, what read_process allows at most
const WAIT_MS = 1000;
const WARMUP_ROUNDS = 1;
const ROUNDS = 3;
/** The second flood shrinks when the group would otherwise run longer than this. */
const TIME_BUDGET_MS = 85_000;
const RSS_BUDGET_MB = 64;
const SAMPLE_MS = 20;

const NAMES = {
  ours: 'ours: supervisor.read loop (1 MiB, wait_ms) on a PTY',
  bare: 'bare node-pty onData counting bytes',
} as const;

/** `a` repeated `bytes` times on stdout: no newline, so the PTY passes it through unchanged. */
export function flood(bytes: number): string[] {
  return ['sh', '-c', `head -c ${bytes} /dev/zero | tr '\\0' a`];
}

function workspace(root: string): Workspace {
  return { id: 'bench', name: 'bench', root, trusted: true, profile: 'exec', canWrite: true, canExec: true };
}

function environment(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), LANG: 'C.UTF-8', TERM: 'xterm-256color' };
}

interface Flow {
  /** Bytes the agent received (chunk lengths; the output is ASCII). */
  readonly read: number;
  /** Bytes the process wrote (the final cursor). */
  readonly written: number;
  readonly lost: boolean;
  readonly reads: number;
  /** What process_status said of the output once exited. */
  readonly complete: boolean;
}

/** One run of `command` through the supervisor, read by an agent loop (or not read, when `reader` is false). */
async function throughSupervisor(sup: ProcessSupervisor, root: string, command: string[], reader: boolean): Promise<Flow> {
  const { process_id } = await sup.exec(workspace(root), command, { cwd: root, tty: true, env: environment() });
  let cursor = 0;
  let read = 0;
  let reads = 0;
  let lost = false;
  if (reader) {
    for (;;) {
      const r = await sup.read(process_id, cursor, READ_BYTES, WAIT_MS);
      reads++;
      read += r.chunk.length;
      lost ||= r.output_lost;
      cursor = r.cursor;
      if (r.eof) break;
    }
  } else {
    while (sup.status(process_id).state !== 'exited') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const status = sup.status(process_id);
  if (status.termination !== 'exited' || status.exit_code !== 0) throw new Error(`flood ended badly: ${JSON.stringify(status)}`);
  return { read, written: sup.outputStats(process_id).end, lost, reads, complete: status.output_complete !== false };
}

/**
 * The same command on bare node-pty: resolves with the byte count once it has exited. node-pty now and then
 * reports the exit with the last few KiB never delivered (microsoft/node-pty#85, #726; the supervisor's PTY
 * backend works around it); the count says so rather than the run waiting for bytes that never come.
 */
function throughBarePty(pty: typeof NodePty, root: string, command: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    const term = pty.spawn(command[0] as string, command.slice(1), { name: 'xterm-256color', cols: 80, rows: 24, cwd: root, env: environment(), encoding: null });
    term.onData((data: string | Buffer) => {
      bytes += data.length;
    });
    term.onExit(({ exitCode }) => {
      if (exitCode !== 0) reject(new Error(`bare flood exited with ${exitCode}`));
      else setImmediate(() => resolve(bytes));
    });
  });
}

interface Memory {
  readonly baseline: number;
  readonly peak: number;
  readonly final: number;
  readonly ms: number;
}

/** Runs `fn` while sampling this process's RSS; growth = peak - baseline. */
async function rssDuring(fn: () => Promise<unknown>): Promise<Memory> {
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), SAMPLE_MS);
  const t0 = performance.now();
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  const ms = performance.now() - t0;
  const final = process.memoryUsage.rss();
  peak = Math.max(peak, final);
  return { baseline, peak, final, ms };
}

const mbps = (bytes: number, ms: number): string => `${(bytes / MB / (ms / 1000)).toFixed(0)} MB/s`;
const mb = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

export const processThroughput: BenchGroup = async (log): Promise<GroupResult> => {
  const resources = new Resources();
  const started = performance.now();
  try {
    const root = fs.realpathSync(os.tmpdir());
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pty = require('node-pty') as typeof NodePty;
    const ptyBackend = new NodePtyBackend();
    const pipes = new ChildProcessBackend();
    const sup = new ProcessSupervisor({ backends: { tty: () => ptyBackend, pipes: () => pipes }, limits: () => DEFAULT_LIMITS });
    resources.add(() => sup.disposeAll());

    const flows: Flow[] = [];
    const bareCounts: number[] = [];
    const command = flood(THROUGHPUT_BYTES);
    const contenders: Contender[] = [
      { name: NAMES.ours, run: async () => flows.push(await throughSupervisor(sup, root, command, true)) },
      { name: NAMES.bare, run: async () => bareCounts.push(await throughBarePty(pty, root, command)) },
    ];
    const samples = await interleave(contenders, {
      warmupRounds: WARMUP_ROUNDS,
      rounds: ROUNDS,
      perRound: 1,
      onRound: (round, total, warmup) => log(`[process] round ${round}/${total}${warmup ? ' (warm-up)' : ''}`),
    });
    const ours = summarize(samples.get(NAMES.ours) ?? []);
    const bare = summarize(samples.get(NAMES.bare) ?? []);
    const short = (counts: readonly number[]): string => {
      const n = counts.filter((c) => c < THROUGHPUT_BYTES).length;
      return n === 0 ? 'every byte arrived' : `${n} of ${counts.length} run(s) ended short of ${mb(THROUGHPUT_BYTES)} (the tail was lost)`;
    };
    const lastFlow = flows[flows.length - 1] as Flow;
    const rows: Row[] = [
      {
        contender: NAMES.ours,
        stats: ours,
        note: `${mbps(THROUGHPUT_BYTES, ours.median)}; agent received ${mb(lastFlow.read)} in ${lastFlow.reads} reads${lastFlow.lost ? ' (output_lost: the 256 KiB ring overtook the reader)' : ''}; ${short(flows.map((f) => f.written))}${flows.some((f) => !f.complete) ? '; output_complete false in some run' : ''}`,
      },
      { contender: NAMES.bare, stats: bare, note: `${mbps(THROUGHPUT_BYTES, bare.median)}; ${short(bareCounts)}` },
    ];

    // Memory during a 1 GiB flood, with the agent reading and a terminal mirror as in VS Code (a bounded
    // TerminalFeed, decoding what it writes) towards a terminal slower than the flood; then with nobody reading, at 1 GiB if the
    // time budget allows.
    let shown = 0;
    const feed = new TerminalFeed({
      maxPendingBytes: 1024 * 1024,
      batchBytes: 256 * 1024,
      write: (text) => (shown += text.length),
      barrier: () => new Promise((resolve) => setTimeout(resolve, 16)),
    });
    const mirror = sup.onDidOutput((_id, bytes) => feed.push(bytes));
    log('[process] 1 GiB flood, agent reading, terminal mirror on…');
    let reading: Flow | undefined;
    const memReading = await rssDuring(async () => (reading = await throughSupervisor(sup, root, flood(FLOOD_BYTES), true)));
    mirror.dispose();
    feed.dispose();
    const left = TIME_BUDGET_MS - (performance.now() - started);
    const unreadBytes = memReading.ms < left ? FLOOD_BYTES : Math.max(64 * MIB, Math.floor((FLOOD_BYTES * Math.max(left, 0)) / memReading.ms / MIB) * MIB);
    log(`[process] ${mb(unreadBytes)} flood, nobody reading…`);
    let unread: Flow | undefined;
    const memUnread = await rssDuring(async () => (unread = await throughSupervisor(sup, root, flood(unreadBytes), false)));
    const growth = (m: Memory): number => (m.peak - m.baseline) / MIB;

    return {
      title: 'Process output: PTY throughput and memory under a flood',
      description:
        `\`${command.join(' ')}\` (${mb(THROUGHPUT_BYTES)}) on a 24×80 PTY, time from spawn to eof. ` +
        `Ours reads like read_process (ProcessSupervisor.read, ${READ_BYTES / MIB} MiB max, wait_ms ${WAIT_MS}) with the default ` +
        `${DEFAULT_LIMITS.retainedOutputBytes / 1024} KiB retention; bare node-pty only counts bytes in onData. ` +
        `${WARMUP_ROUNDS} warm-up + ${ROUNDS} measured rounds, interleaved.`,
      rows,
      ratios: [
        ratio('ours / bare node-pty (time; ≤ 1.25x means ours ≥ 0.8x bare throughput)', ours, bare, 1.25),
        { label: `RSS growth during ${mb(FLOOD_BYTES)}, agent reading + terminal mirror / ${RSS_BUDGET_MB} MiB budget`, value: growth(memReading) / RSS_BUDGET_MB, target: 1 },
        { label: `RSS growth during ${mb(unreadBytes)}, nobody reading / ${RSS_BUDGET_MB} MiB budget`, value: growth(memUnread) / RSS_BUDGET_MB, target: 1 },
      ],
      notes: [
        `Throughput (medians): ours ${mbps(THROUGHPUT_BYTES, ours.median)}, bare node-pty ${mbps(THROUGHPUT_BYTES, bare.median)}: ours reaches ${fmtRatio(bare.median / ours.median)} of bare (target ≥ 0.8x).`,
        `${mb(FLOOD_BYTES)} flood, agent reading, terminal mirror on (${mb(shown)} characters shown, ${mb(feed.dropped)} not shown): RSS ${mb(memReading.baseline)} → peak ${mb(memReading.peak)} (growth ${growth(memReading).toFixed(1)} MiB, target < ${RSS_BUDGET_MB}), final ${mb(memReading.final)}; ${mbps(FLOOD_BYTES, memReading.ms)}; agent received ${mb(reading?.read ?? 0)} of ${mb(reading?.written ?? 0)} in ${reading?.reads ?? 0} reads${reading?.lost ? ', output_lost set' : ''}.`,
        `${mb(unreadBytes)} flood, nobody reading: RSS ${mb(memUnread.baseline)} → peak ${mb(memUnread.peak)} (growth ${growth(memUnread).toFixed(1)} MiB), final ${mb(memUnread.final)}; ${mbps(unreadBytes, memUnread.ms)}; ${mb(unread?.written ?? 0)} written, ${DEFAULT_LIMITS.retainedOutputBytes / 1024} KiB retained.`,
        'The PTY has no back-pressure from the reader: a reader slower than the program loses the oldest output (output_lost) instead of slowing the program or growing memory.',
      ],
    };
  } finally {
    await resources.dispose();
  }
};
