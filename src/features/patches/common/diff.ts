/**
 * Git-style unified diff of two texts, line by line.
 *
 * Lines are interned to integers, the common prefix and suffix are trimmed, and the rest is split at lines
 * that occur exactly once on each side (patience anchors) until the pieces are small; each piece is then
 * diffed with Myers' O((N+M)D) algorithm. A piece too different to diff within a fixed budget becomes one
 * replace block: still a correct diff, only not minimal. A last line without a newline is a different line
 * from the same text with one, and is followed by `\ No newline at end of file`, as git prints it.
 * The work yields at checkpoints (see pacer.ts), so a diff of a large file never holds the event loop.
 */
import type { Steps } from './pacer';
import { runSync } from './pacer';

/** A block of the edit script: a[aStart, aEnd) is replaced by b[bStart, bEnd). */
interface Change {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

interface Side {
  /** Line texts without their newline. */
  readonly lines: string[];
  /** Interned keys; a last line without a newline gets a key of its own. */
  readonly keys: Int32Array;
  readonly noFinalNewline: boolean;
}

const SMALL_REGION = 2048;
const MYERS_BUDGET = 5_000_000;
const MAX_DEPTH = 48;

function* split(text: string, intern: Map<string, number>): Steps<Side> {
  if (text === '') return { lines: [], keys: new Int32Array(0), noFinalNewline: false };
  const lines = text.split('\n');
  const noFinalNewline = lines[lines.length - 1] !== '';
  if (!noFinalNewline) lines.pop();
  const keys = new Int32Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    // "\n" never occurs inside a line, so it marks the unterminated last line unambiguously.
    const key = noFinalNewline && i === lines.length - 1 ? `${lines[i]}\n` : (lines[i] as string);
    let id = intern.get(key);
    if (id === undefined) {
      id = intern.size;
      intern.set(key, id);
    }
    keys[i] = id;
    if ((i & 16383) === 16383) yield;
  }
  return { lines, keys, noFinalNewline };
}

/** The edit script from `a` to `b` as ordered, non-overlapping change blocks. */
function* diffLines(a: Int32Array, b: Int32Array): Steps<Change[]> {
  const out: Change[] = [];
  const push = (aStart: number, aEnd: number, bStart: number, bEnd: number): void => {
    if (aStart === aEnd && bStart === bEnd) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.aEnd === aStart && last.bEnd === bStart) {
      last.aEnd = aEnd;
      last.bEnd = bEnd;
    } else out.push({ aStart, aEnd, bStart, bEnd });
  };

  const region = function* (aLo: number, aHi: number, bLo: number, bHi: number, depth: number): Steps<void> {
    yield;
    while (aLo < aHi && bLo < bHi && a[aLo] === b[bLo]) {
      aLo++;
      bLo++;
    }
    while (aLo < aHi && bLo < bHi && a[aHi - 1] === b[bHi - 1]) {
      aHi--;
      bHi--;
    }
    if (aLo === aHi || bLo === bHi) {
      push(aLo, aHi, bLo, bHi);
      return;
    }
    if (aHi - aLo + (bHi - bLo) > SMALL_REGION && depth < MAX_DEPTH) {
      const anchors = yield* patienceAnchors(a, aLo, aHi, b, bLo, bHi);
      if (anchors.length > 0) {
        let pa = aLo;
        let pb = bLo;
        for (const [ai, bi] of anchors) {
          yield* region(pa, ai, pb, bi, depth + 1);
          pa = ai + 1;
          pb = bi + 1;
        }
        yield* region(pa, aHi, pb, bHi, depth + 1);
        return;
      }
    }
    if (!(yield* myers(a, aLo, aHi, b, bLo, bHi, push))) push(aLo, aHi, bLo, bHi);
  };

  yield* region(0, a.length, 0, b.length, 0);
  return out;
}

