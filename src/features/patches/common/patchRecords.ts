import * as path from 'node:path';
import type { OperationChange, OperationFile, OperationRecord } from '../../../kernel/ledger/operationRecord';
import type { ParsedPatch } from './parser';
import type { PlannedFile, PlannedPatch } from './plan';
import { modeBeforeOf } from './patchDisk';
import type { ApplyPatchResult, PatchFileResult, PatchIntent, PatchStep } from './patchTypes';
import { contentVersion } from './version';

/** What an operation's plan becomes in its result and its ledger record. */

/** The intent with the reviewer's bytes in place of the planned ones (adds, updates and moves only). */
export function withReviewed(intent: PatchIntent, reviewed: ReadonlyMap<string, Uint8Array>): { planned: PlannedPatch; steps: PatchStep[] } {
  const swap = (file: PlannedFile): PlannedFile => {
    const bytes = reviewed.get(file.path);
    if (bytes === undefined || file.kind === 'delete') return file;
    return { ...file, after: bytes, afterVersion: contentVersion(bytes) };
  };
  const files = intent.planned.files.map(swap);
  const steps = intent.steps.map((step) => ({ ...step, file: files[intent.planned.files.indexOf(step.file)] ?? swap(step.file) }));
  return { planned: { files }, steps };
}


/** What a repeat of a recorded key answers: its stored result, or 'unknown' while it is still being applied. */
export function replayOf(record: OperationRecord): ApplyPatchResult {
  if (record.status === 'pending' || record.result === undefined) {
    return {
      status: 'unknown',
      operation_id: record.operation_id,
      files: record.files.map((f) => ({ ...f })),
      reason: 'An operation with this key is still being applied.',
      hint: 'Call operation_status with this operation_key to follow it; do not send it again with another key.',
    };
  }
  return record.result as ApplyPatchResult;
}

/** A planned file as its result names it (with its diff for a preview). */
export function fileResult(f: PlannedFile, withDiff: boolean): PatchFileResult {
  const r: PatchFileResult = { path: f.path, kind: f.kind };
  if (f.move_to !== undefined) r.move_to = f.move_to;
  if (f.beforeVersion !== undefined) r.before_version = f.beforeVersion;
  if (f.afterVersion !== undefined) r.after_version = f.afterVersion;
  if (withDiff) r.diff = f.diff;
  return r;
}

export function toOperationFile(f: PatchFileResult): OperationFile {
  return {
    path: f.path,
    kind: f.kind,
    ...(f.move_to !== undefined ? { move_to: f.move_to } : {}),
    ...(f.before_version !== undefined ? { before_version: f.before_version } : {}),
    ...(f.after_version !== undefined ? { after_version: f.after_version } : {}),
  };
}

/**
 * One entry per path on disk, as the ledger's reconciliation expects, with what a restore needs besides the bytes:
 * the modes before and after, and the folders the write of the path created (`steps[i]` is `planned.files[i]`'s).
 */
export function changesOf(planned: PlannedPatch, steps: readonly PatchStep[], root: string): OperationChange[] {
  const out: OperationChange[] = [];
  for (const [i, f] of planned.files.entries()) {
    const before = f.beforeVersion ?? null;
    const after = f.afterVersion ?? null;
    const beforeMode = modeBeforeOf(f).mode;
    const afterMode = f.kind === 'delete' ? undefined : f.mode;
    const folders = (steps[i]?.newFolders ?? []).map((d) => path.relative(root, d).split(path.sep).join('/'));
    const created = folders.length > 0 ? { created_folders: folders } : {};
    const was = beforeMode !== undefined ? { before_mode: beforeMode } : {};
    const will = afterMode !== undefined ? { after_mode: afterMode } : {};
    if (f.kind === 'move') {
      out.push({ path: f.path, kind: 'move', before_hash: before, after_hash: null, ...was });
      out.push({ path: f.move_to as string, kind: 'move', before_hash: null, after_hash: after, ...will, ...created });
    } else if (f.kind === 'delete') {
      out.push({ path: f.path, kind: 'delete', before_hash: before, after_hash: null, ...was });
    } else {
      out.push({ path: f.path, kind: f.kind, before_hash: f.kind === 'add' ? null : before, after_hash: after, ...was, ...will, ...created });
    }
  }
  return out;
}

/** Lines added and removed per section, as the patch states them; a delete removes every line of the file. */
export function lineCounts(parsed: ParsedPatch, planned: PlannedPatch): Map<string, { added: number; removed: number }> {
  const out = new Map<string, { added: number; removed: number }>();
  for (const op of parsed.files) {
    if (op.kind === 'add') out.set(op.path, { added: op.lines.length, removed: 0 });
    else if (op.kind === 'update') {
      let added = 0;
      let removed = 0;
      for (const h of op.hunks) {
        for (const l of h.lines) {
          if (l.kind === 'add') added++;
          else if (l.kind === 'remove') removed++;
        }
      }
      out.set(op.path, { added, removed });
    } else {
      const before = planned.files.find((f) => f.path === op.path)?.before;
      let lines = 0;
      if (before) {
        for (const b of before) if (b === 10) lines++;
        if (before.length > 0 && before[before.length - 1] !== 10) lines++;
      }
      out.set(op.path, { added: 0, removed: lines });
    }
  }
  return out;
}
