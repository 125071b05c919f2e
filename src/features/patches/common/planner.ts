import { ToolError } from '../../../base/errors';
import type { Steps } from './pacer';
import { runSync } from './pacer';
import type { Hunk } from './parser';
import { encodeText, joinLinesSteps, readTextFileSteps } from './textFile';
import type { TextFile, TextLine } from './textFile';

/**
 * Applies the hunks of one `*** Update File` to the file's current bytes, in memory.
 *
 * Matching. Hunks are placed in order; each is searched from the end of the previous one. The lines a hunk
 * expects (context and removed lines) are compared with the file at four levels, stopping at the first
 * level that finds anything: exact, then ignoring trailing whitespace, then ignoring leading and trailing
 * whitespace, then also reading typographic dashes, quotes and spaces as their ASCII forms. Without an anchor, two or
 * more places at that level is `PATCH_AMBIGUOUS`. With `@@` anchors, each anchor is found (first occurrence, same
 * levels) after the previous one, and the hunk takes its
 * first match after the last anchor: the anchor is what disambiguates. `*** End of File` only accepts a
 * match that ends at the last line. A hunk whose trailing lines are empty context lines that the file does
 * not have (a blank separator line in the patch) is retried without them.
 *
 * What is kept. Context lines keep the file's own text (a tolerant match never rewrites them). Every kept
 * line keeps its own ending; added lines take the file's dominant ending (CRLF when most lines use it).
 * A UTF-8 BOM is kept.
 *
 * Final newline rule. Whether the file ends with a newline is a property of the file that a V4A patch cannot
 * express, so it is kept: a file without a final newline still has none after the update, even when the
 * last line was changed or lines were appended (the new last line then has no newline); a file with one
 * keeps it. An empty file counts as newline-terminated, so lines added to it end with a newline.
 * (To turn "a" with no final newline into "a\n", replace the last line with itself plus one empty line.)
 *
 * Cost. Lines are interned to integers per level (the lines the hunks ask for; any other line shares one id), with an
 * index of where each line occurs. A hunk is looked up from its rarest line when that line is rare, and otherwise with
 * Knuth-Morris-Pratt over the interned lines: linear in the file for any hunk, even one whose context is a long run of
 * identical lines (a naive scan is quadratic there). The new content is copied from the file's text in runs of
 * untouched lines. The work yields at checkpoints (see pacer.ts). A file over `MAX_UPDATE_FILE_BYTES` is
 * TOO_LARGE before it is decoded.
 */

/** Largest file an `*** Update File` edits (64 MiB). */
export const MAX_UPDATE_FILE_BYTES = 64 * 1024 * 1024;

export interface FileUpdate {
  /** The new content, ready to write. */
  readonly after: Uint8Array;
  /** Decoded text before and after, BOM excluded; what a diff is built from. */
  readonly beforeText: string;
  readonly afterText: string;
  readonly bom: boolean;
}

type Level = 0 | 1 | 2 | 3;
const LEVEL_NAMES = ['exact', 'ignoring trailing whitespace', 'ignoring surrounding whitespace', 'ignoring surrounding whitespace and typographic punctuation'] as const;
/** The loosest level: typographic dashes, quotes and spaces read as their ASCII forms (as Codex's apply_patch matches). */
const LOOSEST: Level = 3;

interface LevelView {
  /** Interned id of each file line. */
  readonly ids: Int32Array;
  readonly intern: Map<string, number>;
  /** Line indexes grouped by id: the lines with id k are order[start[k] .. start[k + 1]), ascending. */
  readonly start: Int32Array;
  readonly order: Int32Array;
}

/**
 * File lines normalised per level and interned to integers (fast to compare), computed on first use. Only the lines
 * a hunk can ask for (its anchors, context and removed lines: `wanted`) get ids of their own; every other line of the
 * file shares one id that no hunk line has. Interning every distinct line of a large file into a map was most of a
 * plan's time (a 5 MB file: 100,000 inserts); looking each one up among a patch's few hundred lines is not.
 */
