import { lineChanges } from '../../patches';

/**
 * Hunks of a review after the write: what differs between a file's accepted text (the left side of the review: the
 * file before the agent's first write, with the hunks the reviewer kept) and the file now. Keep moves a hunk into the
 * accepted text; Undo writes its reverse to the file (through the patch engine, see afterWriteReviews.ts).
 *
 * Texts are compared line by line with their line terminators, so a hunk's reverse restores the accepted bytes
 * exactly (CRLF, a missing final newline). A leading BOM is not part of the first line.
 */

/** One block of lines: 0-based, [start, end) of the accepted text (`base`) and of the file now (`current`). */
export interface Hunk {
  readonly index: number;
  readonly base: { readonly start: number; readonly end: number };
  readonly current: { readonly start: number; readonly end: number };
  /** The accepted lines the change replaced, with their terminators. */
  readonly removed: string;
  /** The lines the file has now in their place, with their terminators. */
  readonly added: string;
}

const BOM = '\uFEFF';

/** Lines with their terminators ('\n' or '\r\n'; the last may have none). */
export function splitKeepingEol(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', from)) {
    out.push(text.slice(from, i + 1));
    from = i + 1;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

function withoutBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/** The hunks from `base` to `current`, in file order. */
export function hunksOf(base: string, current: string): Hunk[] {
  const b = withoutBom(base);
  const c = withoutBom(current);
  // Compared with CR kept: lineChanges splits at '\n', so "x\r" and "x" differ as the bytes do.
  const bl = splitKeepingEol(b);
  const cl = splitKeepingEol(c);
  return lineChanges(b, c).map((ch, index) => ({
    index,
    base: { start: ch.aStart, end: ch.aEnd },
    current: { start: ch.bStart, end: ch.bEnd },
    removed: bl.slice(ch.aStart, ch.aEnd).join(''),
    added: cl.slice(ch.bStart, ch.bEnd).join(''),
  }));
}

/** Which side of a review's diff a line is on: `old` the accepted text (left), `new` the file now (right). */
export type HunkSide = 'old' | 'new';

/** A hunk's lines on one side of the diff. */
export function linesOn(hunk: Hunk, side: HunkSide): Hunk['base'] {
  return side === 'old' ? hunk.base : hunk.current;
}

/**
 * The hunk at a 0-based line of one side of the diff (`new`: the file now, the default; `old`: the accepted text):
 * the one whose lines on that side hold it, else one with no line on that side just before or after it (a deletion
 * seen from the file, an insertion seen from the accepted text). Undefined when the line is in no hunk.
 */
export function hunkAtLine(hunks: readonly Hunk[], line: number, side: HunkSide = 'new'): Hunk | undefined {
  const on = (h: Hunk): Hunk['base'] => linesOn(h, side);
  const inside = hunks.find((h) => on(h).start <= line && line < on(h).end);
  if (inside) return inside;
  return hunks.find((h) => on(h).start === on(h).end && (line === on(h).start || line === on(h).start - 1));
}

function splice(text: string, range: { start: number; end: number }, lines: string): string {
  const bom = text.startsWith(BOM) ? BOM : '';
  const all = splitKeepingEol(withoutBom(text));
  return bom + [...all.slice(0, range.start), lines, ...all.slice(range.end)].join('');
}

/** The accepted text after keeping `hunk`: its lines as the file has them now. */
export function keepHunk(base: string, hunk: Hunk): string {
  return splice(base, hunk.base, hunk.added);
}

/** The file's text after undoing `hunk`: the accepted lines back in place of the hunk's lines. */
export function undoHunk(current: string, hunk: Hunk): string {
  return splice(current, hunk.current, hunk.removed);
}

function patchLine(prefix: ' ' | '-' | '+', line: string): string {
  return prefix + line.replace(/\r?\n$/, '');
}

/**
 * A V4A patch that undoes `hunk` in `path` (whose text now is `current`): the hunk's lines removed, the accepted ones
 * added, with as many lines of context around it as make the hunk's place unique in the file (so the patch engine
 * finds exactly this place, or refuses). The engine keeps the file's final-newline state and line endings; the
 * caller commits the exact bytes of undoHunk.
 */
export function undoPatch(path: string, current: string, hunk: Hunk): string {
  const lines = splitKeepingEol(withoutBom(current));
  const key = (l: string): string => l.replace(/\r?\n$/, '');
  const keys = lines.map(key);
  const { start, end } = hunk.current;
  let context = 3;
  for (;;) {
    const from = Math.max(0, start - context);
    const to = Math.min(lines.length, end + context);
    const block = keys.slice(from, to);
    let found = 0;
    if (block.length > 0) {
      for (let i = 0; i + block.length <= keys.length && found < 2; i++) {
        if (block.every((k, j) => keys[i + j] === k)) found++;
      }
    }
    const atEnd = to === lines.length && lines.length > 0;
    if (found <= 1 || (from === 0 && to === lines.length)) {
      const body = [
        ...lines.slice(from, start).map((l) => patchLine(' ', l)),
        ...lines.slice(start, end).map((l) => patchLine('-', l)),
        ...splitKeepingEol(hunk.removed).map((l) => patchLine('+', l)),
        ...lines.slice(end, to).map((l) => patchLine(' ', l)),
      ];
      return ['*** Begin Patch', `*** Update File: ${path}`, '@@', ...body, ...(atEnd ? ['*** End of File'] : []), '*** End Patch'].join('\n');
    }
    context *= 2;
  }
}
