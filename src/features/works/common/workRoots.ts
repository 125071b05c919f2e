import { InvalidArgumentsError } from '../../../base/errors';
import type { WorkRecord } from '../../../kernel/ledger/schemas';

/**
 * Where work `w` edits workspace `workspaceId`. A work with worktrees acts in every folder it has a worktree of
 * (its worktree's folder); a shared work in its own workspace only (the folder itself: undefined). Anything else is
 * INVALID_ARGUMENTS on work_id, saying why.
 */
export function workRootFor(w: WorkRecord, workspaceId: string): string | undefined {
  if (w.worktrees !== undefined) {
    const t = w.worktrees.find((x) => x.workspace_id === workspaceId);
    if (t?.removed_at !== undefined) {
      throw new InvalidArgumentsError(`Work ${w.id} is finished and its worktree of workspace ${JSON.stringify(workspaceId)} was removed.`, {
        field: 'work_id',
        hint: 'Open a new work, or leave work_id out to act in the folder itself.',
        details: { reason: 'worktree_removed', work_id: w.id, workspace_id: workspaceId },
      });
    }
    if (t) return t.root;
    throw new InvalidArgumentsError(`Work ${w.id} has no worktree of workspace ${JSON.stringify(workspaceId)}: that folder was not in a git repository when the work opened.`, {
      field: 'work_id',
      hint: `Its worktrees are of: ${w.worktrees.map((x) => x.workspace_id).join(', ')}. Leave work_id out to act in the folder itself.`,
      details: { reason: 'no_worktree', work_id: w.id, workspace_id: workspaceId, worktrees: w.worktrees.map((x) => x.workspace_id) },
    });
  }
  if (w.workspace_id !== workspaceId) {
    throw new InvalidArgumentsError(`Work ${w.id} is in workspace ${JSON.stringify(w.workspace_id)}, not ${JSON.stringify(workspaceId)}.`, {
      field: 'work_id',
      hint: 'Pass the work_id of a work opened in this workspace, or open one there with work_open.',
      details: { work_id: w.id, workspace_id: w.workspace_id },
    });
  }
  return undefined;
}