class LineViews {
  private readonly views: (LevelView | undefined)[] = [];
  constructor(
    private readonly lines: readonly string[],
    private readonly wanted: readonly string[],
  ) {}
  *get(level: Level): Steps<LevelView> {
    let v = this.views[level];
    if (v === undefined) {
      const intern = new Map<string, number>();
      for (const w of this.wanted) {
        const key = normalise(w, level);
        if (!intern.has(key)) intern.set(key, intern.size);
      }
      // The shared id of the lines no hunk asks for.
      const other = intern.size;
      const ids = new Int32Array(this.lines.length);
      for (let i = 0; i < this.lines.length; i++) {
        ids[i] = intern.get(normalise(this.lines[i] as string, level)) ?? other;
        if ((i & 16383) === 16383) yield;
      }
      // Counting sort of line indexes by id.
      const start = new Int32Array(other + 2);
      for (let i = 0; i < ids.length; i++) {
        const k = (ids[i] as number) + 1;
        start[k] = (start[k] as number) + 1;
      }
      for (let k = 0; k <= other; k++) start[k + 1] = (start[k + 1] as number) + (start[k] as number);
      const fill = start.slice(0, other + 1);
      const order = new Int32Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        const k = ids[i] as number;
        order[fill[k] as number] = i;
        fill[k] = (fill[k] as number) + 1;
      }
      yield;
      v = { ids, intern, start, order };
      this.views[level] = v;
    }
    return v;
  }
}

/** Typographic dashes, quotes and spaces, and the ASCII character each reads as at the loosest level. */
const TYPOGRAPHIC = /[\u2010-\u2015\u2212\u2018-\u201b\u201c-\u201f\u00a0\u2002-\u200a\u202f\u205f\u3000]/g;
function ascii(c: string): string {
  const code = c.charCodeAt(0);
  if ((code >= 0x2010 && code <= 0x2015) || code === 0x2212) return '-';
  if (code >= 0x2018 && code <= 0x201b) return "'";
  if (code >= 0x201c && code <= 0x201f) return '"';
  return ' ';
}

function normalise(s: string, level: Level): string {
  return level === 0 ? s : level === 1 ? s.trimEnd() : level === 2 ? s.trim() : s.trim().replace(TYPOGRAPHIC, ascii);
}

