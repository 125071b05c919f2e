import { ToolError } from '../../../base/errors';
import { checkRelativePath } from '../../../base/paths';
import type { Pacer, Steps } from './pacer';
import { drive, runSync } from './pacer';

/**
 * V4A patch parser. Turns the patch text an agent sends into a checked, typed list of file operations.
 * Pure: no file is read here. Every failure is a `PATCH_INVALID` ToolError carrying the 1-based line of the
 * patch in `details.line`, except a bad path, which keeps its own `PATH_OUTSIDE_WORKSPACE` code.
 *
 * Grammar (one item per line; `\r\n` and `\n` are both accepted):
 *
 *   *** Begin Patch
 *   ( *** Add File: <path>      then `+` lines, the whole content
 *   | *** Delete File: <path>   with no body
 *   | *** Update File: <path>   [*** Move to: <path>] then hunks )*
 *   *** End Patch
 *
 * A hunk is one or more `@@` lines (each may carry an anchor text: a line to find before the hunk), then
 * lines starting with ' ' (context), '-' (remove) or '+' (add), optionally closed by `*** End of File`
 * (the hunk must match at the end of the file). A completely empty line inside a hunk is an empty context
 * line. The `@@` of the first hunk of a file may be left out.
 *
 * Bounds, checked before the work they would cost: `PATCH_LIMITS` (characters, file sections, hunks per file);
 * each refusal is `TOO_LARGE` with `details.limit` naming it. Lines are read one at a time and the parse yields
 * at checkpoints (see pacer.ts), so a large patch never holds the event loop.
 */

/** Size bounds of one patch. */
export const PATCH_LIMITS = {
  /** Characters of patch text (16 MiB). */
  maxPatchChars: 16 * 1024 * 1024,
  /** `*** Add/Update/Delete File` sections. */
  maxFiles: 1000,
  /** Hunks in one `*** Update File` section. */
  maxHunksPerFile: 1000,
} as const;

function tooLarge(limit: keyof typeof PATCH_LIMITS, message: string, hint: string, extra: Record<string, unknown> = {}): ToolError {
  return new ToolError('TOO_LARGE', message, { hint, details: { limit, max: PATCH_LIMITS[limit], ...extra } });
}

export type HunkLineKind = 'context' | 'remove' | 'add';

export interface HunkLine {
  readonly kind: HunkLineKind;
  /** The line's text without the leading marker and without a line ending. */
  readonly text: string;
}

export interface Hunk {
  /** Anchor texts of the `@@` lines, outermost first; each is found, in order, before the hunk. */
  readonly anchors: readonly string[];
  readonly lines: readonly HunkLine[];
  /** `*** End of File` closed the hunk: it must match the last lines of the file. */
  readonly endOfFile: boolean;
  /** 1-based line in the patch where the hunk starts. */
  readonly patchLine: number;
}

export interface AddFileOp {
  readonly kind: 'add';
  readonly path: string;
  /** Content lines without their `+` marker; the file is these lines, each ending with a newline. */
  readonly lines: readonly string[];
  readonly patchLine: number;
}

export interface DeleteFileOp {
  readonly kind: 'delete';
  readonly path: string;
  readonly patchLine: number;
}

export interface UpdateFileOp {
  readonly kind: 'update';
  readonly path: string;
  /** Destination of a `*** Move to:`; undefined when the file stays where it is. */
  readonly moveTo: string | undefined;
  readonly hunks: readonly Hunk[];
  readonly patchLine: number;
}

export type FileOp = AddFileOp | DeleteFileOp | UpdateFileOp;

export interface ParsedPatch {
  readonly files: readonly FileOp[];
}

const BEGIN = '*** Begin Patch';
const END = '*** End Patch';
const ADD = '*** Add File:';
const DELETE = '*** Delete File:';
const UPDATE = '*** Update File:';
const MOVE = '*** Move to:';
const EOF_MARK = '*** End of File';

const FORMAT_HINT =
  'Send a V4A patch: "*** Begin Patch", then "*** Add File: <path>" / "*** Update File: <path>" / "*** Delete File: <path>" sections, then "*** End Patch".';

function invalid(line: number, message: string, hint: string = FORMAT_HINT, extra: Record<string, unknown> = {}): ToolError {
  return new ToolError('PATCH_INVALID', `Invalid patch at line ${line}: ${message}`, { hint, details: { line, ...extra } });
}

