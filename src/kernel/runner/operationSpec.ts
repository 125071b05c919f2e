import type { ApprovalPolicy, StoredHold } from '../approvals/approvalService';
import type { HoldContext } from '../approvals/holdPolicy';
import type { HoldCommand, HoldFile, HoldReason, ProposalFile } from '../approvals/hold';
import type { AgentRef } from '../identity';
import type { ToolKind } from '../toolKinds';
import type { Workspace } from '../workspaces';

// What a mutating tool declares for the operation runner (OperationRunner): its spec, its prepared operation and
// the intent a hold binds.

/** What a hold of this operation binds and shows: the intent as a value. */
export interface IntentValue {
  readonly request_hash: string;
  /** apply_patch: the files with their before-versions and the planned bytes. */
  readonly files?: readonly HoldFile[];
  readonly proposal?: readonly ProposalFile[];
  /** exec_command: argv, cwd, tty, occupancy, environment changes. */
  readonly command?: HoldCommand;
  readonly sensitive_paths: readonly string[];
  readonly operation_key?: string;
}

/** The reviewer's part in a commit: edited bytes by section path, and the note of the grant. */
export interface Review {
  readonly approval_id: string;
  readonly reviewed: ReadonlyMap<string, Uint8Array>;
  readonly note?: string;
}

/** A prepared operation: validated and planned, nothing written or started yet. */
export interface PreparedOperation<R> {
  readonly workspace: Workspace;
  readonly title: string;
  readonly intent: IntentValue;
  /** May be held for the reviewer (false for a preview: it writes nothing). */
  readonly holdable: boolean;
  /** Needs the workspace free of exclusive processes (WORKSPACE_BUSY otherwise). */
  readonly occupies: boolean;
  /** A preview's content, kept for the panel's "Open Preview". */
  readonly preview?: readonly ProposalFile[];
  /** The work (steering) the call belongs to, reported on its events and recorded with it. */
  readonly work_id?: string;
  commit(review?: Review): Promise<R>;
  /** Releases what prepare took (a patch holds its workspace's turn from prepare to commit). */
  release(): void;
}

/** `done`: the request needs no run (an idempotent replay of a stored result). */
export type PrepareOutcome<R> = { readonly done: R } | PreparedOperation<R>;

/** How a hold of an operation reads to the agent: what the developer reviews, and what did not happen yet. */
export interface HoldDescription {
  /** "every patch", "every command": the end of "the developer reviews …". */
  readonly reviews: string;
  /** "written", "started": the end of "nothing was …". */
  readonly nothing: string;
}

/** Where the after-commit work of an operation runs: the workspace of the call and the session it answers. */
export interface AfterCommitContext {
  readonly workspace_id: string;
  readonly session?: string;
  /** Set when the operation ran in that work's own worktree (not in the workspace folder). */
  readonly work_id?: string;
}

/**
 * The mutating half of a tool, declared with the tool (its definition's `operation`): the runner, not the tool,
 * applies policy between prepare and commit. Everything the runner does differently per operation is here, so it
 * never compares tool names: a tool whose spec has `hold` can be held, approved and resumed.
 */
export interface OperationSpec<A, R> {
  /** The tool's name: what events, holds and the ledger call it. */
  readonly tool: string;
  /** The workspace the call acts in, for the profile check before prepare (default: `args.workspace_id`). */
  workspaceOf?(args: A): string;
  prepare(args: A, signal: AbortSignal): Promise<PrepareOutcome<R>>;
  /** Present for an operation that can be held for the developer's approval. */
  readonly hold?: {
    /** Why the approval settings hold this prepared intent now, or undefined: it runs (see approvals/holdPolicy.ts). */
    reason(intent: IntentValue, policy: ApprovalPolicy, context: HoldContext): HoldReason | undefined;
    readonly description: HoldDescription;
    /** Plans a hold's content again for the diff editor (after a reload); absent: the hold has no content. */
    replan?(hold: StoredHold): Promise<readonly ProposalFile[]>;
  };
  /**
   * Work after a commit (and after an idempotent replay), for a direct call and a resumed hold alike, once the
   * operation has released what it took and its outcome is stored: its result never carries what this adds.
   */
  afterCommit?(result: R, context: AfterCommitContext): Promise<R>;
}

/** An operation as the runner keeps it: its spec, the kind of its tool, and the tool's input shape. */
export interface RegisteredOperation {
  readonly kind: ToolKind;
  /** The tool's input (a zod shape): approval_create checks a request against it. */
  readonly input: Readonly<Record<string, unknown>>;
  readonly spec: OperationSpec<Record<string, unknown>, unknown>;
}

/** What a call brings besides its arguments. */
export interface RunContext {
  readonly progress?: (done: number, total?: number, message?: string) => void;
  /** The protocol session that called, handed to the after-commit work. */
  readonly session?: string;
  /** The agent that called (with its own credential): a hold it causes counts it among the hold's authors. */
  readonly agent?: AgentRef;
}
