/**
 * Small benchmark kit. The machine is shared and noisy, so nothing here reports an absolute number on its own:
 * every group runs its contenders side by side in one process, interleaved round by round after a warm-up, and
 * reports ratios between them.
 */
import { performance } from 'node:perf_hooks';

export interface Stats {
  readonly n: number;
  readonly median: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** Linear-interpolated percentile of ascending-sorted samples; p in [0, 100]. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

export function summarize(samples: readonly number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    median: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Runs fn n times, one after another; returns each call's wall time in milliseconds. */
export async function measure(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out[i] = performance.now() - t0;
  }
  return out;
}

export interface Contender {
  readonly name: string;
  /** One operation; awaited. Throwing aborts the benchmark (a failing contender measures nothing useful). */
  readonly run: () => Promise<unknown>;
}

export interface InterleaveOptions {
  /** Measured rounds. */
  readonly rounds: number;
  /** Calls per contender per round. */
  readonly perRound: number;
  /** Unmeasured rounds run first, interleaved the same way. */
  readonly warmupRounds: number;
  /** Called after each round (measured or not), for progress output. */
  readonly onRound?: (round: number, total: number, warmup: boolean) => void;
}

/**
 * Runs the contenders in turn, `perRound` calls each, for warm-up then measured rounds. The starting contender
 * rotates every round so no contender always runs right after another one (cache, GC and JIT effects spread
 * evenly). Returns the samples of each contender, by name, in milliseconds.
 */
export async function interleave(contenders: readonly Contender[], options: InterleaveOptions): Promise<Map<string, number[]>> {
  const samples = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const total = options.warmupRounds + options.rounds;
  for (let round = 0; round < total; round++) {
    const warmup = round < options.warmupRounds;
    for (let k = 0; k < contenders.length; k++) {
      const c = contenders[(round + k) % contenders.length] as Contender;
      const times = await measure(c.run, options.perRound);
      if (!warmup) (samples.get(c.name) as number[]).push(...times);
    }
    options.onRound?.(round + 1, total, warmup);
  }
  return samples;
}

/** Resources a group opened (servers, clients, child processes); closed in reverse order, errors swallowed. */
export class Resources {
  private static readonly live = new Set<Resources>();
  private readonly closers: (() => Promise<unknown> | unknown)[] = [];

  constructor() {
    Resources.live.add(this);
  }

  add(close: () => Promise<unknown> | unknown): void {
    this.closers.push(close);
  }

  async dispose(): Promise<void> {
    Resources.live.delete(this);
    while (this.closers.length) {
      const close = this.closers.pop() as () => Promise<unknown> | unknown;
      try {
        await close();
      } catch {
        // best effort: keep closing the rest
      }
    }
  }

  /** Closes everything still open (used on SIGINT). */
  static async disposeAll(): Promise<void> {
    await Promise.allSettled([...Resources.live].map((r) => r.dispose()));
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Results and Markdown

export interface Row {
  readonly contender: string;
  readonly stats: Stats;
  /** Free text shown in the last column (what the contender does, counts…). */
  readonly note?: string;
}

export interface Ratio {
  readonly label: string;
  /** numerator / denominator of the medians. */
  readonly value: number;
  /** Upper bound the ratio should stay within, if there is one. */
  readonly target?: number;
}

export interface GroupResult {
  readonly title: string;
  readonly description?: string;
  readonly rows: readonly Row[];
  readonly ratios: readonly Ratio[];
  /** Lines printed under the tables (counts, warnings, findings). */
  readonly notes: readonly string[];
}

/** A benchmark group: runs, cleans up everything it started, and returns its results. */
export type BenchGroup = (log: (line: string) => void) => Promise<GroupResult>;

export function ratio(label: string, num: Stats, den: Stats, target?: number): Ratio {
  return target === undefined ? { label, value: num.median / den.median } : { label, value: num.median / den.median, target };
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1) return ms.toFixed(3);
  if (ms < 100) return ms.toFixed(2);
  return ms.toFixed(1);
}

export function fmtRatio(x: number): string {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[], rightAligned: readonly number[] = []): string {
  const sep = headers.map((_, i) => (rightAligned.includes(i) ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(headers), line(sep), ...rows.map(line)].join('\n');
}

export function renderGroup(g: GroupResult): string {
  const parts: string[] = [`## ${g.title}`, ''];
  if (g.description) parts.push(g.description, '');
  parts.push(
    markdownTable(
      ['Contender', 'N', 'median ms', 'p99 ms', 'min ms', 'Notes'],
      g.rows.map((r) => [r.contender, String(r.stats.n), fmtMs(r.stats.median), fmtMs(r.stats.p99), fmtMs(r.stats.min), r.note ?? '']),
      [1, 2, 3, 4],
    ),
    '',
  );
  if (g.ratios.length) {
    parts.push(
      markdownTable(
        ['Ratio (medians)', 'Value', 'Target', 'Verdict'],
        g.ratios.map((r) => [
          r.label,
          fmtRatio(r.value),
          r.target === undefined ? '—' : `≤ ${r.target}x`,
          r.target === undefined ? '—' : r.value <= r.target ? 'within target' : 'OVER target',
        ]),
        [1],
      ),
      '',
    );
  }
  for (const n of g.notes) parts.push(`- ${n}`);
  if (g.notes.length) parts.push('');
  return parts.join('\n');
}
