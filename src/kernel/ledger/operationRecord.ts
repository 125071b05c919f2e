import { patchRecordSchema } from './schemas';
/**
 * The shape of one recorded patch operation, as `operation_status` returns it and as the ledger journal
 * stores it (snake_case, like the tool contract). Hashes are `sha256:<hex>` of the bytes on disk, the same
 * form as a file's `version`.
 */

export type OperationStatus = 'pending' | 'applied' | 'failed' | 'failed_partial' | 'not_applied' | 'unknown' | 'checked';

/** Every status but `pending`: an operation in one of these never changes again. */
export type FinishedStatus = Exclude<OperationStatus, 'pending'>;

export type FileChangeKind = 'add' | 'update' | 'delete' | 'move';

/** One file of the patch, as the tool result lists it. */
export interface OperationFile {
  /** Workspace-relative, `/`-separated. */
  readonly path: string;
  readonly kind: FileChangeKind;
  readonly move_to?: string;
  readonly before_version?: string;
  readonly after_version?: string;
}

/**
 * What one path on disk is expected to hold before and after the operation; `null` means "no file there".
 * One entry per path the patch touches: a move gives two, the source (`after_hash: null`) and the target
 * (`before_hash: null`, unless it replaces a file). Reconciliation after a crash compares these with the disk.
 */
export interface OperationChange {
  /** Workspace-relative, `/`-separated. */
  readonly path: string;
  readonly kind: FileChangeKind;
  readonly before_hash: string | null;
  readonly after_hash: string | null;
  /** POSIX permission bits of the file before (absent: no file, or not known). */
  readonly before_mode?: number;
  /** POSIX permission bits of the file after (absent: no file, or the default of a new file). */
  readonly after_mode?: number;
  /**
   * Folders (workspace-relative, deepest first) that did not exist and that writing this path created: a rewind of
   * the operation removes those that are empty again.
   */
  readonly created_folders?: readonly string[];
}

/** What reconciliation found at one path. `found` is a hash, `null` (nothing there), `directory` or `unreadable`. */
export interface ReconcileEvidence {
  readonly path: string;
  readonly expected_before: string | null;
  readonly expected_after: string | null;
  readonly found: string | null;
}

export type OperationEventType = 'minted' | 'finished' | 'reconciled';

export interface OperationEvent {
  readonly type: OperationEventType;
  /** ISO 8601. */
  readonly at: string;
  /** The status this event settled on (`finished`, `reconciled`). */
  readonly status?: FinishedStatus;
  readonly reason?: string;
  /** `reconciled` only: what each path held. */
  readonly evidence?: readonly ReconcileEvidence[];
}

export interface OperationRecord {
  /** `op_` + 16 hex digits. */
  readonly operation_id: string;
  readonly operation_key: string;
  /** hashArguments() of the request that minted it. */
  readonly args_hash: string;
  readonly kind: 'patch';
  readonly workspace_id: string;
  readonly work_id?: string;
  /** ISO 8601. */
  readonly created_at: string;
  /** ISO 8601; absent while pending. */
  readonly finished_at?: string;
  readonly status: OperationStatus;
  readonly files: readonly OperationFile[];
  readonly changes: readonly OperationChange[];
  readonly events: readonly OperationEvent[];
  /** The terminal tool result, returned as is to a retry with the same key and arguments. */
  readonly result?: unknown;
}

/** Whether a record read back from a journal is a patch operation (its schema: src/kernel/ledger/schemas.ts). */
export function isOperationRecord(value: unknown): value is OperationRecord {
  return patchRecordSchema.safeParse(value).success;
}
