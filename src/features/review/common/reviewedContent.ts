import { decodeText } from '../../patches';
import { contentVersion } from '../../patches';

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

/** The size and sha256 of one side's bytes, and whether they are text. */
export interface SideInfo {
  readonly size: number;
  readonly sha256: string;
  readonly text: boolean;
}

export function sideInfo(bytes: Uint8Array): SideInfo {
  return { size: bytes.byteLength, sha256: contentVersion(bytes), text: isReviewText(bytes) };
}

/**
 * The read-only document shown for a side of a file that is not text (or whose other side is not): that it is
 * binary, its size and sha256, its mode when known; or that there is no file on that side.
 */
export function binaryDescription(path: string, side: SideInfo | null, mode?: string): string {
  if (side === null) return `No file: ${path} is not on this side.\n`;
  const kind = side.text ? 'Text file, shown described because the other side is binary' : 'Binary file, not shown as text';
  return [`${kind}: ${path}`, `size: ${side.size} bytes`, `sha256: ${side.sha256.replace(/^sha256:/, '')}`, ...(mode !== undefined ? [`mode: ${mode}`] : []), ''].join('\n');
}

/** What a review's title adds for the files whose mode changed: ` (mode 100644 → 100755: run.sh; …)`, or ''. */
export function modeChangesSuffix(files: readonly { readonly path: string; readonly mode?: { readonly from: string; readonly to: string } | undefined }[]): string {
  const changed = files.filter((f) => f.mode !== undefined).map((f) => `${modeChangeLabel(f.mode?.from as string, f.mode?.to as string)}: ${f.path}`);
  if (changed.length === 0) return '';
  return ` (${changed.length <= 3 ? changed.join('; ') : `${changed.slice(0, 3).join('; ')}; ${changed.length - 3} more`})`;
}
