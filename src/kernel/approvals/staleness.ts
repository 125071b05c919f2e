import { describeError } from '../../base/describeError';
import type { HoldFile } from './hold';
import { heldWork } from './holdWork';

/** The version of a file now; `workId`: the work the held request names (its worktree, when it has one). */
export type DiskProbe = (workspaceId: string, relPath: string, workId?: string) => Promise<string | undefined | 'directory'>;

/**
 * Which bound file of a hold no longer matches the disk, or undefined when every one still does: a file it adds
 * that exists now, a file it changes whose version moved, a move's destination that appeared.
 */
export async function staleReason(
  h: { readonly workspace_id: string; readonly files?: readonly HoldFile[]; readonly request: Readonly<Record<string, unknown>> },
  probe: DiskProbe,
): Promise<string | undefined> {
  const workId = heldWork(h.request);
  for (const f of h.files ?? []) {
    let now: string | undefined | 'directory';
    try {
      now = await probe(h.workspace_id, f.path, workId);
    } catch (err) {
      return `${f.path} could not be checked (${describeError(err)})`;
    }
    if (f.kind === 'add') {
      if (now !== undefined) return `${f.path} was created on disk after the proposal was made`;
    } else if (now !== f.before_version) {
      return now === undefined ? `${f.path} was deleted on disk` : `${f.path} changed on disk`;
    }
    if (f.kind === 'move' && f.move_to !== undefined) {
      const dest = await probe(h.workspace_id, f.move_to, workId).catch(() => 'unreadable');
      if (dest !== undefined) return `${f.move_to} appeared on disk after the proposal was made`;
    }
  }
  return undefined;
}
