/**
 * Checkpoints: every applied operation of a work is one. The developer can put the work's files back to the state
 * right after any of them (or before the first) and redo that rewind.
 *
 * What a checkpoint needs is already half in the operation ledger: every operation records, per path, the version
 * before and after it. The bytes behind those versions are kept, content-addressed, in a bounded BlobStore when the
 * patch engine commits an operation of a work (PatchService.keepContent). We keep content rather than derive the
 * state by inverting patches: the ledger does not keep the patch text, a reviewer may have changed the written
 * bytes, and an inverse replayed over several operations fails on the first context that no longer matches, while a
 * version-addressed blob restores exactly the bytes the ledger names, whatever wrote them.
 *
 * A rewind or redo is itself an operation through the same patch engine: every file's current version is the
 * precondition (so a file changed outside the work since the work's last operation on it refuses the whole rewind,
 * naming the files, and the developer's own edits are never overwritten), it is recorded in the ledger with the
 * work's id (so it is a checkpoint too, and a redo restores its before-state), and it is written all-or-nothing.
 * The work's agent is told through its steering queue (an instruction of kind `rewind`).
 */
import { randomBytes } from 'node:crypto';
import { ToolError } from '../../../base/errors';
import type { OperationLedger } from '../../../kernel/ledger/operationLedger';
import type { OperationRecord } from '../../../kernel/ledger/operationRecord';
import type { PatchIntent, PatchService, RestoreFile } from '../../patches';
import type { BlobStore } from './blobStore';
import type { Logger } from '../../../base/logger';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import { occupancyScope } from '../../../kernel/workspaces';
import type { RewindNotice, Steering } from '../../works';
import { describeError } from '../../../base/describeError';

/** operation_key prefixes of the operations a rewind and a redo record. */
export const REWIND_KEY_PREFIX = 'codespace-rewind:';
export const REDO_KEY_PREFIX = 'codespace-redo:';

export interface Checkpoint {
  /** 1 for the work's first applied operation. */
  readonly index: number;
  readonly operation_id: string;
  readonly operation_key: string;
  readonly workspace_id: string;
  /** When the operation finished (ISO 8601). */
  readonly at: string;
  /** `patch`: an operation of the agent (or a review); `rewind`, `redo`: the developer's. */
  readonly kind: 'patch' | 'rewind' | 'redo';
  /** The checkpoint a `rewind` went back to. */
  readonly rewound_to?: number;
  /** Every path the operation changed, in its order. */
  readonly files: readonly string[];
  /** One line: what the operation did. */
  readonly summary: string;
}

export interface CheckpointOutcome {
  readonly notice: RewindNotice;
  /** The operation that wrote the files. */
  readonly operation_id: string;
  /** Whether the work's agent was told (false when the work is finished). */
  readonly told: boolean;
}

export interface CheckpointServiceOptions {
  readonly ledger: OperationLedger;
  readonly patches: PatchService;
  readonly workspaces: Pick<WorkspaceRegistry, 'get'>;
  /** The content the patch engine keeps (absent: nothing is kept and no checkpoint can be restored). */
  readonly blobs: BlobStore | undefined;
  readonly steering: Pick<Steering, 'work' | 'queueRewindNotice'>;
  readonly logger: Logger;
  readonly newKey?: () => string;
}

interface Target {
  readonly workspace_id: string;
  readonly path: string;
  /** The version the work left there last (null: no file). */
  readonly expected: string | null;
  /** The version to put back (null: no file). */
  readonly target: string | null;
  /** The mode the work left there last, and the one to put back (absent: not known). */
  readonly expectedMode?: number;
  readonly targetMode?: number;
}

/** The mode fields of a target: `after` what must be there, `before` what to put back. */
function modes(after: number | undefined, before: number | undefined): { expectedMode?: number; targetMode?: number } {
  return { ...(after !== undefined ? { expectedMode: after } : {}), ...(before !== undefined ? { targetMode: before } : {}) };
}

/** Whether restoring `t` writes anything: other content, or (a file either way) another known mode. */
function changes(t: Target): boolean {
  if (t.expected !== t.target) return true;
  return t.target !== null && t.targetMode !== undefined && t.expectedMode !== undefined && t.targetMode !== t.expectedMode;
}

/** The folders (by workspace) the operations' writes created: a restore that undoes them removes those left empty. */
function createdFolders(ops: readonly OperationRecord[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const op of ops) {
    for (const c of op.changes) {
      if (!c.created_folders || c.created_folders.length === 0) continue;
      out.set(op.workspace_id, [...(out.get(op.workspace_id) ?? []), ...c.created_folders]);
    }
  }
  return out;
}

export class CheckpointService {
  private readonly newKey: () => string;

  constructor(private readonly options: CheckpointServiceOptions) {
    this.newKey = options.newKey ?? (() => randomBytes(8).toString('hex'));
  }

  /** The work's checkpoints, oldest first (index 1 first). */
  list(workId: string): Checkpoint[] {
    return this.operations(workId).map((r, i) => checkpointOf(r, i + 1));
  }