/** A header path that must be written as a JSON string: blanks at either end, a leading quote, a control character. */
const NEEDS_QUOTES = /^[\s"]|\s$/;

/** True when `s` holds a control character (C0 or DEL). */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * A path as a patch header writes it: as it is, or as a JSON string when the plain form would not read back exactly
 * (the header is trimmed, and a line cannot hold a line break).
 */
export function headerPath(p: string): string {
  return NEEDS_QUOTES.test(p) || hasControl(p) ? JSON.stringify(p) : p;
}

/**
 * Validates a header path; a confinement failure keeps its code and gains the patch line. The path is the text
 * after the colon, trimmed; one that starts with `"` is a JSON string (for names with blanks at either end, quotes
 * or control characters, newlines included).
 */
function checkPath(raw: string, line: number): string {
  let trimmed = raw.trim();
  if (trimmed === '') throw invalid(line, 'expected a path after the colon but found none.', 'Write the file path after the colon, relative to the workspace root.');
  if (trimmed.startsWith('"')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'string') {
      throw invalid(line, `expected a path, or a path written as one JSON string, but found ${found(trimmed)}.`, 'A path that starts with a double quote is read as a JSON string: close it, escape inner quotes as \\", or write the path without quotes.');
    }
    trimmed = parsed;
  }
  try {
    return checkRelativePath(trimmed);
  } catch (err) {
    if (ToolError.is(err)) {
      throw new ToolError(err.code, err.message, { hint: err.hint, details: { ...(err.details ?? {}), line }, cause: err });
    }
    throw err;
  }
}

/** Known structural lines, recognised with blanks around them (an unknown `***` line only at column 0). */
const PADDED_MARKER = /^[ \t]+\*\*\* (?:(?:Begin Patch|End Patch|End of File)[ \t]*$|Add File:|Update File:|Delete File:|Move to:)/;

/**
 * The structural line `line` is, trimmed, or undefined when it is hunk content. A line starting with `***` is always
 * structural; with leading blanks, only one of the known markers is (so a context line such as `  *** NOTE ***`
 * stays content).
 */
function structural(line: string): string | undefined {
  if (line.startsWith('***')) return line.trim();
  const c = line.charCodeAt(0);
  return (c === 32 || c === 9) && PADDED_MARKER.test(line) ? line.trim() : undefined;
}

/** True for a line that is one of the `*** ...` structural lines (rather than hunk content). */
function isHeader(line: string): boolean {
  return structural(line) !== undefined;
}

/** What a line is, for an error message: its text, quoted. */
function found(line: string): string {
  return line === '' ? 'an empty line' : JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line);
}

/** An `@@` marker with leading blanks. */
const PADDED_AT = /^[ \t]+@@/;

/** Matches a unified-diff hunk header such as `@@ -1,3 +1,4 @@`, which V4A does not use. */
const UNIFIED_RANGE = /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/;

/** Reads the patch one line at a time (`\r\n` or `\n`), without splitting the whole text at once. */
class Cursor {
  private pos: number;
  private index: number;
  private current: string | undefined;
  private nextPos = 0;
  constructor(
    private readonly text: string,
    start: { pos: number; index: number },
    private readonly endIndex: number,
  ) {
    this.pos = start.pos;
    this.index = start.index;
  }
  get done(): boolean {
    return this.index >= this.endIndex;
  }
  /** 1-based patch line of the current line. */
  get lineNo(): number {
    return this.index + 1;
  }
  peek(): string {
    if (this.current === undefined) {
      if (this.done) return '';
      const nl = this.text.indexOf('\n', this.pos);
      const end = nl < 0 ? this.text.length : nl;
      this.current = this.text.slice(this.pos, end > this.pos && this.text.charCodeAt(end - 1) === 13 ? end - 1 : end);
      this.nextPos = nl < 0 ? this.text.length : nl + 1;
    }
    return this.current;
  }
  next(): string {
    const l = this.peek();
    if (!this.done) {
      this.pos = this.nextPos;
      this.index++;
      this.current = undefined;
    }
    return l;
  }
}

/** Start offsets of the lines of `text` that a scan visits; the shape `Cursor` starts from. */
interface LineStart {
  pos: number;
  index: number;
}

