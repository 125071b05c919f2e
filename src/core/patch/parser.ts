import { ToolError } from '../errors';
import { checkRelativePath } from '../policy/paths';

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
 */

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

/** Validates a header path; a confinement failure keeps its code and gains the patch line. */
function checkPath(raw: string, line: number): string {
  const trimmed = raw.trim();
  if (trimmed === '') throw invalid(line, 'the header names no path.', 'Write the file path after the colon, relative to the workspace root.');
  try {
    return checkRelativePath(trimmed);
  } catch (err) {
    if (ToolError.is(err)) {
      throw new ToolError(err.code, err.message, { hint: err.hint, details: { ...(err.details ?? {}), line }, cause: err });
    }
    throw err;
  }
}

/** True for a line that is one of the `*** ...` structural lines (rather than hunk content). */
function isHeader(line: string): boolean {
  return line.startsWith('***');
}

/** Matches a unified-diff hunk header such as `@@ -1,3 +1,4 @@`, which V4A does not use. */
const UNIFIED_RANGE = /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/;

class Cursor {
  private index: number;
  constructor(
    private readonly lines: readonly string[],
    start: number,
    private readonly end: number,
  ) {
    this.index = start;
  }
  get done(): boolean {
    return this.index >= this.end;
  }
  /** 1-based patch line of the current line. */
  get lineNo(): number {
    return this.index + 1;
  }
  peek(): string {
    return this.lines[this.index] ?? '';
  }
  next(): string {
    const l = this.lines[this.index] ?? '';
    this.index++;
    return l;
  }
}

export function parsePatch(text: string): ParsedPatch {
  if (typeof text !== 'string' || text.trim() === '') {
    throw invalid(1, 'the patch is empty.', `${FORMAT_HINT} An empty patch changes nothing, so it is rejected.`);
  }
  const lines = text.split(/\r?\n/);

  // Blank lines before Begin and after End are tolerated; the markers themselves may carry trailing spaces.
  let first = 0;
  while (first < lines.length && (lines[first] ?? '').trim() === '') first++;
  let last = lines.length - 1;
  while (last > first && (lines[last] ?? '').trim() === '') last--;

  if ((lines[first] ?? '').trim() !== BEGIN) {
    throw invalid(first + 1, `expected "${BEGIN}" but found ${JSON.stringify(lines[first])}.`);
  }
  if (last === first || (lines[last] ?? '').trimEnd() !== END) {
    // Say where the text really ends, and whether End Patch appears too early.
    const early = lines.findIndex((l, i) => i > first && i < last && l.trimEnd() === END);
    if (early >= 0) {
      throw invalid(early + 2, `text follows "${END}".`, `Put "${END}" on the last line of the patch, after every file section.`);
    }
    throw invalid(last + 1, `the patch does not end with "${END}" (it may have been cut off).`, `Finish the patch with a "${END}" line; send the whole patch again.`);
  }

  const cur = new Cursor(lines, first + 1, last);
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
    const header = raw.trimEnd();
    if (header.startsWith(ADD)) {
      const p = checkPath(header.slice(ADD.length), lineNo);
      touch(p, lineNo);
      const content: string[] = [];
      while (!cur.done && !isHeader(cur.peek())) {
        const ln = cur.lineNo;
        const l = cur.next();
        if (!l.startsWith('+')) {
          throw invalid(ln, `every line of an added file must start with "+"; found ${JSON.stringify(l)}.`, 'Prefix each content line of "*** Add File" with "+" (a lone "+" is an empty line).');
        }
        content.push(l.slice(1));
      }
      files.push({ kind: 'add', path: p, lines: content, patchLine: lineNo });
    } else if (header.startsWith(DELETE)) {
      const p = checkPath(header.slice(DELETE.length), lineNo);
      touch(p, lineNo);
      if (!cur.done && !isHeader(cur.peek())) {
        throw invalid(cur.lineNo, `"*** Delete File" takes no content lines; found ${JSON.stringify(cur.peek())}.`, 'Put the next file header right after the delete line.');
      }
      files.push({ kind: 'delete', path: p, patchLine: lineNo });
    } else if (header.startsWith(UPDATE)) {
      const p = checkPath(header.slice(UPDATE.length), lineNo);
      touch(p, lineNo);
      let moveTo: string | undefined;
      if (!cur.done && cur.peek().trimEnd().startsWith(MOVE)) {
        const moveLine = cur.lineNo;
        moveTo = checkPath(cur.next().trimEnd().slice(MOVE.length), moveLine);
        if (moveTo === p) {
          throw invalid(moveLine, `the file is moved onto itself (${JSON.stringify(p)}).`, 'Drop the "*** Move to" line, or name a different destination.');
        }
        touch(moveTo, moveLine);
      }
      const hunks = parseHunks(cur, p);
      if (hunks.length === 0 && moveTo === undefined) {
        throw invalid(lineNo, `"*** Update File: ${p}" has no hunks.`, 'Add at least one "@@" hunk with "-" / "+" lines, or leave the file out of the patch.', { path: p });
      }
      files.push({ kind: 'update', path: p, moveTo, hunks, patchLine: lineNo });
    } else if (header.startsWith(MOVE)) {
      throw invalid(lineNo, `"${MOVE}" must directly follow an "${UPDATE}" line.`);
    } else if (header === EOF_MARK) {
      throw invalid(lineNo, `"${EOF_MARK}" must close a hunk of an updated file.`);
    } else if (header === BEGIN) {
      throw invalid(lineNo, `a second "${BEGIN}".`, 'Send one patch per call, with a single Begin / End pair.');
    } else if (header === END) {
      throw invalid(lineNo, `text follows "${END}".`, `Put "${END}" on the last line of the patch.`);
    } else if (isHeader(header)) {
      throw invalid(lineNo, `unknown header ${JSON.stringify(header)}.`);
    } else {
      throw invalid(lineNo, `expected a file header but found ${JSON.stringify(raw)}.`);
    }
  }

  if (files.length === 0) {
    throw invalid(first + 1, 'the patch touches no file.', `${FORMAT_HINT} An empty patch changes nothing, so it is rejected.`);
  }
  return { files };
}