/** First index in the sorted slice order[lo, hi) whose value is >= x. */
function lowerBound(order: Int32Array, lo: number, hi: number, x: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((order[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Start indexes in [from, to] where `want` (normalised to `level`) matches the file, at most `limit`. */
function* findAll(views: LineViews, want: readonly string[], level: Level, from: number, to: number, limit: number): Steps<number[]> {
  const view = yield* views.get(level);
  const { ids, intern, start, order } = view;
  const needle = Int32Array.from(want, (w) => intern.get(normalise(w, level)) ?? -1);
  const out: number[] = [];
  if (needle.includes(-1) || to < from) return out; // A line no hunk asked for (none: LineViews has them all), or no room.
  const n = needle.length;
  // The rarest line of the hunk: when it occurs only a few times, checking those places is the cheapest way.
  let rare = 0;
  let rareCount = Number.POSITIVE_INFINITY;
  for (let j = 0; j < n; j++) {
    const k = needle[j] as number;
    const count = (start[k + 1] as number) - (start[k] as number);
    if (count < rareCount) {
      rareCount = count;
      rare = j;
    }
  }
  if (rareCount * n <= 4 * (to - from + n)) {
    const k = needle[rare] as number;
    let steps = 0;
    for (let c = lowerBound(order, start[k] as number, start[k + 1] as number, from + rare); c < (start[k + 1] as number); c++) {
      const at = (order[c] as number) - rare;
      if (at > to) break;
      let j = 0;
      while (j < n && ids[at + j] === needle[j]) j++;
      if (j === n) {
        out.push(at);
        if (out.length >= limit) break;
      }
      steps += j + 1;
      if (steps > 65536) {
        steps = 0;
        yield;
      }
    }
    return out;
  }
  // Knuth-Morris-Pratt over the interned lines: linear in the file whatever the hunk repeats.
  const fail = new Int32Array(n);
  for (let i = 1, k = 0; i < n; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = fail[k - 1] as number;
    if (needle[i] === needle[k]) k++;
    fail[i] = k;
    if ((i & 65535) === 0) yield;
  }
  const end = Math.min(ids.length, to + n);
  for (let i = from, k = 0; i < end; i++) {
    while (k > 0 && ids[i] !== needle[k]) k = fail[k - 1] as number;
    if (ids[i] === needle[k]) k++;
    if (k === n) {
      out.push(i - n + 1);
      if (out.length >= limit) break;
      k = fail[k - 1] as number;
    }
    if ((i & 65535) === 0) yield;
  }
  return out;
}

function* contextNotFound(path: string, hunkNo: number, what: string, wanted: string, fileLines: readonly string[], extra: Record<string, unknown> = {}): Steps<ToolError> {
  const nearest = yield* nearestLineSteps(wanted, fileLines);
  const details: Record<string, unknown> = { path, hunk: hunkNo, first_context_line: wanted, ...extra };
  if (nearest !== undefined) {
    details.nearest_line = nearest.line;
    details.nearest_text = nearest.text;
  }
  const near = nearest === undefined ? '' : ` The closest line is ${nearest.line}: ${JSON.stringify(nearest.text)}.`;
  const outOfOrder = typeof extra.matches_before_previous_hunk === 'number';
  const where = outOfOrder ? ` It matches at line ${String(extra.matches_before_previous_hunk)}, before the previous hunk.` : near;
  return new ToolError('PATCH_CONTEXT_NOT_FOUND', `Hunk ${hunkNo} of ${JSON.stringify(path)}: ${what} ${JSON.stringify(wanted)} was not found${hunkNo > 1 ? ' after the previous hunk' : ''}.${where}`, {
    hint: outOfOrder
      ? 'Hunks are applied top to bottom: order the hunks of a file as their lines appear in it.'
      : 'Read the file again and copy the context lines exactly as they are now; the file may have changed since you read it.',
    details,
  });
}

export function planFileUpdate(path: string, before: Uint8Array, hunks: readonly Hunk[]): FileUpdate {
  return runSync(planFileUpdateSteps(path, before, hunks));
}

/** planFileUpdate, yielding at checkpoints (see pacer.ts). */
export function* planFileUpdateSteps(path: string, before: Uint8Array, hunks: readonly Hunk[]): Steps<FileUpdate> {
  if (before.length > MAX_UPDATE_FILE_BYTES) {
    throw new ToolError('TOO_LARGE', `${JSON.stringify(path)} is ${before.length} bytes; a patch updates files up to ${MAX_UPDATE_FILE_BYTES} bytes (limit max_update_file_bytes).`, {
      hint: 'Edit such a file with a command, or replace it with Delete File + Add File.',
      details: { path, limit: 'max_update_file_bytes', max: MAX_UPDATE_FILE_BYTES, actual: before.length },
    });
  }
  const file = yield* readTextFileSteps(path, before);
  const texts = file.lines.map((l) => l.text);
  yield;
  // The new content as pieces: runs of the file's own lines (copied as one slice of its text, endings included) and
  // single added lines.
  const pieces: Piece[] = [];
  const keep = (from: number, to: number): void => {
    if (to <= from) return;
    const last = pieces[pieces.length - 1];
    if (last !== undefined && 'from' in last && last.to === from) pieces[pieces.length - 1] = { from: last.from, to };
    else pieces.push({ from, to });
  };
  const views = new LineViews(
    texts,
    hunks.flatMap((h) => [...h.anchors, ...h.lines.filter((l) => l.kind !== 'add').map((l) => l.text)]),
  );
  let cursor = 0;
  // A run of trailing empty context lines longer than the file's longest run of blank lines can never match:
  // the retry below starts from there instead of dropping them one at a time.
  let longestBlankRun = -1;
  const blankRun = function* (): Steps<number> {
    if (longestBlankRun < 0) {
      longestBlankRun = 0;
      for (let i = 0, run = 0; i < texts.length; i++) {
        run = (texts[i] as string).trim() === '' ? run + 1 : 0;
        if (run > longestBlankRun) longestBlankRun = run;
        if ((i & 16383) === 16383) yield;
      }
    }
    return longestBlankRun;
  };

  for (const [index, hunk] of hunks.entries()) {
    yield;
    const hunkNo = index + 1;
    // Anchors: each one found after the previous; the hunk may start on the last anchor line itself.
    let searchFrom = cursor;
    let anchorFrom = cursor;
    for (const anchor of hunk.anchors) {
      let found = -1;
      for (let level: Level = 0; level <= LOOSEST && found < 0; level = (level + 1) as Level) {
        const hits = yield* findAll(views, [anchor], level, anchorFrom, texts.length - 1, 1);
        if (hits.length > 0) found = hits[0] as number;
      }
      if (found < 0) throw yield* contextNotFound(path, hunkNo, 'the @@ anchor', anchor, texts, { anchor });
      searchFrom = found;
      anchorFrom = found + 1;
    }
    const anchored = hunk.anchors.length > 0;

    const locate = function* (want: readonly HunkLineLike[]): Steps<number | undefined> {
      const old = want.filter((l) => l.kind !== 'add').map((l) => l.text);
      if (old.length === 0) {
        // Pure insertion: right after the anchor when there is one, else at the end of the file (an empty file too).
        if (anchored && !hunk.endOfFile) return searchFrom + 1;
        return texts.length >= cursor ? texts.length : undefined;
      }
      const lastStart = texts.length - old.length;
      if (lastStart < searchFrom) return undefined;
      for (let level: Level = 0; level <= LOOSEST; level = (level + 1) as Level) {
        const from = hunk.endOfFile ? lastStart : searchFrom;
        const hits = yield* findAll(views, old, level, from, lastStart, anchored ? 1 : 6);
        if (hits.length === 0) continue;
        if (hits.length > 1) {
          throw new ToolError('PATCH_AMBIGUOUS', `Hunk ${hunkNo} of ${JSON.stringify(path)} matches ${hits.length > 5 ? 'more than 5' : hits.length} places (${LEVEL_NAMES[level]}), at lines ${hits.slice(0, 5).map((h) => h + 1).join(', ')}.`, {
            hint: 'Add more context lines so the hunk matches one place only, or put an "@@ <line>" anchor (such as the enclosing function or class line) before it.',
            details: { path, hunk: hunkNo, candidates: hits.slice(0, 5).map((h) => h + 1), match: LEVEL_NAMES[level] },
          });
        }
        return hits[0];
      }
      return undefined;
    };

    let lines = hunk.lines;
    let pos = yield* locate(lines);
    // Retry without trailing empty context lines (blank separator lines in the patch).
    const isTrailingBlank = (ls: typeof lines): boolean => ls.length > 0 && ls[ls.length - 1]?.kind === 'context' && ls[ls.length - 1]?.text === '';
    if (pos === undefined && isTrailingBlank(lines)) {
      let trailing = 0;
      while (trailing < lines.length && lines[lines.length - 1 - trailing]?.kind === 'context' && lines[lines.length - 1 - trailing]?.text === '') trailing++;
      const keep = Math.min(trailing - 1, yield* blankRun());
      lines = lines.slice(0, lines.length - trailing + keep);
      pos = yield* locate(lines);
      while (pos === undefined && isTrailingBlank(lines)) {
        lines = lines.slice(0, -1);
        pos = yield* locate(lines);
      }
    }
    if (pos === undefined) {
      const firstOld = hunk.lines.find((l) => l.kind !== 'add');
      const wanted = firstOld?.text ?? '';
      const extra: Record<string, unknown> = { end_of_file: hunk.endOfFile };
      // A common slip: hunks out of file order. Say so when the hunk fits before the previous one.
      const old = hunk.lines.filter((l) => l.kind !== 'add').map((l) => l.text);
      if (cursor > 0 && !hunk.endOfFile) {
        for (const lv of [0, 1, 2, 3] as const) {
          const earlier = (yield* findAll(views, old, lv, 0, Math.min(cursor - 1, texts.length - old.length), 1))[0];
          if (earlier !== undefined) {
            extra.matches_before_previous_hunk = earlier + 1;
            break;
          }
        }
      }
      throw yield* contextNotFound(path, hunkNo, hunk.endOfFile ? 'the end-of-file context starting with' : 'the context starting with', wanted, texts, extra);
    }

    // Keep the untouched lines before the hunk, then apply it.
    keep(cursor, pos);
    let at = pos;
    for (const l of lines) {
      if (l.kind === 'context') keep(at, ++at);
      else if (l.kind === 'remove') at++;
      else pieces.push({ text: l.text, eol: file.eol });
    }
    cursor = at;
  }
  keep(cursor, file.lines.length);
  yield;
  const afterText = joinPieces(file, pieces);
  yield;
  return { after: encodeText(afterText, file.bom), beforeText: file.text, afterText, bom: file.bom };
}

/** A run of the file's own lines [from, to), or one added line. */
type Piece = { readonly from: number; readonly to: number } | TextLine;

/**
 * The text of the pieces. Line endings: every line but the last ends with one (a kept line its own, an added line the
 * file's); the last follows the file's final-newline state. Only the file's last line can lack an ending, so a run
 * needs a fix only at its end.
 */
function joinPieces(file: TextFile, pieces: readonly Piece[]): string {
  const parts: string[] = [];
  for (let k = 0; k < pieces.length; k++) {
    const p = pieces[k] as Piece;
    const isLast = k === pieces.length - 1;
    if ('from' in p) {
      const lastLine = file.lines[p.to - 1] as TextLine;
      const lastStart = file.starts[p.to - 1] as number;
      const end = lastStart + lastLine.text.length + (isLast && !file.finalNewline ? 0 : lastLine.eol.length);
      parts.push(file.text.slice(file.starts[p.from] as number, end));
      if (!isLast && lastLine.eol === '') parts.push(file.eol);
    } else {
      parts.push(p.text);
      if (!isLast || file.finalNewline) parts.push(p.eol);
    }
  }
  return parts.join('');
}

type HunkLineLike = Hunk['lines'][number];

/** Content of a `*** Add File`: each line ends with LF; no lines is an empty file. */
export function buildAddedFile(lines: readonly string[]): Uint8Array {
  return runSync(buildAddedFileSteps(lines));
}

/** buildAddedFile, yielding at checkpoints. */
export function* buildAddedFileSteps(lines: readonly string[]): Steps<Uint8Array> {
  const text = yield* joinLinesSteps(lines.map((text) => ({ text, eol: '\n' as const })));
  return encodeText(text, false);
}

/** The file line (1-based) most similar to `wanted`, by character bigrams; a hint for a failed match. */
function* nearestLineSteps(wanted: string, lines: readonly string[]): Steps<{ line: number; text: string } | undefined> {
  const target = wanted.trim();
  if (lines.length === 0) return undefined;
  const want = bigrams(target);
  let best = -1;
  let bestScore = -1;
  for (let i = 0; i < lines.length; i++) {
    if ((i & 4095) === 4095) yield;
    const text = (lines[i] as string).trim();
    if (text === target) return { line: i + 1, text: lines[i] as string };
    // Cheap length filter: Dice similarity cannot beat the best so far when lengths differ a lot.
    const maxPossible = (2 * Math.min(text.length, target.length)) / Math.max(1, text.length + target.length);
    if (maxPossible <= bestScore) continue;
    const score = dice(want, target, text);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  if (best < 0 || bestScore <= 0) return undefined;
  return { line: best + 1, text: lines[best] as string };
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  const t = s.length > 400 ? s.slice(0, 400) : s;
  for (let i = 0; i + 1 < t.length; i++) {
    const g = t.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(want: Map<string, number>, wantText: string, other: string): number {
  const t = other.length > 400 ? other.slice(0, 400) : other;
  if (wantText.length < 2 || t.length < 2) return wantText === t ? 1 : 0;
  const seen = new Map<string, number>();
  let common = 0;
  for (let i = 0; i + 1 < t.length; i++) {
    const g = t.slice(i, i + 2);
    const used = seen.get(g) ?? 0;
    if (used < (want.get(g) ?? 0)) common++;
    seen.set(g, used + 1);
  }
  const wantCount = Math.min(wantText.length, 400) - 1;
  return (2 * common) / (wantCount + t.length - 1);
}