/** The first line that is not blank (or the end), counting lines. */
function* firstContentLine(text: string): Steps<LineStart & { line: string }> {
  let pos = 0;
  let index = 0;
  for (;;) {
    const nl = text.indexOf('\n', pos);
    const line = text.slice(pos, nl < 0 ? text.length : nl).replace(/\r$/, '');
    if (line.trim() !== '' || nl < 0) return { pos, index, line };
    pos = nl + 1;
    index++;
    if ((index & 4095) === 0) yield;
  }
}

/** Number of lines in `text` (as split(/\r?\n/) would count them). */
function* countLines(text: string): Steps<number> {
  let n = 1;
  for (let pos = text.indexOf('\n'); pos >= 0; pos = text.indexOf('\n', pos + 1)) {
    n++;
    if ((n & 65535) === 0) yield;
  }
  return n;
}

/** The last line that is not blank: its text, 0-based index and start offset (given the total line count). */
function lastContentLine(text: string, total: number): LineStart & { line: string } {
  let end = text.length;
  let index = total - 1;
  for (;;) {
    const nl = end === 0 ? -1 : text.lastIndexOf('\n', end - 1);
    const start = nl + 1;
    const line = text.slice(start, end).replace(/\r$/, '');
    if (line.trim() !== '' || nl < 0) return { pos: start, index, line };
    end = nl;
    index--;
  }
}

/** Parses a patch at once (tests, small patches). */
export function parsePatch(text: string): ParsedPatch {
  return runSync(parseSteps(text));
}

/** Parses a patch, yielding to the event loop as `pacer` says. */
export function parsePatchPaced(text: string, pacer: Pacer): Promise<ParsedPatch> {
  return drive(parseSteps(text), pacer);
}