/** Reads the hunks of one Update section, up to the next file header or the end of the patch. */
function parseHunks(cur: Cursor, path: string): Hunk[] {
  const hunks: Hunk[] = [];
  let anchors: string[] = [];
  let body: HunkLine[] = [];
  let start = 0;
  let open = false;

  const close = (endOfFile: boolean, atLine: number): void => {
    if (!open) return;
    if (!body.some((l) => l.kind !== 'context')) {
      throw invalid(start, `hunk ${hunks.length + 1} of ${JSON.stringify(path)} changes nothing (no "-" or "+" line).`, 'Each hunk needs at least one "-" or "+" line; drop hunks that only show context.', {
        path,
        hunk: hunks.length + 1,
        end_line: atLine,
      });
    }
    hunks.push({ anchors, lines: body, endOfFile, patchLine: start });
    anchors = [];
    body = [];
    open = false;
  };

  while (!cur.done) {
    const raw = cur.peek();
    const lineNo = cur.lineNo;
    if (raw.trimEnd() === EOF_MARK) {
      cur.next();
      if (!open || body.length === 0) throw invalid(lineNo, `"${EOF_MARK}" must follow the lines of a hunk.`);
      close(true, lineNo);
      // After the end of the file, only another file section (or End Patch) can follow.
      if (!cur.done && !isHeader(cur.peek())) {
        throw invalid(cur.lineNo, `a hunk follows "${EOF_MARK}" in ${JSON.stringify(path)}.`, `"${EOF_MARK}" closes the last hunk of a file; order hunks as they appear in the file.`);
      }
      continue;
    }
    if (isHeader(raw)) break;
    cur.next();
    if (raw.startsWith('@@')) {
      if (UNIFIED_RANGE.test(raw)) {
        throw invalid(lineNo, 'V4A hunks carry no line numbers.', 'Write "@@" alone, or "@@ <a line of the file>" as an anchor; find the place with context lines instead of numbers.');
      }
      if (open && body.length > 0) close(false, lineNo);
      if (!open) {
        open = true;
        start = lineNo;
      }
      const anchor = raw.slice(2).trim();
      if (anchor !== '') anchors.push(anchor);
      continue;
    }
    let line: HunkLine;
    if (raw === '') line = { kind: 'context', text: '' };
    else if (raw[0] === ' ') line = { kind: 'context', text: raw.slice(1) };
    else if (raw[0] === '-') line = { kind: 'remove', text: raw.slice(1) };
    else if (raw[0] === '+') line = { kind: 'add', text: raw.slice(1) };
    else {
      throw invalid(lineNo, `a hunk line must start with " ", "-" or "+"; found ${JSON.stringify(raw)}.`, 'Prefix context lines with a space, removed lines with "-", added lines with "+".', { path });
    }
    if (!open) {
      // The first hunk may omit its "@@".
      open = true;
      start = lineNo;
    }
    body.push(line);
  }
  close(false, cur.lineNo);
  return hunks;
}
