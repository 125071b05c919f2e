import type { ReviewComment } from '../../../kernel/approvals/reviewComments';
import type { WorktreeRetirement } from './workTree';

/**
 * Steering: the developer talks to a working agent. An agent opens a *work* (one logical task in one workspace);
 * the developer writes *instructions* for it (drafts, then queued); the agent claims the oldest queued one,
 * acts on it and completes it (done or blocked, with a note). Works and instructions are durable (the shared
 * journal) and survive window reloads.
 *
 * Queued text is data: nothing in an instruction approves a hold, changes a setting or widens a permission. The
 * developer-side port below has no such operation, and the agent-side tools only read and complete instructions.
 */

export type InstructionStatus = 'draft' | 'queued' | 'claimed' | 'done' | 'blocked';

export interface WorkView {
  readonly id: string;
  readonly workspace_id: string;
  readonly title: string;
  readonly status: 'open' | 'finished';
  readonly opened_at: string;
  readonly finished_at?: string;
  /** When the developer discarded it (its worktrees removed, uncommitted files dropped). */
  readonly discarded_at?: string;
  /** The MCP session that opened the work (informational: sessions end with a reload, works do not). */
  readonly session?: string;
  /** The agent that opened the work, when it connected with its own credential (src/kernel/identity.ts). */
  readonly agent?: { readonly id: string; readonly name: string };
  /** opaque baseline captured at work_open, see WorkBaseline */
  readonly baseline?: string;
  /** A work with isolation "worktree": its worktree of each git folder, on its task branch (removed_at: gone since work_finish). */
  readonly worktrees?: readonly { readonly workspace_id: string; readonly root: string; readonly top: string; readonly branch: string; readonly base: string; readonly removed_at?: string }[];
  /** Set while the work is frozen for review: the checkpoint's digest and when it was taken. */
  readonly frozen?: { readonly digest: string; readonly at: string };
  /** The latest review, bound to the digest it reviewed. */
  readonly review?: { readonly digest: string; readonly approved: boolean; readonly by: string; readonly at: string; readonly findings?: string; readonly session?: string; readonly agent_id?: string; readonly agent?: string };
  /** The reviewed commit of a frozen digest, per workspace. */
  readonly committed?: { readonly digest: string; readonly commits: readonly { readonly workspace_id: string; readonly commit: string }[] };
  /** The delivery of the reviewed commit, per repository: the task branch pushed and its pull request (or compare URL). */
  readonly delivered?: readonly { readonly workspace_id: string; readonly remote: string; readonly branch: string; readonly commit: string; readonly at: string; readonly pr_url?: string; readonly compare_url?: string; readonly pr_note?: string }[];
}

/** Where a work edits: the workspace folders themselves, or its own git worktrees. */
export type WorkIsolation = 'shared' | 'worktree';

export interface InstructionView {
  readonly id: string;
  readonly work_id: string;
  readonly text: string;
  readonly status: InstructionStatus;
  readonly created_at: string;
  readonly queued_at?: string;
  readonly claimed_at?: string;
  readonly completed_at?: string;
  /** The agent's note at steer_complete. */
  readonly note?: string;
  /** Starts at 1; every change of the instruction adds one (optimistic concurrency for editDraft). */
  readonly revision: number;
  /**
   * `review_comments`: the developer's line comments from a review (in `comments`), not text the developer typed.
   * `rewind`: the developer rewound the work's files to a checkpoint or redid a rewind (in `rewind`).
   */
  readonly kind?: 'review_comments' | 'rewind';
  readonly comments?: readonly ReviewComment[];
  readonly rewind?: RewindNotice;
}