/** Lines unique on both sides, kept in the longest run increasing on both sides: [aIndex, bIndex] pairs. */
function* patienceAnchors(a: Int32Array, aLo: number, aHi: number, b: Int32Array, bLo: number, bHi: number): Steps<[number, number][]> {
  // count < 0 marks "seen more than once".
  const inA = new Map<number, number>();
  for (let i = aLo; i < aHi; i++) {
    const k = a[i] as number;
    inA.set(k, inA.has(k) ? -1 : i);
    if ((i & 16383) === 16383) yield;
  }
  const inB = new Map<number, number>();
  for (let j = bLo; j < bHi; j++) {
    const k = b[j] as number;
    if (!inA.has(k) || (inA.get(k) as number) < 0) continue;
    inB.set(k, inB.has(k) ? -1 : j);
    if ((j & 16383) === 16383) yield;
  }
  const pairs: [number, number][] = [];
  for (let i = aLo; i < aHi; i++) {
    const k = a[i] as number;
    const ai = inA.get(k) as number;
    const bj = inB.get(k);
    if (ai === i && bj !== undefined && bj >= 0) pairs.push([i, bj]);
    if ((i & 16383) === 16383) yield;
  }
  if (pairs.length === 0) return pairs;
  yield;
  // Longest increasing subsequence of the b indexes (pairs are already in a order).
  const tails: number[] = [];
  const prev = new Int32Array(pairs.length).fill(-1);
  for (let p = 0; p < pairs.length; p++) {
    const bj = (pairs[p] as [number, number])[1];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((pairs[tails[mid] as number] as [number, number])[1] < bj) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[p] = tails[lo - 1] as number;
    tails[lo] = p;
  }
  const result: [number, number][] = [];
  for (let p = tails[tails.length - 1] as number; p >= 0; p = prev[p] as number) result.push(pairs[p] as [number, number]);
  return result.reverse();
}

/** Myers' greedy diff of a[aLo,aHi) and b[bLo,bHi); false when the budget runs out before it finishes. */
function* myers(a: Int32Array, aLo: number, aHi: number, b: Int32Array, bLo: number, bHi: number, push: (aStart: number, aEnd: number, bStart: number, bEnd: number) => void): Steps<boolean> {
  const n = aHi - aLo;
  const m = bHi - bLo;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let cost = 0;
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && (v[off + k - 1] as number) < (v[off + k + 1] as number)) ? (v[off + k + 1] as number) : (v[off + k - 1] as number) + 1;
      let y = x - k;
      const x0 = x;
      while (x < n && y < m && a[aLo + x] === b[bLo + y]) {
        x++;
        y++;
      }
      cost += 1 + x - x0;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.push(v.slice(off - d, off + d + 1));
    if (cost > MYERS_BUDGET) return false;
    if ((d & 63) === 63) yield;
  }

  // Walk back from (n, m), collecting single-line edits in reverse.
  const edits: { del: boolean; i: number }[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prevV = trace[d - 1] as Int32Array;
    const at = (k: number): number => prevV[k + d - 1] as number;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    x = prevX;
    y = prevY;
    edits.push(down ? { del: false, i: prevY } : { del: true, i: prevX });
  }
  // Replay forward: equal runs are implied between edits.
  let ca = 0;
  let cb = 0;
  for (let e = edits.length - 1; e >= 0; e--) {
    const edit = edits[e] as { del: boolean; i: number };
    if (edit.del) {
      cb += edit.i - ca;
      ca = edit.i;
      push(aLo + ca, aLo + ca + 1, bLo + cb, bLo + cb);
      ca++;
    } else {
      ca += edit.i - cb;
      cb = edit.i;
      push(aLo + ca, aLo + ca, bLo + cb, bLo + cb + 1);
      cb++;
    }
  }
  return true;
}

/**
 * The changed blocks from `before` to `after`, line by line, in order: lines [aStart, aEnd) of `before` became lines
 * [bStart, bEnd) of `after` (0-based; an empty range is an insertion or a deletion at that line). Lines are compared
 * as unifiedDiff compares them (a last line without a newline differs from the same text with one).
 */
