/** Text helpers shared by the file tools. */

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of UTF-8 bytes (without a leading BOM), or undefined when they look binary: a NUL byte in the first
 * 8 KiB, or invalid UTF-8.
 */
export function decodeUtf8Text(bytes: Uint8Array): string | undefined {
  if (bytes.subarray(0, 8192).includes(0)) return undefined;
  try {
    return utf8.decode(hasBom(bytes) ? bytes.subarray(3) : bytes);
  } catch {
    return undefined;
  }
}

/** Number of lines: newline characters, plus one for a last line without a newline. */
export function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.length > 0 && !text.endsWith('\n') ? n + 1 : n;
}

export type Eol = 'lf' | 'crlf' | 'mixed' | 'none';

export function detectEol(text: string): Eol {
  const crlf = (text.match(/\r\n/g) ?? []).length;
  const lf = (text.match(/\n/g) ?? []).length - crlf;
  if (crlf === 0 && lf === 0) return 'none';
  if (crlf > 0 && lf > 0) return 'mixed';
  return crlf > 0 ? 'crlf' : 'lf';
}

export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** Largest prefix of `bytes` no longer than `max` that ends on a UTF-8 character boundary. */
export function utf8Prefix(bytes: Uint8Array, max: number): Uint8Array {
  if (bytes.length <= max) return bytes;
  let end = max;
  // Step back over continuation bytes (10xxxxxx) so we never split a character.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}
