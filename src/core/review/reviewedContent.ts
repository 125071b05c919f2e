import { decodeText } from '../patch/textFile';
import { contentVersion } from '../patch/version';

/**
 * What every review (held patch, after the write, a whole work) shows of a side of a file that is not text, and of
 * a file's mode: the one test of "binary" (the patch engine's: a NUL byte, or not UTF-8) and the one description a
 * reviewer reads in place of a text diff, so the three reviews say the same thing of the same bytes.
 */

/** Whether a review shows these bytes as text (the patch engine's rule: UTF-8 without a NUL byte). */
export function isReviewText(bytes: Uint8Array): boolean {
  return decodeText(bytes) !== undefined;
}

/** A git-style mode of a regular file's permission bits: `100644`, `100755`. */
export function gitMode(mode: number): string {
  return `100${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/** Whether two modes differ in what a review shows (the permission bits). Unknown modes never differ. */
export function modesDiffer(a: number | undefined, b: number | undefined): boolean {
  return a !== undefined && b !== undefined && (a & 0o7777) !== (b & 0o7777);
}

/** `mode 100644 → 100755`: how a review names a mode change (in a label, a description, a diff's title). */
export function modeChangeLabel(from: string, to: string): string {
  return `mode ${from} → ${to}`;
}

/**
 * The read-only document shown for a side of a file that is not text: that it is binary, its size and its sha256
 * (and its mode when known), or that there is no file on that side.
 */
export function binaryDescription(path: string, bytes: Uint8Array | null, mode?: string): string {
  if (bytes === null) return `No file: ${path} is not on this side.\n`;
  const kind = isReviewText(bytes) ? 'Text file (the other side is binary, so neither is shown as text)' : 'Binary file (not shown as text)';
  return [`${kind}: ${path}`, `size: ${bytes.byteLength} bytes`, `sha256: ${contentVersion(bytes).slice('sha256:'.length)}`, ...(mode !== undefined ? [`mode: ${mode}`] : []), ''].join('\n');
}
