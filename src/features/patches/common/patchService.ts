import * as path from 'node:path';
import type { OperationLedger } from '../../../kernel/ledger/operationLedger';
import { occupancyScope } from '../../../kernel/workspaces';
import type { Workspace } from '../../../kernel/workspaces';
import type { PlannedPatch } from './plan';
import { mapLimit } from '../../../base/concurrency';
import { describeError } from '../../../base/describeError';
import { SerialQueue } from '../../../base/serialQueue';
import { confineOne, entryVersion } from './patchDisk';
import { changesOf, fileResult, lineCounts, replayOf, toOperationFile, withReviewed } from './patchRecords';
import { fileHistoryOf, planRestore } from './restorePlan';
import { patchArgsHash } from './patchTypes';
import type { ApplyPatchRequest, ApplyPatchResult, FileHistory, PatchIntent, PatchServiceOptions, RestoreRequest } from './patchTypes';
import { writeSteps } from './patchWriter';
import { validatePatch } from './validatePatch';

// The contract lives in patchTypes.ts; callers import it from here.
export { MAX_PATCH_FILE_BYTES, patchArgsHash } from './patchTypes';
export type {
  ApplyPatchRequest,
  ApplyPatchResult,
  FileHistory,
  PatchFaults,
  PatchFileResult,
  PatchIntent,
  PatchServiceOptions,
  PatchStep,
  RestoreFile,
  RestoreRequest,
} from './patchTypes';

/**
 * The patch transaction: validate everything, record the intent durably, write each file atomically, record the
 * outcome. If a write fails, files already written are put back from their snapshots and checked by hash.
 */
export class PatchService {
  /** One queue per workspace occupancy scope: patches of one workspace run one at a time. */
  private readonly queues = new Map<string, SerialQueue>();

  constructor(private readonly options: PatchServiceOptions) {}

  get ledger(): OperationLedger {
    return this.options.ledger;
  }

  /** Runs `fn` after every earlier patch of the same workspace has finished (and before any later one starts). */
  exclusive<T>(workspaceId: string, fn: () => Promise<T>): Promise<T> {
    return this.queueOf(workspaceId).run(fn);
  }

  /** Waits for the workspace's turn and returns the function that ends it: `exclusive` for code that spans calls. */
  async lock(workspaceId: string): Promise<() => void> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    await new Promise<void>((started) => {
      void this.queueOf(workspaceId).run(() => {
        started();
        return turn;
      });
    });
    let once = false;
    return () => {
      if (once) return;
      once = true;
      release();
    };
  }

  private queueOf(workspaceId: string): SerialQueue {
    let queue = this.queues.get(workspaceId);
    if (!queue) this.queues.set(workspaceId, (queue = new SerialQueue()));
    return queue;
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
    if (stored) return { replay: replayOf(stored) };
    const { planned, steps, realRoot, parsed } = await validatePatch(this.options.fs, ws, request);
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
    const outcome = await writeSteps(this.options, ws, realRoot, [...steps], record.operation_id, files);
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
    return fileHistoryOf(this.options.ledger, workspaceId, rel);
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
    return planRestore(this.options.fs, ws, request);
  }

  /** The version of what is at a workspace-relative path now: read through a verified descriptor. */
  async versionAt(ws: Workspace, rel: string): Promise<string | undefined | 'directory'> {
    const { fs } = this.options;
    const { realRoot, abs } = await confineOne(fs, ws.root, rel);
    return entryVersion(fs, abs, realRoot);
  }

  /** After a crash: settle operations left pending by comparing disk hashes with the recorded ones. */
  async reconcile(): Promise<void> {
    const { fs, workspaces, logger } = this.options;
    const outcomes = await this.options.ledger.reconcile(async (rel, record) => {
      const ws = workspaces.get(record.workspace_id, record.work_id);
      const { realRoot, abs } = await confineOne(fs, ws.root, rel);
      // A write cut off before its rename left a temp file; the target itself is wholly old or wholly new.
      for (const tag of [record.operation_id, `${record.operation_id}-undo`]) {
        if (await fs.removeTemp(abs, tag, { within: realRoot }).catch(() => false)) logger.info(`[patch] removed a temp file left next to ${rel}`);
      }
      return entryVersion(fs, abs, realRoot);
    });
    for (const o of outcomes) logger.info(`[patch] reconciled ${o.operation_id} (key ${o.operation_key}) as ${o.status}`);
  }
}
