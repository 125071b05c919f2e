import { ToolError } from '../errors';

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
  const bom = hasBom(bytes);
  const decoded = decodeText(bom ? bytes.subarray(3) : bytes);
  if (decoded === undefined) {
    throw new ToolError('NOT_TEXT', `${JSON.stringify(path)} is not UTF-8 text, so a patch cannot update it.`, {
      hint: 'Patches edit UTF-8 text files only. Replace a binary file with Delete File + Add File, or leave it alone.',
      details: { path },
    });
  }
  const parts = decoded.split('\n');
  const finalNewline = decoded === '' || parts[parts.length - 1] === '';
  if (finalNewline) parts.pop();
  let crlf = 0;
  let lf = 0;
  const lines: TextLine[] = parts.map((p, i) => {
    const last = i === parts.length - 1;
    if (last && !finalNewline) return { text: p, eol: '' };
    if (p.endsWith('\r')) {
      crlf++;
      return { text: p.slice(0, -1), eol: '\r\n' };
    }
    lf++;
    return { text: p, eol: '\n' };
  });
  return { bom, lines, eol: crlf > lf ? '\r\n' : '\n', finalNewline, text: decoded };
}

/** Joins lines back into text (without the BOM). */
export function joinLines(lines: readonly TextLine[]): string {
  let out = '';
  for (const l of lines) out += l.text + l.eol;
  return out;
}

export function encodeText(text: string, bom: boolean): Uint8Array {
  const body = new TextEncoder().encode(text);
  if (!bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set(BOM, 0);
  out.set(body, 3);
  return out;
}
