import { ToolError } from '../../../base/errors';
import type { Steps } from './pacer';
import { runSync } from './pacer';

/**
 * A text file split into lines with everything needed to write it back byte-for-byte: the UTF-8 BOM, each
 * line's own ending, and whether the last line ends with a newline.
 */
export type Eol = '\n' | '\r\n';

export interface TextLine {
  readonly text: string;
  /** The line's ending as found; '' only for a last line without a final newline. */
  readonly eol: Eol | '';
}

export interface TextFile {
  readonly bom: boolean;
  readonly lines: readonly TextLine[];
  /** The ending new lines get: CRLF when most lines end so, LF otherwise. */
  readonly eol: Eol;
  /** True when the content ends with a newline, and for an empty file (nothing is missing there). */
  readonly finalNewline: boolean;
  /** The decoded content without the BOM. */
  readonly text: string;
  /** Where each line starts in `text` (UTF-16 offsets), so runs of lines can be copied as one slice. */
  readonly starts: readonly number[];
}

const BOM = [0xef, 0xbb, 0xbf] as const;

export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];
}

/** Decodes UTF-8 text, or undefined when the bytes are binary (a NUL byte) or not valid UTF-8. */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.indexOf(0) >= 0) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Splits bytes into a TextFile; a binary or non-UTF-8 file is `NOT_TEXT`. */
export function readTextFile(path: string, bytes: Uint8Array): TextFile {
  return runSync(readTextFileSteps(path, bytes));
}

/** readTextFile, yielding at checkpoints (see pacer.ts). */
export function* readTextFileSteps(path: string, bytes: Uint8Array): Steps<TextFile> {
  const bom = hasBom(bytes);
  const decoded = decodeText(bom ? bytes.subarray(3) : bytes);
  if (decoded === undefined) {
    throw new ToolError('NOT_TEXT', `${JSON.stringify(path)} is not UTF-8 text, so a patch cannot update it.`, {
      hint: 'Patches edit UTF-8 text files only. Replace a binary file with Delete File + Add File, or leave it alone.',
      details: { path },
    });
  }
  yield;
  const lines: TextLine[] = [];
  const starts: number[] = [];
  let crlf = 0;
  let lf = 0;
  let pos = 0;
  for (;;) {
    const nl = decoded.indexOf('\n', pos);
    if (nl < 0) {
      if (pos < decoded.length) {
        starts.push(pos);
        lines.push({ text: decoded.slice(pos), eol: '' });
      }
      break;
    }
    starts.push(pos);
    if (nl > pos && decoded.charCodeAt(nl - 1) === 13) {
      crlf++;
      lines.push({ text: decoded.slice(pos, nl - 1), eol: '\r\n' });
    } else {
      lf++;
      lines.push({ text: decoded.slice(pos, nl), eol: '\n' });
    }
    pos = nl + 1;
    if ((lines.length & 8191) === 0) yield;
  }
  const finalNewline = decoded === '' || decoded.endsWith('\n');
  return { bom, lines, eol: crlf > lf ? '\r\n' : '\n', finalNewline, text: decoded, starts };
}

/** Joins lines back into text (without the BOM). */
export function joinLines(lines: readonly TextLine[]): string {
  return runSync(joinLinesSteps(lines));
}

/** joinLines, yielding at checkpoints. */
export function* joinLinesSteps(lines: readonly TextLine[]): Steps<string> {
  const parts: string[] = [];
  let chunk = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] as TextLine;
    chunk += l.text + l.eol;
    if ((i & 8191) === 8191) {
      parts.push(chunk);
      chunk = '';
      yield;
    }
  }
  parts.push(chunk);
  return parts.join('');
}

export function encodeText(text: string, bom: boolean): Uint8Array {
  const body = new TextEncoder().encode(text);
  if (!bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set(BOM, 0);
  out.set(body, 3);
  return out;
}
