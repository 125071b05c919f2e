import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { TextRange } from '../../editor';
import { headerPath, parsePatch } from './parser';
import type { UpdateFileOp } from './parser';
import { planFileUpdate } from './planner';
import { encodeText, readTextFile } from './textFile';
import { contentVersion } from './version';

/**
 * Turns text edits (a language server's WorkspaceEdit, for example a rename) into a V4A patch, so they take the
 * path every edit takes: expected versions, preview, approval holds, review and the ledger (apply_patch).
 *
 * The edits are applied to the bytes on disk at a known version (the caller has checked that the language server
 * computed them on that text). Each file gets one `*** Update File` section whose hunks carry the changed lines and
 * a few lines of context; the patch is then planned against the same bytes, exactly as apply_patch will plan it,
 * and must give the expected result: if a hunk would match elsewhere too, the context grows, up to the whole file.
 */
export interface FileEdits {
  /** Workspace-relative path. */
  readonly path: string;
  /** The file's bytes on disk, the version the patch expects. */
  readonly bytes: Uint8Array;
  /** 1-based positions (UTF-16 characters), end exclusive. */
  readonly edits: readonly { readonly range: TextRange; readonly newText: string }[];
}

export interface EditPatch {
  readonly patch: string;
  /** Path → the version each section expects (the bytes the edits were made on). */
  readonly expected_versions: Record<string, string>;
  readonly files: readonly { readonly path: string; readonly before: string; readonly after: string; readonly edits: number }[];
}

const CONTEXTS = [3, 12] as const;

interface Group {
  /** 0-based first and last old line. */
  first: number;
  last: number;
  newLines: string[];
}

function offsetOf(lineStarts: readonly number[], lineLengths: readonly number[], rel: string, pos: { line: number; character: number }, which: string): number {
  const i = pos.line - 1;
  if (i < 0 || i >= lineStarts.length) throw new ToolError('INTERNAL', `A ${which} edit position (line ${pos.line}) is outside ${rel}, which has ${lineStarts.length} line(s).`);
  const len = lineLengths[i] as number;
  if (pos.character < 1 || pos.character > len + 1) throw new ToolError('INTERNAL', `A ${which} edit position (line ${pos.line}, character ${pos.character}) is outside that line of ${rel}.`);
  return (lineStarts[i] as number) + pos.character - 1;
}

/** The file's new text and the changed line groups. */
function applyEdits(file: FileEdits): { text: string; newText: string; bom: boolean; groups: Group[]; lines: string[] } {
  const parsed = readTextFile(file.path, file.bytes);
  const text = parsed.text;
  if (/\r(?!\n)/.test(text)) {
    throw new ToolError('PATCH_INVALID', `${file.path} has a carriage return that does not end a line; its edits cannot be placed reliably.`, { details: { path: file.path } });
  }
  // The editor's lines: "\n" and "\r\n" end them; the position after a final newline is the start of an empty line.
  const lines = text.split(/\r\n|\n/);
  const lineStarts: number[] = [];
  const lineLengths: number[] = [];
  for (let i = 0, at = 0; i < lines.length; i++) {
    lineStarts.push(at);
    const len = (lines[i] as string).length;
    lineLengths.push(len);
    at += len + (text.startsWith('\r\n', at + len) ? 2 : 1);
  }
  const spans = file.edits
    .map((e) => ({ start: offsetOf(lineStarts, lineLengths, file.path, e.range.start, 'start'), end: offsetOf(lineStarts, lineLengths, file.path, e.range.end, 'end'), e }))
    .sort((a, b) => a.start - b.start || a.end - b.end);
  for (const [i, s] of spans.entries()) {
    if (s.end < s.start) throw new ToolError('INTERNAL', `An edit of ${file.path} ends before it starts.`);
    const prev = spans[i - 1];
    if (prev && s.start < prev.end) throw new ToolError('INTERNAL', `Two edits of ${file.path} overlap.`);
  }
  let newText = '';
  let at = 0;
  for (const s of spans) {
    newText += text.slice(at, s.start) + s.e.newText;
    at = s.end;
  }
  newText += text.slice(at);

  // Group edits by the old lines they touch; each group's new lines are its old lines with its edits applied.
  const groups: Group[] = [];
  for (const s of spans) {
    const first = s.e.range.start.line - 1;
    const last = s.e.range.end.line - 1;
    const g = groups[groups.length - 1];
    if (g && first <= g.last) g.last = Math.max(g.last, last);
    else groups.push({ first, last, newLines: [] });
  }
  for (const g of groups) {
    const from = lineStarts[g.first] as number;
    const to = (lineStarts[g.last] as number) + (lineLengths[g.last] as number);
    let region = '';
    let cursor = from;
    for (const s of spans) {
      if (s.start < from || s.end > to) continue;
      region += text.slice(cursor, s.start) + s.e.newText;
      cursor = s.end;
    }
    region += text.slice(cursor, to);
    g.newLines = region.split(/\r\n|\n/);
  }
  // The patch's lines are the file's lines: after a final newline there is no further (empty) line to match.
  const finalEmpty = parsed.finalNewline && text !== '' ? lines.length - 1 : -1;
  for (const g of groups) {
    // An edit that reaches the empty line after the final newline (a formatter replacing the whole document): the
    // patch names no such line. When the edited text still ends with a newline, the group ends at the last real
    // line; otherwise the final newline is removed, which the plan below refuses (a patch keeps it).
    if (g.last === finalEmpty && g.newLines[g.newLines.length - 1] === '') {
      g.newLines.pop();
      g.last = finalEmpty - 1;
    }
  }
  return { text, newText, bom: parsed.bom, groups, lines: finalEmpty >= 0 ? lines.slice(0, -1) : lines };
}