function* parseSteps(text: string): Steps<ParsedPatch> {
  if (typeof text !== 'string' || text.trim() === '') {
    throw invalid(1, `expected "${BEGIN}" but found an empty patch.`, `${FORMAT_HINT} An empty patch changes nothing, so it is rejected.`);
  }
  if (text.length > PATCH_LIMITS.maxPatchChars) {
    throw tooLarge('maxPatchChars', `The patch has ${text.length} characters; the limit (maxPatchChars) is ${PATCH_LIMITS.maxPatchChars}.`, 'Split the change into several smaller patches.', { actual: text.length });
  }

  // Blank lines before Begin and after End are tolerated; the markers themselves may carry trailing spaces.
  const total = yield* countLines(text);
  const head = yield* firstContentLine(text);
  const tail = lastContentLine(text, total);
  const first = head.index;
  const last = Math.max(first, tail.index);

  if (head.line.trim() !== BEGIN) {
    throw invalid(first + 1, `expected "${BEGIN}" but found ${JSON.stringify(head.line)}.`);
  }
  if (last === first || tail.line.trim() !== END) {
    // Say where the text really ends, and whether End Patch appears too early.
    const scan = new Cursor(text, head, last + 1);
    scan.next();
    while (!scan.done) {
      const lineNo = scan.lineNo;
      if (structural(scan.next()) === END) {
        throw invalid(lineNo + 1, `expected the end of the patch after "${END}" (line ${lineNo}) but found ${found(scan.peek())}.`, `Put "${END}" on the last line of the patch, after every file section.`);
      }
      if ((lineNo & 4095) === 0) yield;
    }
    if (last === first) {
      throw invalid(last + 1, `expected file sections and "${END}" after "${BEGIN}" but the patch ends there.`, `Finish the patch with a "${END}" line after its file sections.`);
    }
    // Only a last line that reads as patch content suggests the text was cut short; a misspelt End Patch does not.
    const misspelt = /end\s*patch/i.test(tail.line);
    const content = !misspelt && (/^[+\- @]/.test(tail.line) || tail.line.startsWith('***'));
    throw invalid(
      last + 1,
      `expected "${END}" as the last line but found ${found(tail.line)}${misspelt ? ' (misspelt?)' : ''}.`,
      content ? `Finish the patch with a "${END}" line; if the text was cut short, send the whole patch again.` : `Finish the patch with a "${END}" line, spelt exactly so.`,
      { found: tail.line.slice(0, 200) },
    );
  }

  const cur = new Cursor(text, head, last);
  cur.next();
  const files: FileOp[] = [];
  const touched = new Map<string, number>();
  const touch = (p: string, line: number): void => {
    const prev = touched.get(p);
    if (prev !== undefined) {
      throw invalid(line, `${JSON.stringify(p)} is already touched by the section at line ${prev}.`, 'Touch each path once per patch: merge the changes into one section.', { path: p, first_line: prev });
    }
    touched.set(p, line);
  };

  while (!cur.done) {
    const lineNo = cur.lineNo;
    const raw = cur.next();
    // A file header may carry blanks on either side, as Begin and End Patch may.
    const header = raw.trim();
    if (header === '') continue;
    if (files.length >= PATCH_LIMITS.maxFiles && (header.startsWith(ADD) || header.startsWith(DELETE) || header.startsWith(UPDATE))) {
      throw tooLarge('maxFiles', `The patch has more than ${PATCH_LIMITS.maxFiles} file sections (the limit, maxFiles); the next one starts at line ${lineNo}.`, 'Split the change into several patches of at most that many files each.', { line: lineNo });
    }
    yield;
    if (header.startsWith(ADD)) {
      const p = checkPath(header.slice(ADD.length), lineNo);
      touch(p, lineNo);
      const content: string[] = [];
      while (!cur.done && !isHeader(cur.peek())) {
        const ln = cur.lineNo;
        const l = cur.next();
        if (!l.startsWith('+')) {
          throw invalid(ln, `expected a line of the added file starting with "+" (or the next file header) but found ${found(l)}.`, 'Prefix each content line of "*** Add File" with "+" (a lone "+" is an empty line).');
        }
        content.push(l.slice(1));
        if ((content.length & 4095) === 0) yield;
      }
      files.push({ kind: 'add', path: p, lines: content, patchLine: lineNo });
    } else if (header.startsWith(DELETE)) {
      const p = checkPath(header.slice(DELETE.length), lineNo);
      touch(p, lineNo);
      if (!cur.done && !isHeader(cur.peek()) && cur.peek().trim() !== '') {
        throw invalid(cur.lineNo, `expected the next file header after "${DELETE}" (it takes no content lines) but found ${found(cur.peek())}.`, 'Put the next file header right after the delete line.');
      }
      files.push({ kind: 'delete', path: p, patchLine: lineNo });
    } else if (header.startsWith(UPDATE)) {
      const p = checkPath(header.slice(UPDATE.length), lineNo);
      touch(p, lineNo);
      let moveTo: string | undefined;
      if (!cur.done && structural(cur.peek())?.startsWith(MOVE) === true) {
        const moveLine = cur.lineNo;
        moveTo = checkPath(cur.next().trim().slice(MOVE.length), moveLine);
        if (moveTo === p) {
          throw invalid(moveLine, `the file is moved onto itself (${JSON.stringify(p)}).`, 'Drop the "*** Move to" line, or name a different destination.');
        }
        touch(moveTo, moveLine);
      }
      const hunks = yield* parseHunks(cur, p);
      if (hunks.length === 0 && moveTo === undefined) {
        throw invalid(lineNo, `expected a hunk after "${UPDATE} ${p}" but found ${cur.done ? `"${END}"` : found(cur.peek())}.`, 'Add at least one "@@" hunk with "-" / "+" lines, or leave the file out of the patch.', { path: p });
      }
      files.push({ kind: 'update', path: p, moveTo, hunks, patchLine: lineNo });
    } else if (header.startsWith(MOVE)) {
      throw invalid(lineNo, `expected a file header but found ${found(raw)}: "${MOVE}" must directly follow an "${UPDATE}" line.`);
    } else if (header === EOF_MARK) {
      throw invalid(lineNo, `expected a file header but found ${found(raw)}: "${EOF_MARK}" must close a hunk of an updated file.`);
    } else if (header === BEGIN) {
      throw invalid(lineNo, `expected a file header but found a second "${BEGIN}".`, 'Send one patch per call, with a single Begin / End pair.');
    } else if (header === END) {
      throw invalid(lineNo, `expected the end of the patch after "${END}" but found more lines.`, `Put "${END}" on the last line of the patch.`);
    } else if (header.startsWith('***')) {
      throw invalid(lineNo, `expected "${ADD} <path>", "${UPDATE} <path>" or "${DELETE} <path>" but found the unknown header ${found(raw)}.`);
    } else {
      throw invalid(lineNo, `expected a file header ("${ADD} <path>", "${UPDATE} <path>" or "${DELETE} <path>") but found ${found(raw)}.`);
    }
  }

  if (files.length === 0) {
    throw invalid(first + 1, `expected a file section after "${BEGIN}" but found none.`, `${FORMAT_HINT} An empty patch changes nothing, so it is rejected.`);
  }
  return { files };
}

