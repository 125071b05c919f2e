import { ToolError } from '../../../base/errors';
import { hashArguments } from '../../../base/canonicalJson';
import type { OperationLedger } from '../../../kernel/ledger/operationLedger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { Workspace } from '../../../kernel/workspaces';
import { mapLimit } from '../../../base/concurrency';
import type { PlannedFile, PlannedPatch } from './plan';
import { confinedPaths, readFound } from './patchDisk';
import type { ApplyPatchRequest, FileHistory, PatchIntent, RestoreFile, RestoreRequest } from './patchTypes';
import { stepsOf } from './validatePatch';
import { contentVersion } from './version';

/** Restores: files put back to given bytes and modes through the patch transaction (checkpoints, review undo). */

/**
 * Plans a restore: each file back to the given bytes (or removed), refused with VERSION_CONFLICT naming every file
 * that is not at its expected version now. Writes nothing; `commit` the intent in the same exclusive turn, like a
 * patch: it is minted, written all-or-nothing and recorded in the ledger like any operation.
 */
export async function planRestore(fs: WorkspaceFs, ws: Workspace, request: RestoreRequest): Promise<PatchIntent> {
  const { realRoot, resolve } = await confinedPaths(fs, ws.root);
  const conflicts: { path: string; expected: string | null; found: string | null }[] = [];
  const files: PlannedFile[] = [];
  for (const f of request.files) {
    const abs = await resolve(f.path);
    const { found } = await readFound(fs, abs, f.path, realRoot);
    const version = found === undefined ? null : found === 'directory' ? 'directory' : contentVersion(found.bytes);
    if (version !== f.expected) {
      conflicts.push({ path: f.path, expected: f.expected, found: version });
      continue;
    }
    const current = found === undefined || found === 'directory' ? undefined : found;
    const planned = restorePlan(f, current);
    if (planned) files.push(planned);
  }
  if (conflicts.length > 0) {
    const names = conflicts.map((c) => c.path).join(', ');
    throw new ToolError('VERSION_CONFLICT', `${names} changed since the work last wrote ${conflicts.length === 1 ? 'it' : 'them'}; nothing was written.`, {
      hint: 'Those changes were made outside the work. Keep them, or undo them yourself, before restoring.',
      details: { files: conflicts },
    });
  }
  const planned: PlannedPatch = { files };
  const steps = await stepsOf(fs, ws, planned, resolve, new Map(), realRoot);
  const removeFolders = await mapLimit(
    [...new Set(request.remove_folders ?? [])].filter((d) => d !== '' && d !== '.').sort((a, b) => b.split('/').length - a.split('/').length || (a < b ? 1 : a > b ? -1 : 0)),
    8,
    resolve,
  );
  const applyRequest: ApplyPatchRequest = {
    workspace_id: ws.id,
    patch: '',
    expected_versions: {},
    operation_key: request.operation_key,
    ...(request.work_id !== undefined ? { work_id: request.work_id } : {}),
  };
  const argsHash = hashArguments({
    workspace_id: ws.id,
    restore: request.files.map((f) => ({ path: f.path, expected: f.expected, content: f.content === null ? null : contentVersion(f.content), ...(f.mode !== undefined ? { mode: f.mode } : {}) })),
    ...(removeFolders.length > 0 ? { remove_folders: request.remove_folders } : {}),
  });
  return { ws, request: applyRequest, argsHash, planned, steps, realRoot, counts: new Map(), ...(removeFolders.length > 0 ? { removeFolders } : {}) };
}

/**
 * What the ledger knows of the file at `rel` in a workspace: the mode it had before the newest applied operation
 * that changed or removed it, and the folders the newest applied operation that created it made for it. What a
 * restore of that file needs, when the caller has only the bytes (a review's undo).
 */
export function fileHistoryOf(ledger: OperationLedger, workspaceId: string, rel: string): FileHistory {
  let mode: number | undefined;
  let created: readonly string[] | undefined;
  const records = ledger.list().filter((r) => r.workspace_id === workspaceId && r.status === 'applied');
  for (const r of records.reverse()) {
    for (const c of r.changes) {
      if (c.path !== rel) continue;
      if (mode === undefined && c.before_mode !== undefined) mode = c.before_mode;
      if (created === undefined && c.before_hash === null && c.after_hash !== null) created = c.created_folders ?? [];
    }
    if (mode !== undefined && created !== undefined) break;
  }
  return { ...(mode !== undefined ? { mode } : {}), created_folders: created ?? [] };
}

/**
 * What a restore of one file writes, given what is there now (`current`, already checked to be at `f.expected`):
 * nothing when content and mode are right already; else an add, a delete, or an update (content, mode or both).
 */
function restorePlan(f: RestoreFile, current: { bytes: Uint8Array; mode?: number } | undefined): PlannedFile | undefined {
  if (current === undefined && f.content === null) return undefined;
  const afterVersion = f.content === null ? undefined : contentVersion(f.content);
  const modeChanges = f.mode !== undefined && current?.mode !== undefined && (f.mode & 0o7777) !== (current.mode & 0o7777);
  if (afterVersion === f.expected && !modeChanges) return undefined;
  if (current === undefined) return { path: f.path, kind: 'add', after: f.content as Uint8Array, afterVersion: afterVersion as string, ...(f.mode !== undefined ? { mode: f.mode & 0o7777 } : {}), diff: '' };
  const before = { before: current.bytes, beforeVersion: f.expected as string };
  if (f.content === null) return { path: f.path, kind: 'delete', ...before, ...(current.mode !== undefined ? { mode: current.mode } : {}), diff: '' };
  const mode = modeChanges ? { mode: (f.mode as number) & 0o7777, beforeMode: current.mode } : current.mode !== undefined ? { mode: current.mode } : {};
  return { path: f.path, kind: 'update', ...before, after: f.content, afterVersion: afterVersion as string, ...mode, diff: '' };
}