function sectionFor(path: string, lines: readonly string[], groups: readonly Group[], context: number | 'all'): string {
  const out: string[] = [`*** Update File: ${headerPath(path)}`];
  const ctx = context === 'all' ? lines.length : context;
  // Groups whose context would touch or overlap are one hunk.
  const hunks: { first: number; last: number; parts: Group[] }[] = [];
  for (const g of groups) {
    const h = hunks[hunks.length - 1];
    if (h && g.first - h.last - 1 <= 2 * ctx) {
      h.last = g.last;
      h.parts.push(g);
    } else hunks.push({ first: g.first, last: g.last, parts: [g] });
  }
  for (const h of hunks) {
    out.push('@@');
    const from = Math.max(0, h.first - ctx);
    const to = Math.min(lines.length - 1, h.last + ctx);
    let i = from;
    for (const g of h.parts) {
      for (; i < g.first; i++) out.push(` ${lines[i] as string}`);
      for (; i <= g.last; i++) out.push(`-${lines[i] as string}`);
      for (const n of g.newLines) out.push(`+${n}`);
    }
    for (; i <= to; i++) out.push(` ${lines[i] as string}`);
  }
  return out.join('\n');
}

/** True when the section, planned as apply_patch plans it, turns `bytes` into exactly `expected`. */
function planMatches(path: string, section: string, bytes: Uint8Array, expected: Uint8Array): boolean {
  let op: UpdateFileOp;
  try {
    op = parsePatch(`*** Begin Patch\n${section}\n*** End Patch\n`).files[0] as UpdateFileOp;
    const after = planFileUpdate(path, bytes, op.hunks).after;
    return Buffer.from(after).equals(Buffer.from(expected));
  } catch (err) {
    if (ToolError.is(err) && (err.code === 'PATCH_AMBIGUOUS' || err.code === 'PATCH_CONTEXT_NOT_FOUND')) return false;
    throw err;
  }
}

/**
 * Builds the patch for edits of one or more files (each path at most once). Edits that change nothing are refused
 * (INVALID_ARGUMENTS naming `field`), unless `unchanged` is `"empty"`: then the result has no files and an empty patch.
 */
export function workspaceEditToPatch(files: readonly FileEdits[], unchanged: { field: string } | 'empty' = { field: 'new_name' }): EditPatch {
  const seen = new Set<string>();
  const sections: string[] = [];
  const expected: Record<string, string> = {};
  const summary: { path: string; before: string; after: string; edits: number }[] = [];
  for (const file of files) {
    if (seen.has(file.path)) throw new ToolError('INTERNAL', `${file.path} appears twice in one edit.`);
    seen.add(file.path);
    const { text, newText, bom, groups, lines } = applyEdits(file);
    if (newText === text) continue;
    const want = encodeText(newText, bom);
    let section: string | undefined;
    for (const ctx of [...CONTEXTS, 'all' as const]) {
      const candidate = sectionFor(file.path, lines, groups.filter((g) => g.newLines.join('\n') !== lines.slice(g.first, g.last + 1).join('\n')), ctx);
      if (planMatches(file.path, candidate, file.bytes, want)) {
        section = candidate;
        break;
      }
    }
    if (section === undefined) {
      // Only a file whose line endings a V4A patch cannot keep (a changed line in a file mixing "\n" and "\r\n").
      throw new ToolError('PATCH_INVALID', `The edits of ${file.path} cannot be expressed as a patch that gives exactly the edited text (mixed line endings?).`, {
        hint: 'Normalise the file\'s line endings, or make the change with apply_patch.',
        details: { path: file.path },
      });
    }
    sections.push(section);
    expected[file.path] = contentVersion(file.bytes);
    summary.push({ path: file.path, before: text, after: newText, edits: file.edits.length });
  }
  if (sections.length === 0) {
    if (unchanged === 'empty') return { patch: '', expected_versions: {}, files: [] };
    throw new InvalidArgumentsError('The edit changes nothing: every file would stay as it is.', { field: unchanged.field });
  }
  return { patch: `*** Begin Patch\n${sections.join('\n')}\n*** End Patch\n`, expected_versions: expected, files: summary };
}
