import type { StoredHold } from '../approvals/approvalService';
import type { HoldView } from '../approvals/hold';
import { ToolError } from '../../base/errors';
import type { HoldDescription, IntentValue, PreparedOperation } from './operationSpec';

// The runner's policy answers: what a hold tells the agent, what a resumed hold returns, whether a granted hold
// still binds what it did, and whether a process occupies the workspace.

/** Errors after which a granted hold may be resumed again later: nothing ran, and the cause may pass. */
export const RETRYABLE: ReadonlySet<string> = new Set(['WORKSPACE_BUSY', 'READ_ONLY', 'EXEC_DISABLED', 'WORKSPACE_NOT_FOUND', 'TIMEOUT', 'FILE_DIRTY_IN_EDITOR']);
/** Errors of a fresh prepare that mean the files moved on since the proposal: the hold is stale. */
export const STALE: ReadonlySet<string> = new Set(['VERSION_CONFLICT', 'FILE_EXISTS', 'NOT_FOUND', 'IS_DIRECTORY', 'PATCH_CONTEXT_NOT_FOUND', 'PATCH_AMBIGUOUS']);

export function approvalRequired(hold: HoldView, description: HoldDescription): ToolError {
  const why = hold.reason === 'sensitive' ? `it touches ${hold.sensitive_paths.join(', ')}, which the developer reviews` : `the developer reviews ${description.reviews}`;
  return new ToolError('APPROVAL_REQUIRED', `${hold.tool} is held for the developer's approval (${why}); nothing was ${description.nothing}.`, {
    hint: `Call operation_resume { "approval_id": "${hold.approval_id}", "wait_ms": 55000 } to wait for the decision (repeat while it answers APPROVAL_CONFLICT). Extra arguments never grant anything.`,
    details: { approval_id: hold.approval_id, reason: hold.reason, sensitive_paths: hold.sensitive_paths },
  });
}

export function storedOutcome(h: StoredHold): unknown {
  if (h.error) throw new ToolError(h.error.code as never, h.error.message, { ...(h.error.hint !== undefined ? { hint: h.error.hint } : {}), ...(h.error.details ? { details: h.error.details } : {}) });
  return h.result;
}

/** How a fresh plan differs from what the hold bound, or undefined when it matches. */
export function bindingDrift(h: StoredHold, intent: IntentValue): string | undefined {
  if (intent.request_hash !== h.request_hash) return 'the request no longer plans to the same operation';
  for (const f of h.files ?? []) {
    const now = intent.files?.find((x) => x.path === f.path);
    if (!now || now.before_version !== f.before_version) return `${f.path} changed on disk`;
    if (now.proposed_version !== f.proposed_version) return `${f.path} would now be patched differently`;
  }
  return undefined;
}

/** Adds the grant's note to a resumed operation's result. */
export function withNote(result: unknown, note: string | undefined): unknown {
  if (note === undefined || result === null || typeof result !== 'object') return result;
  return { ...(result as Record<string, unknown>), reviewer_note: note };
}

/**
 * A hold the reviewer answered with Request Changes: a result, not an error (the review is the answer the agent
 * waited for), stable on every repeat since the hold is finished and keeps its comments. Nothing was written.
 */
export function changesRequested(h: StoredHold): Record<string, unknown> {
  return {
    status: 'changes_requested',
    comments: h.comments ?? [],
    ...(h.note !== undefined ? { reviewer_note: h.note } : {}),
  };
}

/** The process occupying a workspace folder, or (with workId) that work's worktree of it. */
export type Occupant = (workspaceId: string, workId?: string) => { process_id: string; command: readonly string[] } | undefined;

/** WORKSPACE_BUSY when the operation needs its workspace (or worktree) free and a process occupies it. */
export function checkOccupancy(occupant: Occupant, prepared: PreparedOperation<unknown>): void {
  if (!prepared.occupies) return;
  const found = occupant(prepared.workspace.id, prepared.workspace.work_id);
  if (!found) return;
  const ws = prepared.workspace.id;
  throw new ToolError('WORKSPACE_BUSY', `Workspace ${ws} is busy: process ${found.process_id} (${found.command.join(' ')}) is running.`, {
    hint: 'Wait for it to exit (process_status / read_process with wait_ms) or terminate it, then try again. Previews (check_only) still work.',
    details: { workspace_id: ws, process_id: found.process_id, command: [...found.command], occupant: { process_id: found.process_id, command: [...found.command] } },
  });
}