export function lineChanges(before: string, after: string): { aStart: number; aEnd: number; bStart: number; bEnd: number }[] {
  if (before === after) return [];
  return runSync(
    (function* () {
      const intern = new Map<string, number>();
      const a = yield* split(before, intern);
      const b = yield* split(after, intern);
      return (yield* diffLines(a.keys, b.keys)).map((c) => ({ ...c }));
    })(),
  );
}

function range(start: number, len: number): string {
  if (len === 0) return `${start},0`;
  if (len === 1) return `${start + 1}`;
  return `${start + 1},${len}`;
}

/**
 * A unified diff from `before` (at `oldPath`) to `after` (at `newPath`). A null path stands for a file that
 * does not exist on that side (`/dev/null`: an add or a delete). Returns '' when the texts are equal, except
 * that adding or deleting an empty file gives the two header lines alone.
 * The texts are compared exactly as given: a BOM or a CR stays part of its line.
 */
export function unifiedDiff(oldPath: string | null, newPath: string | null, before: string, after: string, context = 3): string {
  return runSync(unifiedDiffSteps(oldPath, newPath, before, after, context));
}

/** unifiedDiff, yielding at checkpoints (see pacer.ts). */
export function* unifiedDiffSteps(oldPath: string | null, newPath: string | null, before: string, after: string, context = 3): Steps<string> {
  const headers = `--- ${oldPath === null ? '/dev/null' : `a/${oldPath}`}\n+++ ${newPath === null ? '/dev/null' : `b/${newPath}`}\n`;
  const createsOrDeletes = (oldPath === null) !== (newPath === null);
  if (before === after) return createsOrDeletes ? headers : '';
  const intern = new Map<string, number>();
  const a = yield* split(before, intern);
  const b = yield* split(after, intern);
  const changes = yield* diffLines(a.keys, b.keys);
  if (changes.length === 0) return createsOrDeletes ? headers : '';

  const ctx = Math.max(0, Math.floor(context));
  const out: string[] = [headers.slice(0, -1)];
  const aLast = a.lines.length - 1;
  const bLast = b.lines.length - 1;
  const emitA = (prefix: string, i: number): void => {
    out.push(prefix + (a.lines[i] as string));
    if (i === aLast && a.noFinalNewline) out.push('\\ No newline at end of file');
  };
  const emitB = (i: number): void => {
    out.push(`+${b.lines[i] as string}`);
    if (i === bLast && b.noFinalNewline) out.push('\\ No newline at end of file');
  };

  let g = 0;
  let emitted = 0;
  while (g < changes.length) {
    // Group changes whose context would touch or overlap.
    let h = g;
    while (h + 1 < changes.length && (changes[h + 1] as Change).aStart - (changes[h] as Change).aEnd <= 2 * ctx) h++;
    const first = changes[g] as Change;
    const last = changes[h] as Change;
    const aFrom = Math.max(0, first.aStart - ctx);
    const aTo = Math.min(a.lines.length, last.aEnd + ctx);
    const bFrom = first.bStart - (first.aStart - aFrom);
    const bTo = last.bEnd + (aTo - last.aEnd);
    out.push(`@@ -${range(aFrom, aTo - aFrom)} +${range(bFrom, bTo - bFrom)} @@`);
    let ai = aFrom;
    for (let c = g; c <= h; c++) {
      const ch = changes[c] as Change;
      for (; ai < ch.aStart; ai++) emitA(' ', ai);
      for (; ai < ch.aEnd; ai++) emitA('-', ai);
      for (let bi = ch.bStart; bi < ch.bEnd; bi++) emitB(bi);
    }
    for (; ai < aTo; ai++) emitA(' ', ai);
    g = h + 1;
    if (out.length > 65536 * (1 + emitted)) {
      emitted++;
      yield;
    }
  }
  return `${out.join('\n')}\n`;
}
