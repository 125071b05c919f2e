import * as path from 'node:path';
import { ToolError } from '../errors';
import type { OperationLedger } from '../ledger/operationLedger';
import type { OperationChange, OperationFile, OperationRecord } from '../ledger/operationRecord';
import { hashArguments } from '../ledger/canonicalJson';
import type { BlobStore } from '../ports/blobStore';
import type { Logger } from '../ports/logger';
import type { WorkspaceFs } from '../ports/workspaceFs';
import { RealFolders, confine, failureCode, fileError, realRootOf } from '../policy/paths';
import { occupancyScope } from '../policy/workspaces';
import type { Workspace, WorkspaceRegistry } from '../policy/workspaces';
import { Pacer } from './pacer';
import { parsePatchPaced } from './parser';
import type { ParsedPatch } from './parser';
import type { PlannedFile, PlannedPatch } from './plan';
import { planPatch } from './plan';
import { mapLimit } from '../util/concurrency';
import { contentVersion } from './version';
import { describeError } from '../../base/describeError';

type FileFound = { bytes: Uint8Array; mode?: number } | undefined | 'directory';

export interface ApplyPatchRequest {
  readonly workspace_id: string;
  readonly patch: string;
  readonly expected_versions: Readonly<Record<string, string>>;
  readonly operation_key: string;
  readonly check_only?: boolean;
  readonly work_id?: string;
}

export interface PatchFileResult {
  path: string;
  kind: 'add' | 'update' | 'delete' | 'move';
  move_to?: string;
  before_version?: string;
  after_version?: string;
  diff?: string;
  /** failed_partial only: what the file holds now. */
  state?: string;
}

export interface ApplyPatchResult {
  status: 'checked' | 'applied' | 'failed' | 'failed_partial' | 'not_applied' | 'unknown';
  operation_id: string;
  files: PatchFileResult[];
  /** Why a recorded operation did not apply (failed, failed_partial, unknown, or a replay of one). */
  reason?: string;
  hint?: string;
}

/** Test seams: points where a test can stop the applier, as a crash would. */
export interface PatchFaults {
  /** After the n-th file operation (0-based) has been written. */
  afterWrite?(index: number): Promise<void> | void;
  /** Called instead of a write to make it fail. */
  failWrite?(index: number, path: string): boolean;
  /** After every write, before the ledger's final record. */
  beforeFinish?(): Promise<void> | void;
}

export interface PatchServiceOptions {
  readonly fs: WorkspaceFs;
  readonly workspaces: WorkspaceRegistry;
  readonly ledger: OperationLedger;
  readonly logger: Logger;
  readonly faults?: PatchFaults;
  /**
   * Where the bytes before and after each file of a work's applied operation are kept, so the work can be rewound to
   * any of its operations (src/core/checkpoints). Absent: nothing is kept and checkpoints cannot be restored.
   */
  readonly checkpointContent?: BlobStore;
}

/**
 * One file of a restore: the version it must have now (null: no file), the bytes to put there (null: none) and the
 * POSIX mode to give it (absent: the current file's mode is kept, a new file gets the default one). A file whose
 * bytes are already right but whose mode differs gets the mode only.
 */
export interface RestoreFile {
  readonly path: string;
  readonly expected: string | null;
  readonly content: Uint8Array | null;
  readonly mode?: number;
}

/**
 * Puts files back to given contents and modes through the patch transaction: the one "restore a file" step of a
 * checkpoint's rewind or redo and of a review's undo. `remove_folders` (workspace-relative) are the folders the
 * change being undone had created: each is removed after the write if it is empty then (deepest first), never
 * otherwise, so a folder that held something before or that got something meanwhile stays.
 */
export interface RestoreRequest {
  readonly workspace_id: string;
  readonly operation_key: string;
  readonly work_id?: string;
  readonly files: readonly RestoreFile[];
  readonly remove_folders?: readonly string[];
}

/** What the ledger knows of the file last written at a path (see PatchService.fileHistory). */
export interface FileHistory {
  /** The mode the file had before the newest applied operation that removed it or changed it. */
  readonly mode?: number;
  /** The folders the newest applied operation that created the file created for it. */
  readonly created_folders: readonly string[];
}

/** Files a patch may read: larger ones are refused with TOO_LARGE before a byte is read. */
export const MAX_PATCH_FILE_BYTES = 64 * 1024 * 1024;

