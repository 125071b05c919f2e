import type { Workspace } from '../workspaces';

/** The work a held request names (its `work_id`), or undefined for a hold outside any work or a malformed one. */
export function heldWork(request: unknown): string | undefined {
  const workId = (request as { work_id?: unknown } | null | undefined)?.work_id;
  return typeof workId === 'string' ? workId : undefined;
}

/**
 * The folder a hold writes in: its work's worktree of the folder when the work has one, else the folder itself (the
 * one resolution every tool shares, WorkspaceRegistry.get). Throws as that does (an unknown folder or work).
 */
export function holdWorkspace(workspaces: { get(id: string, workId?: string): Workspace }, hold: { readonly workspace_id: string; readonly request: unknown }): Workspace {
  return workspaces.get(hold.workspace_id, heldWork(hold.request));
}
