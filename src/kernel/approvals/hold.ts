import type { Disposable } from '../../base/disposable';
import type { ReviewComment } from './reviewComments';
import type { Caller } from '../identity';
/**
 * Approval holds: a mutating request (of a tool whose operation can be held: apply_patch, exec_command) paused for the reviewer's decision. A hold is
 * a plain value: the original arguments, what they were planned into, and where the decision stands. The
 * approvals service (approvalService.ts) owns the state machine; the editor shows holds and reports decisions.
 *
 *   pending ──grant──▶ granted ──resume──▶ resuming ──▶ consumed (terminal result stored)
 *      │                                       └──(interrupted)──▶ ambiguous
 *      ├──deny──▶ denied
 *      ├──request changes (line comments)──▶ denied, with comments
 *      └──a bound file changed──▶ stale
 */

export type HoldState = 'pending' | 'granted' | 'denied' | 'stale' | 'resuming' | 'consumed' | 'ambiguous';

/** Why the request was held: the operator asks for every one (`confirm`), it touches a sensitive path, or the agent asked (`explicit`). */
export type HoldReason = 'confirm' | 'sensitive' | 'explicit';

/** Who decided: the person in VS Code (panel or diff editor) or the MCP caller (only when the operator allows it). */
export type Decider = 'reviewer' | 'agent';

export type HoldFileKind = 'add' | 'update' | 'delete' | 'move';

/** One file of a held patch, as bound and shown. */
export interface HoldFile {
  readonly path: string;
  readonly kind: HoldFileKind;
  readonly move_to?: string;
  /** Version on disk when the hold was made (update, move, delete); the hold is stale once it differs. */
  readonly before_version?: string;
  /** Version of the agent's proposal (add, update, move). */
  readonly proposed_version?: string;
  /** Lines added and removed by the proposal. */
  readonly added: number;
  readonly removed: number;
  /** The path (or move destination) is one an agent could escalate through (.vscode/, .git/, ...). */
  readonly sensitive: boolean;
}

/** A held command, shown in full before anything runs. */
export interface HoldCommand {
  readonly argv: readonly string[];
  /** Workspace-relative working directory ('' for the root). */
  readonly cwd: string;
  readonly tty: boolean;
  readonly occupancy: 'exclusive' | 'shared';
  /** Operator environment changes applied to the child: a string sets, null removes. */
  readonly env_changes: Readonly<Record<string, string | null>>;
}

/** What the editor shows of a hold, and what is persisted. */
export interface HoldView {
  readonly approval_id: string;
  /** The held tool (a registered operation that can be held). */
  readonly tool: string;
  readonly workspace_id: string;
  readonly state: HoldState;
  readonly reason: HoldReason;
  readonly created_at: string;
  readonly decided_at?: string;
  readonly decided_by?: Decider;
  /** The agent (its name) that asked for the hold, when it connected with its own credential. */
  readonly requested_by_agent?: string;
  /** The agent (its name) that decided, when `decided_by` is "agent" and it had an agent credential. */
  readonly decided_by_agent?: string;
  /** The reviewer's note on a decision (deny or grant). */
  readonly note?: string;
  /** Why a hold went stale (which file changed). */
  readonly stale_reason?: string;
  /** apply_patch holds. */
  readonly files?: readonly HoldFile[];
  /** exec_command holds. */
  readonly command?: HoldCommand;
  /** Paths of this hold that are sensitive (also flagged per file). */
  readonly sensitive_paths: readonly string[];
  /** The agent's operation_key (apply_patch). */
  readonly operation_key?: string;
  /** The reviewer's line comments of a Request Changes (a denial that asks for changes; nothing was written). */
  readonly comments?: readonly ReviewComment[];
}

/**
 * Whether a hold has files to review in a diff: its operation's intent carried files (a patch's does; a command's
 * carries a command). The shape decides, never the tool's name.
 */
export function hasReviewFiles<H extends HoldView>(hold: H | undefined): hold is H & { readonly files: readonly HoldFile[] } {
  return hold !== undefined && hold.files !== undefined;
}

/**
 * One file of a held patch with content, for the diff editor: the bytes on disk now (left) against the
 * proposal (right). `reviewed` is what the reviewer made of the proposal, when it differs.
 */
export interface ProposalFile {
  readonly path: string;
  readonly kind: HoldFileKind;
  readonly move_to?: string;
  /** On-disk bytes when the hold was made; undefined for an added file. */
  readonly before?: Uint8Array;
  /** The agent's proposed bytes; undefined for a deleted file. */
  readonly proposed?: Uint8Array;
  /** The reviewer's edit of the proposal (undefined: unedited). */
  readonly reviewed?: Uint8Array;
}

/** What the editor (panel, diff review, status bar) may ask of the approvals service. */
export interface Approvals {
  /** Every hold kept, newest first. */
  list(): readonly HoldView[];
  get(approvalId: string): HoldView | undefined;
  /** Pending holds, newest first. */
  pending(): readonly HoldView[];
  /**
   * Content of a pending (or stale) patch hold, per file, for the diff editor. Throws ToolError
   * APPROVAL_CONFLICT for a command hold or a hold that is no longer pending or stale.
   */
  proposal(approvalId: string): Promise<readonly ProposalFile[]>;
  /**
   * The reviewer edited the proposal of `path` to `bytes`. `path` is the section's path: the file an add or an update
   * writes, and for a move its source (the bytes land at the destination). Throws ToolError
   * APPROVAL_CONFLICT when the hold is not pending, INVALID_ARGUMENTS when the path is not an editable file of it.
   * Setting bytes equal to the agent's proposal clears the edit.
   */
  setReviewed(approvalId: string, path: string, bytes: Uint8Array): void;
  /**
   * Grants or denies a pending hold. A grant re-checks the bound file versions first: a changed file makes the
   * hold stale and the grant fails with VERSION_CONFLICT. A hold not pending → APPROVAL_CONFLICT. The agent
   * (`by: 'agent'`) may resolve only when the operator allows it, else PERMISSION_DENIED.
   */
  resolve(approvalId: string, decision: 'grant' | 'deny', options: { by: Decider; note?: string; caller?: Caller }): Promise<HoldView>;
  /**
   * The reviewer asks for changes on a pending patch hold with line comments (checked by checkReviewComments, each
   * on a file of the hold): the hold ends as denied, nothing is written, and a resume answers `changes_requested`
   * with the comments. Not pending → APPROVAL_CONFLICT (stale → VERSION_CONFLICT); a bad comment → INVALID_ARGUMENTS.
   */
  requestChanges(approvalId: string, comments: readonly ReviewComment[], options?: { note?: string }): Promise<HoldView>;
  /** Re-hashes the files bound by pending holds (all, or one) and marks changed ones stale. */
  revalidate(approvalId?: string): Promise<void>;
  /** Fires with the new view whenever a hold is created or changes state (or its reviewed content changes). */
  onDidChange(listener: (hold: HoldView) => void): Disposable;
}