  /** Whether the work's newest operation is a rewind, which `redo` puts back. */
  canRedo(workId: string): boolean {
    const ops = this.operations(workId);
    const last = ops[ops.length - 1];
    return last !== undefined && last.operation_key.startsWith(REWIND_KEY_PREFIX);
  }

  /**
   * Puts the work's files back to checkpoint `index` (0: before its first operation): every file a later operation
   * of the work changed gets the content it had then. Refused, with nothing written, when a file is not at the
   * version the work's last operation on it left (changed outside the work), when its content is no longer kept, or
   * when the work is already there.
   */
  async rewind(workId: string, index: number): Promise<CheckpointOutcome> {
    const ops = this.operations(workId);
    if (!Number.isSafeInteger(index) || index < 0 || index > ops.length) {
      throw new ToolError('INVALID_ARGUMENTS', `Work ${workId} has checkpoints 0 to ${ops.length}; there is no checkpoint ${index}.`, { details: { work_id: workId, checkpoint: index } });
    }
    if (index === ops.length) {
      throw new ToolError('INVALID_ARGUMENTS', `Work ${workId} is at checkpoint ${index} already: it is its newest operation.`, { details: { work_id: workId, checkpoint: index } });
    }
    const targets = new Map<string, Target>();
    // Over the operations after the checkpoint: the first on a path gives what to put back (its before-version), the
    // last gives what must be there now (its after-version).
    for (const op of ops.slice(index)) {
      for (const c of op.changes) {
        const key = `${op.workspace_id}\n${c.path}`;
        const known = targets.get(key);
        targets.set(key, {
          workspace_id: op.workspace_id,
          path: c.path,
          expected: c.after_hash,
          target: known ? known.target : c.before_hash,
          ...modes(c.after_mode, known ? known.targetMode : c.before_mode),
        });
      }
    }
    const at = index === 0 ? undefined : ops[index - 1];
    return this.restore(workId, ops, [...targets.values()], createdFolders(ops.slice(index)), `${REWIND_KEY_PREFIX}${index}:${this.newKey()}`, (files) => ({
      action: 'rewind',
      checkpoint: index,
      ...(at ? { operation_id: at.operation_id } : {}),
      files,
    }));
  }

  /** Puts back the state before the work's last rewind (its newest operation must be that rewind). */
  async redo(workId: string): Promise<CheckpointOutcome> {
    const ops = this.operations(workId);
    const last = ops[ops.length - 1];
    if (last === undefined || !last.operation_key.startsWith(REWIND_KEY_PREFIX)) {
      throw new ToolError('INVALID_ARGUMENTS', `Nothing to redo for work ${workId}: its newest operation is not a rewind.`, {
        hint: 'Redo is offered right after a rewind, until the work writes again.',
        details: { work_id: workId },
      });
    }
    const targets = last.changes.map((c): Target => ({ workspace_id: last.workspace_id, path: c.path, expected: c.after_hash, target: c.before_hash, ...modes(c.after_mode, c.before_mode) }));
    const back = ops.length - 1;
    const at = back === 0 ? undefined : ops[back - 1];
    return this.restore(workId, ops, targets, createdFolders([last]), `${REDO_KEY_PREFIX}${this.newKey()}`, (files) => ({
      action: 'redo',
      checkpoint: back,
      ...(at ? { operation_id: at.operation_id } : {}),
      files,
    }));
  }

  /** The work's applied operations, oldest first. */
  private operations(workId: string): OperationRecord[] {
    return this.options.ledger.list().filter((r) => r.work_id === workId && r.status === 'applied' && r.changes.length > 0);
  }

