import { ToolError } from '../../../base/errors';
import type { ApplyPatchResult } from '../../patches';
import type { ReviewFileNow, ReviewFileState } from './afterWriteTypes';

// Small helpers of the review after the write over a file as read now and its accepted state.

/** A file as read now, with its bytes and mode for a whole-file Keep or Undo. */
export interface ReadFile extends ReviewFileNow {
  readonly bytes: Uint8Array | null;
  readonly modeNow?: number;
}

export function publicOf(r: ReadFile): ReviewFileNow {
  const now: { -readonly [K in keyof ReadFile]?: ReadFile[K] } = { ...r };
  delete now.bytes;
  delete now.modeNow;
  return now as ReviewFileNow;
}

/** What a mark of Reviewed is bound to: the content's version, and the mode when it differs from the accepted one. */
export function reviewedKey(version: string | undefined, mode: ReviewFileNow['mode']): string {
  return `${version ?? 'none'}${mode !== undefined ? ` mode ${mode.current}` : ''}`;
}

export function withoutAccepted(f: ReviewFileState): Omit<ReviewFileState, 'base' | 'base_binary' | 'base_mode'> {
  const rest: { -readonly [K in keyof ReviewFileState]?: ReviewFileState[K] } = { ...f };
  delete rest.base;
  delete rest.base_binary;
  delete rest.base_mode;
  return rest as Omit<ReviewFileState, 'base' | 'base_binary' | 'base_mode'>;
}

export function requireApplied(path: string, result: ApplyPatchResult): void {
  if (result.status !== 'applied') {
    throw new ToolError('UNAVAILABLE', `The undo of ${path} was not applied (${result.status}${result.reason ? `: ${result.reason}` : ''}).`, { details: { path, operation_id: result.operation_id } });
  }
}

export function splitCount(text: string): number {
  const t = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (t === '') return 0;
  const n = t.split('\n').length;
  return t.endsWith('\n') ? n - 1 : n;
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