/** A validated, planned patch: what a hold shows and a commit writes. */
export interface PatchIntent {
  readonly ws: Workspace;
  readonly request: ApplyPatchRequest;
  readonly argsHash: string;
  readonly planned: PlannedPatch;
  readonly steps: readonly PatchStep[];
  readonly realRoot: string;
  /** Lines each section adds and removes, by section path (a delete: the file's lines). */
  readonly counts: ReadonlyMap<string, { added: number; removed: number }>;
  /** A restore's folders to remove once written, when empty (absolute, confined, deepest first). */
  readonly removeFolders?: readonly string[];
}

/** The ledger's argument hash of a request: what makes a repeat with the same key a replay. */
export function patchArgsHash(request: ApplyPatchRequest): string {
  return hashArguments({
    workspace_id: request.workspace_id,
    patch: request.patch,
    expected_versions: request.expected_versions,
    check_only: request.check_only === true,
  });
}

/** The intent with the reviewer's bytes in place of the planned ones (adds, updates and moves only). */
function withReviewed(intent: PatchIntent, reviewed: ReadonlyMap<string, Uint8Array>): { planned: PlannedPatch; steps: PatchStep[] } {
  const swap = (file: PlannedFile): PlannedFile => {
    const bytes = reviewed.get(file.path);
    if (bytes === undefined || file.kind === 'delete') return file;
    return { ...file, after: bytes, afterVersion: contentVersion(bytes) };
  };
  const files = intent.planned.files.map(swap);
  const steps = intent.steps.map((step) => ({ ...step, file: files[intent.planned.files.indexOf(step.file)] ?? swap(step.file) }));
  return { planned: { files }, steps };
}

export interface PatchStep {
  readonly file: PlannedFile;
  readonly abs: string;
  readonly absTarget?: string;
  /** Folders that do not exist yet and the write will create (deepest first): removed again by a restore. */
  readonly newFolders: readonly string[];
  /** A delete or move of a symbolic link: the link's target text, so a restore puts the link back, not a copy. */
  readonly linkTarget?: string;
}

/**
 * The patch transaction: validate everything, record the intent durably, write each file atomically, record the
 * outcome. If a write fails, files already written are put back from their snapshots and checked by hash.
 */