  private async restore(
    workId: string,
    planned: readonly OperationRecord[],
    targets: readonly Target[],
    folders: ReadonlyMap<string, readonly string[]>,
    key: string,
    noticeOf: (files: RewindNotice['files']) => RewindNotice,
  ): Promise<CheckpointOutcome> {
    const { patches, workspaces, steering } = this.options;
    const work = steering.work(workId);
    if (!work) throw new ToolError('WORK_NOT_FOUND', `No work ${workId}.`, { details: { work_id: workId } });
    const changing = targets.filter(changes);
    if (changing.length === 0) {
      // A later operation put every file back already (a redo after a rewind, say): there is nothing to write.
      const probe = noticeOf([]);
      throw new ToolError('INVALID_ARGUMENTS', `The files of work ${workId} are already as at checkpoint ${probe.checkpoint}: nothing to write.`, { details: { work_id: workId, checkpoint: probe.checkpoint } });
    }
    // Every kept content first: nothing is written unless all of it is there.
    const contents = new Map<string, Uint8Array>();
    const missing: string[] = [];
    for (const t of changing) {
      if (t.target === null || contents.has(t.target)) continue;
      const bytes = await this.options.blobs?.get(t.target);
      if (bytes === undefined) missing.push(t.path);
      else contents.set(t.target, bytes);
    }
    if (missing.length > 0) {
      const limits = this.options.blobs?.limits;
      throw new ToolError('UNAVAILABLE', `That checkpoint cannot be restored: the content of ${missing.join(', ')} at that point is not kept; nothing was written.`, {
        hint: limits
          ? `Checkpoint content is kept up to ${limits.maxBytes} bytes in all, for files up to ${limits.maxBlobBytes} bytes; the oldest goes first.`
          : 'Checkpoint content is not kept in this host.',
        details: { files: missing },
      });
    }
    const byWorkspace = new Map<string, RestoreFile[]>();
    for (const t of changing) {
      const list = byWorkspace.get(t.workspace_id) ?? [];
      list.push({ path: t.path, expected: t.expected, content: t.target === null ? null : (contents.get(t.target) as Uint8Array), ...(t.targetMode !== undefined ? { mode: t.targetMode } : {}) });
      byWorkspace.set(t.workspace_id, list);
    }
    const written: { path: string; version: string | null }[] = [];
    let operationId = '';
    const spaces = [...byWorkspace.keys()].sort().map((id) => workspaces.get(id, workId));
    // One turn of every folder at once (in a fixed order): every precondition is checked before the first write.
    const releases: (() => void)[] = [];
    try {
      for (const ws of spaces) releases.push(await patches.lock(occupancyScope(ws)));
      // The plan was made from the work's operations before its turn came: if the work wrote meanwhile, it is stale.
      const now = this.operations(workId);
      if (now.length !== planned.length || now[now.length - 1]?.operation_id !== planned[planned.length - 1]?.operation_id) {
        throw new ToolError('VERSION_CONFLICT', `Work ${workId} wrote again while the ${key.startsWith(REDO_KEY_PREFIX) ? 'redo' : 'rewind'} waited for its turn; nothing was written.`, {
          hint: 'Try again: the checkpoints now include that operation.',
          details: { work_id: workId },
        });
      }
      const intents: PatchIntent[] = [];
      const conflicts: unknown[] = [];
      for (const ws of spaces) {
        try {
          const remove = folders.get(ws.id);
          intents.push(await patches.prepareRestore(ws, { workspace_id: ws.id, operation_key: key, work_id: workId, files: byWorkspace.get(ws.id) ?? [], ...(remove ? { remove_folders: remove } : {}) }));
        } catch (err) {
          if (!ToolError.is(err, 'VERSION_CONFLICT')) throw err;
          conflicts.push(err);
        }
      }
      if (conflicts.length > 0) {
        const files = conflicts.flatMap((e) => ((e as ToolError).details?.files as { path: string }[] | undefined) ?? []);
        throw new ToolError('VERSION_CONFLICT', `Refused: ${files.map((f) => f.path).join(', ')} changed outside the work since its last operation on ${files.length === 1 ? 'it' : 'them'}; nothing was written.`, {
          hint: 'Your own edits are kept. Undo them, or keep them and rewind another time.',
          details: { files },
        });
      }
      for (const intent of intents) {
        const result = await patches.commit(intent);
        if (result.status !== 'applied') {
          throw new ToolError('INTERNAL', `Writing the checkpoint failed: ${result.reason ?? result.status}`, { details: { operation_id: result.operation_id, status: result.status, files: result.files } });
        }
        operationId = result.operation_id;
        for (const f of intent.planned.files) written.push({ path: f.path, version: f.afterVersion ?? null });
      }
    } finally {
      for (const release of releases) release();
    }
    const notice = noticeOf(written.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0)));
    let told = false;
    if (work.status === 'open' && written.length > 0) {
      try {
        await steering.queueRewindNotice(workId, notice);
        told = true;
      } catch (err) {
        this.options.logger.warn(`[checkpoints] the agent of ${workId} was not told of the ${notice.action}: ${describeError(err)}`);
      }
    }
    this.options.logger.info(`[checkpoints] ${notice.action} of ${workId} to checkpoint ${notice.checkpoint}: ${written.length} file(s)`);
    return { notice, operation_id: operationId, told };
  }
}

function checkpointOf(r: OperationRecord, index: number): Checkpoint {
  const files = r.changes.map((c) => c.path);
  const rewound = /^codespace-rewind:(\d+):/.exec(r.operation_key);
  const kind = rewound ? 'rewind' : r.operation_key.startsWith(REDO_KEY_PREFIX) ? 'redo' : 'patch';
  const verbs = r.files.map((f) => `${f.kind === 'move' ? `move ${f.path} → ${f.move_to ?? '?'}` : `${f.kind} ${f.path}`}`);
  const summary = kind === 'rewind' ? `Rewind to checkpoint ${rewound?.[1] ?? '?'}` : kind === 'redo' ? 'Redo of a rewind' : verbs.join(', ');
  return {
    index,
    operation_id: r.operation_id,
    operation_key: r.operation_key,
    workspace_id: r.workspace_id,
    at: r.finished_at ?? r.created_at,
    kind,
    ...(rewound ? { rewound_to: Number(rewound[1]) } : {}),
    files,
    summary,
  };
}
