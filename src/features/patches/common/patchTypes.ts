import type { BlobStore } from '../../review';
import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { OperationLedger } from '../../../kernel/ledger/operationLedger';
import { hashArguments } from '../../../base/canonicalJson';
import type { Workspace, WorkspaceRegistry } from '../../../kernel/workspaces';
import type { PlannedFile, PlannedPatch } from './plan';

/** The patch transaction's contract: what a request, a result, an intent and a restore are (PatchService). */

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
   * any of its operations (src/features/review/common). Absent: nothing is kept and checkpoints cannot be restored.
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

export interface PatchStep {
  readonly file: PlannedFile;
  readonly abs: string;
  readonly absTarget?: string;
  /** Folders that do not exist yet and the write will create (deepest first): removed again by a restore. */
  readonly newFolders: readonly string[];
  /** A delete or move of a symbolic link: the link's target text, so a restore puts the link back, not a copy. */
  readonly linkTarget?: string;
}