export class PatchService {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly options: PatchServiceOptions) {}

  get ledger(): OperationLedger {
    return this.options.ledger;
  }

  /** Runs `fn` after every earlier patch of the same workspace has finished (and before any later one starts). */
  exclusive<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(workspaceId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    this.queues.set(workspaceId, next.catch(() => undefined));
    return next;
  }

  /** Waits for the workspace's turn and returns the function that ends it: `exclusive` for code that spans calls. */
  async lock(workspaceId: string): Promise<() => void> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    const prev = this.queues.get(workspaceId) ?? Promise.resolve();
    this.queues.set(workspaceId, prev.then(() => turn));
    await prev;
    let once = false;
    return () => {
      if (once) return;
      once = true;
      release();
    };
  }

  /**
   * prepare + commit in one exclusive turn of the workspace, outside the operation runner (no ledger turn of its
   * own, no holds). Only the benches and tests call it; `apply_patch` goes through the runner's prepare and commit.
   */
  async apply(ws: Workspace, request: ApplyPatchRequest): Promise<ApplyPatchResult> {
    return this.exclusive(occupancyScope(ws), async () => {
      const prepared = await this.prepare(ws, request);
      return 'replay' in prepared ? prepared.replay : this.commit(prepared.intent);
    });
  }

  /**
   * Validates and plans the request; writes and records nothing. A key already used with the same arguments
   * gives the stored result back (`replay`); with other arguments it throws OPERATION_KEY_CONFLICT. Call inside
   * `exclusive` for the workspace, with the commit in the same turn, so that nothing of ours changes the files
   * between the plan and the write.
   */
  async prepare(ws: Workspace, request: ApplyPatchRequest): Promise<{ replay: ApplyPatchResult } | { intent: PatchIntent }> {
    const argsHash = patchArgsHash(request);
    const stored = this.options.ledger.lookupKey(request.operation_key, argsHash);
    if (stored) return { replay: this.replay(stored) };
    const { planned, steps, realRoot, parsed } = await this.validate(ws, request);
    return { intent: { ws, request, argsHash, planned, steps, realRoot, counts: lineCounts(parsed, planned) } };
  }

  /**
   * Records the intent durably, writes it, records the outcome. `reviewed` replaces the planned bytes of files
   * (by the path of their section) with what a reviewer made of them.
   */
  async commit(intent: PatchIntent, reviewed?: ReadonlyMap<string, Uint8Array>): Promise<ApplyPatchResult> {
    const { ws, request, argsHash, realRoot } = intent;
    const { planned, steps } = reviewed && reviewed.size > 0 ? withReviewed(intent, reviewed) : intent;
    const files = planned.files.map((f) => fileResult(f, request.check_only === true));
    const record = await this.options.ledger.mint({
      operation_key: request.operation_key,
      args_hash: argsHash,
      workspace_id: ws.id,
      ...(request.work_id ? { work_id: request.work_id } : {}),
      files: files.map(toOperationFile),
      changes: request.check_only ? [] : changesOf(planned, steps, ws.root),
    });
    if (request.check_only) {
      const result: ApplyPatchResult = { status: 'checked', operation_id: record.operation_id, files };
      await this.options.ledger.finish(record.operation_id, { status: 'checked', result, reason: 'preview' });
      return result;
    }
    if (request.work_id !== undefined) await this.keepContent(planned);
    const outcome = await this.write(ws, realRoot, [...steps], record.operation_id, files);
    if (outcome.status === 'applied' && intent.removeFolders) await this.removeEmptyFolders(ws, realRoot, intent.removeFolders);
    await this.options.faults?.beforeFinish?.();
    await this.options.ledger.finish(record.operation_id, { status: outcome.status, result: outcome, ...(outcome.reason ? { reason: outcome.reason } : { reason: 'written' }) });
    return outcome;
  }

  /** Removes each folder that is empty now (deepest first); one that holds something stays, silently. */
  private async removeEmptyFolders(ws: Workspace, realRoot: string, folders: readonly string[]): Promise<void> {
    const { fs, logger } = this.options;
    for (const folder of folders) {
      const st = await fs.lstat(folder);
      if (st?.type !== 'directory') continue;
      try {
        await fs.removeEmptyFolder(folder, { within: realRoot });
        logger.info(`[patch] removed the empty folder ${path.relative(ws.root, folder)} the undone change had created`);
      } catch (err) {
        logger.debug(`[patch] kept the folder ${path.relative(ws.root, folder)}: ${describeError(err)}`);
      }
    }
  }

  /**
   * The one restore step, for a caller that does not hold the workspace's turn: prepareRestore + commit in one
   * exclusive turn. VERSION_CONFLICT (nothing written) when a file is not at its expected version.
   */
  async restoreFiles(ws: Workspace, request: RestoreRequest): Promise<ApplyPatchResult> {
    return this.exclusive(occupancyScope(ws), async () => this.commit(await this.prepareRestore(ws, request)));
  }

  /**
   * What the ledger knows of the file at `rel` in a workspace: the mode it had before the newest applied operation
   * that changed or removed it, and the folders the newest applied operation that created it made for it. What a
   * restore of that file needs, when the caller has only the bytes (a review's undo).
   */
  fileHistory(workspaceId: string, rel: string): FileHistory {
    let mode: number | undefined;
    let created: readonly string[] | undefined;
    const records = this.options.ledger.list().filter((r) => r.workspace_id === workspaceId && r.status === 'applied');
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
   * Keeps the bytes before and after every file of a work's operation (by version) before anything is written, so a
   * checkpoint never names content that was not kept first. Content over the store's bounds is skipped (the
   * checkpoint then cannot be restored, and says so); a failing store never stops the patch.
   */
  private async keepContent(planned: PlannedPatch): Promise<void> {
    const store = this.options.checkpointContent;
    if (!store) return;
    const blobs = new Map<string, Uint8Array>();
    for (const f of planned.files) {
      if (f.before && f.beforeVersion) blobs.set(f.beforeVersion, f.before);
      if (f.after && f.afterVersion) blobs.set(f.afterVersion, f.after);
    }
    try {
      // Side by side, a few at a time: a 200-file work patch keeps up to 400 blobs before it writes.
      await mapLimit([...blobs], 8, ([version, bytes]) => store.put(version, bytes));
    } catch (err) {
      this.options.logger.warn(`[patch] checkpoint content not kept: ${describeError(err)}`);
    }
  }

  /**
   * Plans a restore: each file back to the given bytes (or removed), refused with VERSION_CONFLICT naming every file
   * that is not at its expected version now. Writes nothing; `commit` the intent in the same exclusive turn, like a
   * patch: it is minted, written all-or-nothing and recorded in the ledger like any operation.
   */
  async prepareRestore(ws: Workspace, request: RestoreRequest): Promise<PatchIntent> {
    const { fs } = this.options;
    const { realRoot, resolve } = await confinedPaths(fs, ws.root);
    const conflicts: { path: string; expected: string | null; found: string | null }[] = [];
    const files: PlannedFile[] = [];
    for (const f of request.files) {
      const abs = await resolve(f.path);
      let found: FileFound;
      try {
        const { bytes, mode } = await fs.readFile(abs, { within: realRoot, maxBytes: MAX_PATCH_FILE_BYTES });
        found = { bytes, ...(mode !== undefined ? { mode } : {}) };
      } catch (err) {
        const code = failureCode(err);
        if (code === 'ENOENT' || code === 'ENOTDIR') found = undefined;
        else if (code === 'EISDIR') found = 'directory';
        else throw fileError(err, f.path, 'max_update_file_bytes') ?? err;
      }
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
    const steps = await this.stepsOf(ws, planned, resolve, new Map(), realRoot);
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

  private replay(record: OperationRecord): ApplyPatchResult {
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

  /** Every check that can refuse the patch, before anything is recorded or written. */
  private async validate(ws: Workspace, request: ApplyPatchRequest): Promise<{ planned: PlannedPatch; steps: PatchStep[]; realRoot: string; parsed: ParsedPatch }> {
    const { fs } = this.options;
    // One pacer for the whole check: the work yields to the event loop and has one deadline (TIMEOUT).
    const pacer = new Pacer();
    const parsed = await parsePatchPaced(request.patch, pacer);
    /** The real path each file read for the plan had (see FileContent.real). */
    const realOf = new Map<string, string>();
    const { realRoot, resolve } = await confinedPaths(fs, ws.root);
    // Look every named path up at once (bounded), then plan in patch order from those answers: a large patch
    // validates in parallel, and errors still surface in the order the patch names them.
    const lookups = new Map<string, Promise<FileFound>>();
    const lookup = (rel: string): Promise<FileFound> => {
      let p = lookups.get(rel);
      if (!p) {
        p = (async (): Promise<FileFound> => {
          const abs = await resolve(rel);
          try {
            // Read through one verified descriptor: what is planned from is what was inside the workspace.
            const { bytes, mode, real } = await fs.readFile(abs, { within: realRoot, maxBytes: MAX_PATCH_FILE_BYTES });
            if (real !== undefined) realOf.set(rel, real);
            return { bytes, ...(mode !== undefined ? { mode } : {}) };
          } catch (err) {
            const code = failureCode(err);
            if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
            if (code === 'EISDIR') return 'directory';
            throw fileError(err, rel, 'max_update_file_bytes') ?? err;
          }
        })();
        p.catch(() => undefined); // surfaced when planPatch asks for it
        lookups.set(rel, p);
      }
      return p;
    };
    const named = [...new Set(parsed.files.flatMap((op) => (op.kind === 'update' && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path])))];
    await mapLimit(named, 16, (rel) => lookup(rel).then(() => undefined, () => undefined));
    // Versions are checked inside the plan, before any hunk is matched (preconditions first).
    const planned = await planPatch(parsed, lookup, { diffs: request.check_only === true, pacer, expected: request.expected_versions });
    const steps = await this.stepsOf(ws, planned, resolve, realOf, realRoot);
    return { planned, steps, realRoot, parsed };
  }

  /** Where each planned file is written, refusing files with unsaved editor changes and two sections on one file. */
  private async stepsOf(ws: Workspace, planned: PlannedPatch, resolve: (rel: string) => Promise<string>, realOf: ReadonlyMap<string, string>, realRoot: string): Promise<PatchStep[]> {
    const { fs } = this.options;
    const steps: PatchStep[] = [];
    /** What each section changes on disk (see diskIdentity) → the patch path that names it. */
    const claimed = new Map<string, string>();
    const facts = await mapLimit(planned.files, 16, async (file) => {
      const named = await resolve(file.path);
      // An update writes through a symbolic link to the file it names (confine proved the target is inside), so
      // the link survives like the mode does; replacing it would leave the link's target unpatched. A delete or a
      // move removes the entry itself.
      // The file the plan was read from, when its real path is the named one below the real root: no link on the
      // way, so the write goes to the named path and the real path read is what it changes (no second resolution).
      const direct = file.kind === 'update' && realOf.get(file.path) === path.join(realRoot, ...file.path.split('/')) ? realOf.get(file.path) : undefined;
      const abs = direct !== undefined ? named : file.kind === 'update' ? await throughLink(fs, named) : named;
      const absTarget = file.move_to !== undefined ? await resolve(file.move_to) : undefined;
      const identity = direct ?? (await diskIdentity(fs, abs, file.kind === 'update'));
      const targetIdentity = absTarget !== undefined ? await diskIdentity(fs, absTarget, false) : undefined;
      const created = file.kind === 'add' ? abs : file.kind === 'move' ? absTarget : undefined;
      const newFolders = created !== undefined ? await missingFolders(fs, created, ws.root) : [];
      const removesEntry = file.kind === 'delete' || file.kind === 'move';
      const linkTarget = removesEntry && (await fs.lstat(named))?.type === 'symlink' ? await fs.readLink(named) : undefined;
      return { named, abs, absTarget, identity, targetIdentity, newFolders, linkTarget };
    });
    for (const [i, file] of planned.files.entries()) {
      const { named, abs, absTarget, identity, targetIdentity, newFolders, linkTarget } = facts[i] as (typeof facts)[number];
      for (const [rel, p] of [[file.path, named], [file.path, abs], [file.move_to, absTarget]] as const) {
        if (p !== undefined && rel !== undefined && fs.isDirty(p)) {
          throw new ToolError('FILE_DIRTY_IN_EDITOR', `${rel} has unsaved changes in the editor; nothing was written.`, {
            hint: 'Ask the developer to save or revert the file, then read it again and resend the patch.',
            details: { path: rel },
          });
        }
      }
      for (const [rel, id] of [
        [file.path, identity],
        ...(file.move_to !== undefined && targetIdentity !== undefined ? [[file.move_to, targetIdentity] as const] : []),
      ] as const) {
        const other = claimed.get(id);
        if (other !== undefined) {
          // Two sections on one file (through a symbolic link) would each be planned from the old content and
          // the second write would silently drop the first one's changes.
          throw new ToolError('PATCH_INVALID', `${JSON.stringify(rel)} and ${JSON.stringify(other)} are the same file on disk (a symbolic link); the patch touches it twice.`, {
            hint: 'Touch each file once per patch: merge the changes into one section, under one of its names.',
            details: { path: rel, same_as: other },
          });
        }
        claimed.set(id, rel);
      }
      steps.push({ file, abs, newFolders, ...(absTarget ? { absTarget } : {}), ...(linkTarget !== undefined ? { linkTarget } : {}) });
    }
    return steps;
  }

  private async write(ws: Workspace, realRoot: string, steps: PatchStep[], operationId: string, files: PatchFileResult[]): Promise<ApplyPatchResult> {
    const { fs, faults, logger } = this.options;
    // Adds and updates touch independent paths and are written several at a time. A delete or a move may clear the
    // way for a later section (a file replaced by a folder of the same name), so such patches keep patch order;
    // so do the test seams, which stop the applier between two writes.
    const ordered = faults !== undefined || steps.some((s) => s.file.kind === 'delete' || s.file.kind === 'move');
    const done: PatchStep[] = [];
    let failure: { index: number; error: unknown } | undefined;
    await mapLimit(steps, ordered ? 1 : 8, async (step, index) => {
      if (failure) return;
      try {
        if (faults?.failWrite?.(index, step.file.path)) throw new Error(`injected write failure at ${step.file.path}`);
        await writeStep(fs, step, { within: realRoot, tag: operationId });
        done.push(step);
        await faults?.afterWrite?.(index);
      } catch (error) {
        failure ??= { index, error };
      }
    });
    if (!failure) return { status: 'applied', operation_id: operationId, files };

    const message = describeError(failure.error);
    logger.warn(`[patch] write failed in ${ws.id} (${message}); restoring ${done.length} file operation(s)`);
    const failedStep = steps[failure.index] as PatchStep;
    const failedAt = failedStep.file.path;
    // Also undo and verify the step that failed: an atomic write leaves it untouched, but a move may be half done.
    // Except when confinement refused it: its folder led outside, nothing was opened for writing, and re-checking it
    // through the same moving link would only report that link's state.
    const refused = failureCode(failure.error) === 'ESCAPED' && failedStep.file.kind !== 'move';
    const undo = refused || done.includes(failedStep) ? done : [...done, failedStep];
    const states = await this.restore(realRoot, operationId, undo);
    const broken = states.filter((s) => s.state !== 'restored');
    if (broken.length === 0) {
      return {
        status: 'failed',
        operation_id: operationId,
        files,
        reason: `Writing ${failedAt} failed (${message}); every file was restored and verified by hash.`,
        hint: 'Nothing changed. Read the files again and retry with a new operation_key.',
      };
    }
    return {
      status: 'failed_partial',
      operation_id: operationId,
      files: files.map((f) => ({ ...f, state: states.find((s) => s.path === f.path)?.state ?? 'unchanged' })),
      reason: `Writing ${failedAt} failed (${message}) and ${broken.length} file(s) could not be restored.`,
      hint: 'Read the files listed with a state other than "restored" before doing anything else.',
    };
  }

  /** Puts back what each step changed, newest first, and checks each path by hash. */
  private async restore(realRoot: string, operationId: string, steps: PatchStep[]): Promise<{ path: string; state: string }[]> {
    const { fs } = this.options;
    const within = { within: realRoot };
    const hash = (abs: string) => hashAt(fs, abs, realRoot);
    const out: { path: string; state: string }[] = [];
    for (const step of [...steps].reverse()) {
      const { file } = step;
      try {
        if (file.kind === 'add') {
          if (await fs.stat(step.abs)) await fs.deleteFile(step.abs, within);
        } else if (step.linkTarget !== undefined) {
          if ((await fs.lstat(step.abs)) === undefined) await fs.createLink(step.linkTarget, step.abs, within);
          if (file.kind === 'move' && step.absTarget && (await fs.stat(step.absTarget))) await fs.deleteFile(step.absTarget, within);
        } else if (file.before) {
          if ((await hash(step.abs)) !== file.beforeVersion || file.beforeMode !== undefined) await fs.writeFile(step.abs, file.before, { ...within, ...modeBeforeOf(file), tag: `${operationId}-undo` });
          if (file.kind === 'move' && step.absTarget && (await fs.stat(step.absTarget))) await fs.deleteFile(step.absTarget, within);
        }
        for (const folder of step.newFolders) {
          // Fails, harmlessly, while another file of the patch still lives there; its own undo removes it later.
          await fs.removeEmptyFolder(folder, within).catch(() => undefined);
        }
        const ok = file.kind === 'add'
          ? (await hash(step.abs)) === undefined
          : (await hash(step.abs)) === file.beforeVersion && (file.kind !== 'move' || (await hash(step.absTarget as string)) === undefined);
        out.push({ path: file.path, state: ok ? 'restored' : 'differs from both before and after' });
      } catch (err) {
        out.push({ path: file.path, state: `restore failed: ${describeError(err)}` });
      }
    }
    return out;
  }

  /** The version of what is at a workspace-relative path now: read through a verified descriptor. */
  async versionAt(ws: Workspace, rel: string): Promise<string | undefined | 'directory'> {
    const { fs } = this.options;
    const realRoot = await realRootOf(fs, ws.root);
    const { abs } = await confine(fs, ws.root, rel, { realRoot });
    const st = await fs.stat(abs);
    if (!st) return undefined;
    if (st.type === 'directory') return 'directory';
    return hashAt(fs, abs, realRoot);
  }

  /** After a crash: settle operations left pending by comparing disk hashes with the recorded ones. */
  async reconcile(): Promise<void> {
    const { fs, workspaces, logger } = this.options;
    const outcomes = await this.options.ledger.reconcile(async (rel, record) => {
      const ws = workspaces.get(record.workspace_id, record.work_id);
      const realRoot = await realRootOf(fs, ws.root);
      const { abs } = await confine(fs, ws.root, rel, { realRoot });
      // A write cut off before its rename left a temp file; the target itself is wholly old or wholly new.
      for (const tag of [record.operation_id, `${record.operation_id}-undo`]) {
        if (await fs.removeTemp(abs, tag, { within: realRoot }).catch(() => false)) logger.info(`[patch] removed a temp file left next to ${rel}`);
      }
      const st = await fs.stat(abs);
      if (!st) return undefined;
      if (st.type === 'directory') return 'directory';
      return hashAt(fs, abs, realRoot);
    });
    for (const o of outcomes) logger.info(`[patch] reconciled ${o.operation_id} (key ${o.operation_key}) as ${o.status}`);
  }
}

/** The file a symbolic link names (already confined to the workspace), or `abs` itself when it is no link. */
async function throughLink(fs: WorkspaceFs, abs: string): Promise<string> {
  return (await fs.lstat(abs))?.type === 'symlink' ? fs.realpath(abs) : abs;
}

/**
 * What a write at `abs` changes on disk, to spot two sections that reach the same file through symbolic links:
 * the real path of the content (`content`: an update through a link changes the link's target), else the real
 * folder plus the entry's own name (an add, a delete, a move: the entry itself). The folder may not exist yet.
 */
async function diskIdentity(fs: WorkspaceFs, abs: string, content: boolean): Promise<string> {
  if (content) return fs.realpath(abs);
  const rest = [path.basename(abs)];
  let dir = path.dirname(abs);
  while ((await fs.lstat(dir)) === undefined && path.dirname(dir) !== dir) {
    rest.unshift(path.basename(dir));
    dir = path.dirname(dir);
  }
  return path.join(await fs.realpath(dir), ...rest);
}

/** Ancestors of `abs` below `root` that do not exist yet, deepest first. */
async function missingFolders(fs: WorkspaceFs, abs: string, root: string): Promise<string[]> {
  const out: string[] = [];
  for (let dir = path.dirname(abs); dir !== root && path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    if ((await fs.lstat(dir)) !== undefined) break;
    out.push(dir);
  }
  return out;
}

function modeOf(file: PlannedFile): { mode?: number } {
  return file.mode !== undefined ? { mode: file.mode } : {};
}

/** The mode the file had before the step (none for an add). */
function modeBeforeOf(file: PlannedFile): { mode?: number } {
  const mode = file.kind === 'add' ? undefined : (file.beforeMode ?? file.mode);
  return mode !== undefined ? { mode } : {};
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

/** The version of the regular file at `abs`, read through a verified descriptor; undefined when there is none. */
/**
 * The folder's real path, and a resolver of workspace paths to confined absolute ones for one plan: each path is
 * confined once, and each folder's real path resolved once (RealFolders).
 */
async function confinedPaths(fs: WorkspaceFs, root: string): Promise<{ realRoot: string; resolve: (rel: string) => Promise<string> }> {
  const realRoot = await realRootOf(fs, root);
  const folders = new RealFolders();
  const absOf = new Map<string, string>();
  const resolve = async (rel: string): Promise<string> => {
    const known = absOf.get(rel);
    if (known) return known;
    const { abs } = await confine(fs, root, rel, { realRoot, folders });
    absOf.set(rel, abs);
    return abs;
  };
  return { realRoot, resolve };
}

async function hashAt(fs: WorkspaceFs, abs: string, realRoot: string): Promise<string | undefined> {
  try {
    return contentVersion((await fs.readFile(abs, { within: realRoot, maxBytes: MAX_PATCH_FILE_BYTES })).bytes);
  } catch (err) {
    const code = failureCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENOTREG') return undefined;
    throw err;
  }
}

async function writeStep(fs: WorkspaceFs, step: PatchStep, options: { within: string; tag: string }): Promise<void> {
  const { file } = step;
  const within = { within: options.within };
  switch (file.kind) {
    case 'add':
    case 'update':
      await fs.writeFile(step.abs, file.after as Uint8Array, { ...options, ...modeOf(file) });
      return;
    case 'delete':
      await fs.deleteFile(step.abs, within);
      return;
    case 'move':
      await fs.writeFile(step.absTarget as string, file.after as Uint8Array, { ...options, ...modeOf(file) });
      await fs.deleteFile(step.abs, within);
      return;
  }
}

function fileResult(f: PlannedFile, withDiff: boolean): PatchFileResult {
  const r: PatchFileResult = { path: f.path, kind: f.kind };
  if (f.move_to !== undefined) r.move_to = f.move_to;
  if (f.beforeVersion !== undefined) r.before_version = f.beforeVersion;
  if (f.afterVersion !== undefined) r.after_version = f.afterVersion;
  if (withDiff) r.diff = f.diff;
  return r;
}

function toOperationFile(f: PatchFileResult): OperationFile {
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
function changesOf(planned: PlannedPatch, steps: readonly PatchStep[], root: string): OperationChange[] {
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
function lineCounts(parsed: ParsedPatch, planned: PlannedPatch): Map<string, { added: number; removed: number }> {
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