/** Reads the hunks of one Update section, up to the next file header or the end of the patch. */
function* parseHunks(cur: Cursor, path: string): Steps<Hunk[]> {
  const hunks: Hunk[] = [];
  let anchors: string[] = [];
  let body: HunkLine[] = [];
  let start = 0;
  let open = false;

  const close = (endOfFile: boolean, atLine: number): void => {
    if (!open) return;
    if (!body.some((l) => l.kind !== 'context')) {
      throw invalid(start, `expected a "-" or "+" line in hunk ${hunks.length + 1} of ${JSON.stringify(path)} but found only context (it changes nothing).`, 'Each hunk needs at least one "-" or "+" line; drop hunks that only show context.', {
        path,
        hunk: hunks.length + 1,
        end_line: atLine,
      });
    }
    if (hunks.length >= PATCH_LIMITS.maxHunksPerFile) {
      throw tooLarge('maxHunksPerFile', `${JSON.stringify(path)} has more than ${PATCH_LIMITS.maxHunksPerFile} hunks (the limit, maxHunksPerFile); hunk ${hunks.length + 1} starts at line ${start}.`, 'Merge neighbouring hunks, or split the change into several patches.', { path, line: start });
    }
    hunks.push({ anchors, lines: body, endOfFile, patchLine: start });
    anchors = [];
    body = [];
    open = false;
  };

  while (!cur.done) {
    const raw = cur.peek();
    const lineNo = cur.lineNo;
    if (structural(raw) === EOF_MARK) {
      cur.next();
      if (!open || body.length === 0) throw invalid(lineNo, `expected the lines of a hunk before "${EOF_MARK}" but found none.`);
      close(true, lineNo);
      // After the end of the file, only another file section (or End Patch) can follow.
      if (!cur.done && !isHeader(cur.peek())) {
        throw invalid(cur.lineNo, `expected a file header or "${END}" after "${EOF_MARK}" in ${JSON.stringify(path)} but found ${found(cur.peek())}.`, `"${EOF_MARK}" closes the last hunk of a file; order hunks as they appear in the file.`);
      }
      continue;
    }
    if (isHeader(raw)) break;
    cur.next();
    // "@@" with leading blanks is a marker where no context line can be: before a hunk's first line.
    if (raw.startsWith('@@') || (!(open && body.length > 0) && PADDED_AT.test(raw))) {
      const at = raw.trim();
      if (UNIFIED_RANGE.test(at)) {
        throw invalid(lineNo, `expected "@@" or "@@ <anchor line>" but found the unified-diff range ${found(raw)}: V4A hunks carry no line numbers.`, 'Write "@@" alone, or "@@ <a line of the file>" as an anchor; find the place with context lines instead of numbers.');
      }
      if (open && body.length > 0) close(false, lineNo);
      if (!open) {
        open = true;
        start = lineNo;
      }
      const anchor = at.slice(2).trim();
      if (anchor !== '') anchors.push(anchor);
      continue;
    }
    let line: HunkLine;
    if (raw === '') line = { kind: 'context', text: '' };
    else if (raw[0] === ' ') line = { kind: 'context', text: raw.slice(1) };
    else if (raw[0] === '-') line = { kind: 'remove', text: raw.slice(1) };
    else if (raw[0] === '+') line = { kind: 'add', text: raw.slice(1) };
    else {
      throw invalid(lineNo, `expected a hunk line starting with " ", "-", "+" or "@@" (or a file header) but found ${found(raw)}.`, 'Prefix context lines with a space, removed lines with "-", added lines with "+".', { path });
    }
    if (!open) {
      // The first hunk may omit its "@@".
      open = true;
      start = lineNo;
    }
    body.push(line);
    if ((body.length & 4095) === 0) yield;
  }
  close(false, cur.lineNo);
  return hunks;
}
