import type { ReviewMode } from '../../../kernel/approvals/holdPolicy';
import type { PatchService } from '../../patches';
import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import type { Hunk } from './afterWriteHunks';
import type { SideInfo } from './reviewedContent';

// The records and views of the review after the write (afterWriteReviews.ts).

/**
 * One file of a review: the accepted text (null: no file; '' with `base_binary` when the accepted content is not
 * text), its mode, the version marked reviewed, the sessions that wrote it.
 */
export interface ReviewFileState {
  readonly path: string;
  readonly base: string | null;
  /** The accepted content when it is not text: its bytes, base64 (then `base` is ''). */
  readonly base_binary?: string;
  /** The accepted mode's permission bits (absent: not known, or no file). */
  readonly base_mode?: number;
  readonly reviewed_version?: string;
  readonly sessions: readonly string[];
}

export interface ReviewState {
  /** `work:<work id>` or `workspace:<workspace id>`. */
  readonly id: string;
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly files: readonly ReviewFileState[];
}

/** What the agent is told of an undone change, on its next answer (`review_update`). */
export interface ReviewUndone {
  readonly action: 'undone';
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly path: string;
  /** A whole-file undo: `binary` (the file's bytes, not text, put back as they were) or `mode` (its mode put back). Absent: a hunk of text. */
  readonly change?: 'binary' | 'mode';
  /** The lines of the agent's version the undo replaced (1-based, inclusive; end_line = start_line − 1: none, the text went back before start_line). Absent on a whole-file undo. */
  readonly range?: { readonly start_line: number; readonly end_line: number };
  /** Those lines' text (what was undone). Absent on a whole-file undo. */
  readonly undone?: string;
  /** The text put back in their place (what the file had before). Absent on a whole-file undo. */
  readonly restored?: string;
  /** A binary undo: the size and sha256 of the content undone (null: no file) and of the content put back (null: the file was deleted). */
  readonly content?: { readonly undone: ContentInfo | null; readonly restored: ContentInfo | null };
  /** The mode undone and the mode put back (`100755` → `100644`), when the undo changed the mode. */
  readonly mode?: { readonly undone: string; readonly restored: string };
  /** The file's version after the undo (absent: the undo deleted the file the agent added). */
  readonly version?: string;
  /** The ledger record of the undo. */
  readonly operation_id: string;
}

/** The size, sha256 and textness of a side's bytes. */
export type ContentInfo = SideInfo;

/** A file of a review as it stands now. */
export interface ReviewFileNow {
  readonly path: string;
  /** The accepted text (null: no file; '' when the file is binary). */
  readonly base: string | null;
  /** The file's text now (null: no file; '' when the file is binary). */
  readonly current: string | null;
  /** The version now (absent: no file). */
  readonly version?: string;
  /** The text hunks (none for a binary file). */
  readonly hunks: readonly Hunk[];
  /** Either side is not text: the file is reviewed whole, and `sides` says what each side holds. */
  readonly binary: boolean;
  /** Each side's size and sha256 (null: no file). */
  readonly sides: { readonly base: ContentInfo | null; readonly current: ContentInfo | null };
  /** The accepted mode and the mode now (git style, `100644`), when both are known and differ. */
  readonly mode?: { readonly base: string; readonly current: string };
  /** The change Keep and Undo act on when not a hunk: `binary` (the bytes differ), `mode` (no hunk left, the mode differs). */
  readonly whole?: 'binary' | 'mode';
  /** Something is left to review: a hunk, binary bytes that differ, or a mode change. */
  readonly changed: boolean;
  /** Marked reviewed at exactly this content and mode. */
  readonly reviewed: boolean;
}

export interface AfterWriteSnapshot {
  readonly reviews: readonly ReviewState[];
  readonly notices: readonly { readonly sessions: readonly string[]; readonly notice: ReviewUndone }[];
}

export interface AfterWriteOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly patches: PatchService;
  readonly mode: (workspaceId: string) => ReviewMode;
  readonly logger: Logger;
  /**
   * A file's content in a work's baseline (captured at work_open): its bytes, null when the baseline has no such
   * file, undefined when the work has no baseline. Absent: every file starts from its content before the first write.
   */
  readonly baseline?: (workspaceId: string, workId: string, path: string) => Promise<Uint8Array | null | undefined>;
}

/** Largest file a review keeps the accepted text of (a larger one is not followed). */
export const MAX_REVIEW_FILE_BYTES = 4 * 1024 * 1024;
