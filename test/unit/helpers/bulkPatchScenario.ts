import { createHash } from 'node:crypto';

/** A 200-file patch, each file large enough (16 KiB) that a partial write would be visible. */
export const BULK_FILES = 200;
export const BULK_KEY = 'bulk-200';

const LINES = 400;
function body(tag: string, i: number): string {
  let s = '';
  for (let n = 0; n < LINES; n++) s += `${tag} file ${String(i).padStart(3, '0')} line ${String(n).padStart(4, '0')} ${'.'.repeat(10)}\n`;
  return s;
}

export function bulkName(i: number): string {
  return `bulk/d${i % 10}/f${String(i).padStart(3, '0')}.txt`;
}

export function oldContent(i: number): string {
  return body('old', i);
}

export function newContent(i: number): string {
  return body('new', i);
}

export function hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Every file's old content, by path. */
export function bulkFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < BULK_FILES; i++) out[bulkName(i)] = oldContent(i);
  return out;
}

/** The apply_patch arguments (without key) that turn every file from `from` into `to` ('old' → 'new' by default). */
export function bulkPatch(reverse = false): { patch: string; expected_versions: Record<string, string> } {
  const sections: string[] = [];
  const expected: Record<string, string> = {};
  for (let i = 0; i < BULK_FILES; i++) {
    const [from, to] = reverse ? [newContent(i), oldContent(i)] : [oldContent(i), newContent(i)];
    sections.push(`*** Update File: ${bulkName(i)}`, '@@', ...from.slice(0, -1).split('\n').map((l) => `-${l}`), ...to.slice(0, -1).split('\n').map((l) => `+${l}`));
    expected[bulkName(i)] = `sha256:${hex(from)}`;
  }
  return { patch: ['*** Begin Patch', ...sections, '*** End Patch'].join('\n'), expected_versions: expected };
}
