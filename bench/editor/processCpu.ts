import * as fs from 'node:fs';
import * as path from 'node:path';
import { statFields } from '../../src/base/node/processIdentity';

/**
 * Where a run's CPU went, by process: every process's user + system time from `/proc/<pid>/stat`, sampled every
 * SAMPLE_MS while a run goes on, summed by what the process is (the process host, the extension host, the agent,
 * the window's renderer and GPU process, the command's own processes, kernel threads). A diagnosis for the PTY
 * group: the bench's contenders share two cores with everything that handles their output. Linux only; elsewhere
 * nothing is sampled.
 */
const SAMPLE_MS = 250;
/**
 * A process that used no CPU over this many samples is read only every this many samples: its time is cumulative, so
 * nothing is missed while it lives, and the sampling itself (which shares the cores it measures) costs less.
 */
const IDLE_EVERY = 4;
/** One buffer for every read of a stat file (a few hundred bytes each). */
const STAT_BUFFER = Buffer.alloc(4096);
/** Clock ticks per second of /proc's times (USER_HZ; 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** The processes the bench knows by pid. */
export interface KnownProcesses {
  readonly extensionHost: number;
}

/** CPU by kind of process over the sampled runs: ms of CPU per second of the runs' wall time. */
export interface CpuByProcess {
  readonly wallMs: number;
  readonly msPerSecond: ReadonlyArray<readonly [label: string, ms: number]>;
}

function readTicks(pid: string): number | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, 'r');
    const fields = statFields(STAT_BUFFER.toString('latin1', 0, fs.readSync(fd, STAT_BUFFER, 0, STAT_BUFFER.length, 0)));
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function label(pid: string, known: KnownProcesses): string {
  if (Number(pid) === known.extensionHost) return 'extension host';
  if (Number(pid) === process.pid) return 'the agent (this runner)';
  let args: string[];
  try {
    args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter((a) => a.length > 0);
  } catch {
    return 'gone';
  }
  if (args.length === 0) return 'kernel threads';
  const line = args.join(' ');
  if (line.includes('codespace-process-host')) return 'process host';
  if (line.includes('--type=renderer')) return 'window: renderer';
  if (line.includes('--type=gpu-process')) return 'window: GPU process';
  if (/--type=|chrom|headless_shell/.test(line)) return 'window: browser, other';
  if (line.includes('code-server')) return 'code-server';
  return path.basename(args[0] as string);
}

/** Samples while `run` goes on, adding to this sampler's totals (one sampler for all the runs of a contender). */
export class ProcessCpu {
  private readonly totals = new Map<string, number>();
  private wallMs = 0;
  private readonly available = fs.existsSync('/proc/self/stat');

  constructor(private readonly known: KnownProcesses) {}

  async during<T>(run: () => Promise<T>): Promise<T> {
    if (!this.available) return run();
    const last = new Map<string, number>();
    const idle = new Map<string, number>();
    const labels = new Map<string, string>();
    let round = 0;
    const sample = (count: boolean): void => {
      round++;
      for (const pid of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        const quiet = idle.get(pid) ?? 0;
        if (count && quiet >= IDLE_EVERY && round % IDLE_EVERY !== 0) continue;
        const ticks = readTicks(pid);
        if (ticks === undefined) continue;
        const before = last.get(pid);
        last.set(pid, ticks);
        idle.set(pid, ticks === before ? quiet + 1 : 0);
        if (!count || ticks === before) continue;
        // A process first seen now started during the run: all of its time is the run's.
        const used = ticks - (before ?? 0);
        let name = labels.get(pid);
        if (name === undefined) labels.set(pid, (name = label(pid, this.known)));
        this.totals.set(name, (this.totals.get(name) ?? 0) + (used * 1000) / TICKS_PER_SECOND);
      }
    };
    sample(false);
    const timer = setInterval(() => sample(true), SAMPLE_MS);
    const t0 = performance.now();
    try {
      return await run();
    } finally {
      clearInterval(timer);
      // The last sample reads every process, idle or not.
      idle.clear();
      sample(true);
      this.wallMs += performance.now() - t0;
    }
  }

  /** The totals so far, per second of sampled wall time, largest first; undefined without /proc. */
  result(): CpuByProcess | undefined {
    if (!this.available || this.wallMs === 0) return undefined;
    const perSecond = [...this.totals].map(([name, ms]) => [name, (ms * 1000) / this.wallMs] as const).sort((a, b) => b[1] - a[1]);
    return { wallMs: this.wallMs, msPerSecond: perSecond };
  }
}

/** One line for a table's notes: the kinds of process that took at least `minMs` per second, then the rest together. */
export function cpuLine(cpu: CpuByProcess, minMs = 20): string {
  const shown = cpu.msPerSecond.filter(([, ms]) => ms >= minMs);
  const rest = cpu.msPerSecond.filter(([, ms]) => ms < minMs).reduce((sum, [, ms]) => sum + ms, 0);
  const total = cpu.msPerSecond.reduce((sum, [, ms]) => sum + ms, 0);
  const parts = shown.map(([name, ms]) => `${name} ${ms.toFixed(0)}`);
  if (rest > 0) parts.push(`others ${rest.toFixed(0)}`);
  return `${parts.join(', ')} (all ${total.toFixed(0)})`;
}