/** What a `rewind` instruction tells the agent: the developer put the work's files back to one of its checkpoints. */
export interface RewindNotice {
  /** `rewind`: back to a checkpoint; `redo`: the state before the last rewind again. */
  readonly action: 'rewind' | 'redo';
  /** The checkpoint the files are at now: how many of the work's operations they follow (0: before the first). */
  readonly checkpoint: number;
  /** The operation of that checkpoint (absent for 0). */
  readonly operation_id?: string;
  /** Every file written, with its version now (null: no file there). */
  readonly files: readonly { readonly path: string; readonly version: string | null }[];
}

export interface SteeringCounts {
  readonly draft: number;
  readonly queued: number;
  readonly claimed: number;
  readonly done: number;
  readonly blocked: number;
}

/** What the developer (panel, command, /inbox) may do. Never approves, never changes settings. */
export interface Steering {
  works(filter?: { status?: 'open' | 'finished' }): WorkView[];
  work(id: string): WorkView | undefined;
  instructions(workId: string): InstructionView[];
  counts(workId: string): SteeringCounts;
  createDraft(workId: string, text: string, opts?: { queue?: boolean; idempotencyKey?: string }): Promise<InstructionView>;
  editDraft(instructionId: string, text: string, expectedRevision?: number): Promise<InstructionView>;
  deleteDraft(instructionId: string): Promise<void>;
  queue(instructionId: string): Promise<InstructionView>;
  /**
   * Queues the developer's line comments from a review of the work as one instruction (`kind: review_comments`), its
   * text a plain summary of them. The comments go through checkReviewComments (INVALID_ARGUMENTS otherwise).
   */
  queueReviewComments(workId: string, comments: readonly ReviewComment[]): Promise<InstructionView>;
  /** Tells the work's agent that its files were rewound (one queued instruction, `kind: rewind`, its text a summary). */
  queueRewindNotice(workId: string, notice: RewindNotice): Promise<InstructionView>;
  /** Puts a claimed (its agent went away) or blocked instruction back in the queue, behind the ones queued now. */
  requeue(instructionId: string): Promise<InstructionView>;
  /** Fires after every change (work opened/finished, instruction created/edited/deleted/queued/claimed/completed). */
  onDidChange(listener: (e: SteeringChange) => void): { dispose(): void };
}

export type SteeringChange =
  | { kind: 'work'; work: WorkView }
  | { kind: 'instruction'; instruction: InstructionView }
  | { kind: 'instruction_deleted'; id: string; work_id: string };

/** Port (implemented by src/features/works/node/gitWorkBaseline.ts) to capture the workspace content at work_open, so a work review can diff from it. */
export interface WorkBaseline {
  /** Captures the current content of the workspace folder; returns an opaque ref (stored on the work), or undefined when it cannot (then the review falls back to the patch ledger's before-versions). Must not change the user's git index, HEAD or working tree. */
  capture(workspaceRoot: string): Promise<string | undefined>;
}

/** What a work did: the operations recorded with its work_id. */
export interface WorkOperations {
  /** operation_key of every patch (apply or preview) recorded with the work, oldest first. */
  readonly patches: readonly string[];
  /** process_id of every command recorded with the work, oldest first. */
  readonly processes: readonly string[];
}

/** The answer of work_finish. */
export type FinishOutcome =
  | { readonly closed: true; readonly work: WorkView; readonly worktrees?: readonly WorktreeRetirement[] }
  | { readonly closed: false; readonly reason: 'pending_user_input'; readonly work: WorkView; readonly counts: SteeringCounts };

/** Attached to every tool result of a session with an open work: a hint, never the text. */
export interface Coordination {
  readonly work_id: string;
  readonly queued_instructions: number;
}

/** Most UTF-8 bytes of one instruction's text. */
export const MAX_INSTRUCTION_BYTES = 16 * 1024;
/** Most UTF-8 bytes of the agent's note at steer_complete. */
export const MAX_NOTE_BYTES = 4 * 1024;
/** Most characters of a work's title. */
export const MAX_TITLE_CHARS = 200;
/** Most instructions one work keeps (every status); a create beyond it is refused. */
export const MAX_INSTRUCTIONS_PER_WORK = 2000;
