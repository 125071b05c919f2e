import { DisposableBase } from '../base/disposable';
import { ToolError } from '../base/errors';
import type { FolderInfo, Profile, WorkspaceSource } from './workspaceSource';

/** One folder of the window, with its agent-facing id and what agents may do there right now. */
export interface Workspace {
  readonly id: string;
  readonly name: string;
  readonly root: string;
  readonly trusted: boolean;
  /** Effective profile: `read-only` whenever the window is untrusted. */
  readonly profile: Profile;
  readonly canWrite: boolean;
  readonly canExec: boolean;
  /**
   * Set when this is a work's own copy of the folder (a git worktree, see WorkRoots): `root` is then the worktree's
   * folder, and the work's processes occupy it apart from the folder itself and other works.
   */
  readonly work_id?: string;
  /** Set when the call names a frozen work (any isolation): writes and commands are refused (WORK_FROZEN). */
  readonly frozen_work?: string;
}

/**
 * Where a work edits a workspace folder: implemented by the steering service. The one resolution every tool goes
 * through (WorkspaceRegistry.get with a work_id), so no tool decides by itself where a work's files are.
 */
export interface WorkRoots {
  /**
   * The worktree folder standing for `workspaceId` in work `workId`, or undefined when the work edits the folder
   * itself. Throws WORK_NOT_FOUND for an unknown work, INVALID_ARGUMENTS for a workspace the work cannot act in.
   */
  rootFor(workId: string, workspaceId: string): string | undefined;
  /** The checkpoint digest of a frozen work, undefined when it is not frozen. */
  frozenDigest?(workId: string): string | undefined;
}

/** What occupies apart: a workspace folder, or one work's worktree of it. */
export function occupancyScope(ws: Pick<Workspace, 'id' | 'work_id'>): string {
  return ws.work_id === undefined ? ws.id : `${ws.id}\u0000${ws.work_id}`;
}

function slug(name: string): string {
  const s = name.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return s === '' ? 'workspace' : s;
}

/** Assigns unique ids to folders (preferred id, else the folder name) in folder order. */
export function assignIds(folders: readonly FolderInfo[]): string[] {
  const used = new Set<string>();
  return folders.map((f) => {
    const base = f.preferredId && f.preferredId.trim() !== '' ? slug(f.preferredId) : slug(f.name);
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}-${n}`;
    used.add(id);
    return id;
  });
}

/** The window's workspaces, recomputed whenever folders, trust or settings change. */
export class WorkspaceRegistry extends DisposableBase {
  private cache: Workspace[] | undefined;
  private workRoots: WorkRoots | undefined;

  constructor(private readonly source: WorkspaceSource) {
    super();
    this.register(source.onDidChange(() => (this.cache = undefined)));
  }

  list(): readonly Workspace[] {
    if (this.cache) return this.cache;
    const folders = this.source.folders();
    const trusted = this.source.isTrusted();
    const ids = assignIds(folders);
    this.cache = folders.map((f, i) => {
      const profile: Profile = trusted ? f.profile : 'read-only';
      return {
        id: ids[i] as string,
        name: f.name,
        root: f.root,
        trusted,
        profile,
        canWrite: profile === 'write' || profile === 'exec',
        canExec: profile === 'exec',
      };
    });
    return this.cache;
  }

  /** Connects the works (steering), once they are loaded: from then on get() resolves a work_id. */
  setWorkRoots(roots: WorkRoots | undefined): void {
    this.workRoots = roots;
  }

  /**
   * The workspace `id`; with `workId` (a tool's work_id), as that work sees it: for a work with its own worktrees,
   * the same workspace with `root` moved to the work's worktree folder (paths stay workspace-relative, and the
   * confinement checks apply to that root), else the folder itself.
   */
  get(id: string, workId?: string): Workspace {
    const ws = this.find(id);
    if (workId === undefined || this.workRoots === undefined) return ws;
    const root = this.workRoots.rootFor(workId, ws.id);
    const frozen = this.workRoots.frozenDigest?.(workId) !== undefined ? { frozen_work: workId } : {};
    return root === undefined ? { ...ws, ...frozen } : { ...ws, root, work_id: workId, ...frozen };
  }

  private find(id: string): Workspace {
    const ws = this.list().find((w) => w.id === id);
    if (!ws) {
      const known = this.list().map((w) => w.id);
      throw new ToolError('WORKSPACE_NOT_FOUND', `No workspace with id ${JSON.stringify(id)} is open in this window.`, {
        hint: known.length ? `Known ids: ${known.join(', ')}. Call workspace_info without an id to list them.` : 'No folder is open in this window.',
        details: { workspace_id: id, known },
      });
    }
    return ws;
  }

  /**
   * Throws READ_ONLY / EXEC_DISABLED when the workspace's profile or trust forbids the action, WORK_FROZEN when it
   * writes or runs a command in a frozen work: the one check every writing tool goes through.
   */
  require(ws: Workspace, need: 'read' | 'write' | 'exec'): void {
    if (need !== 'read' && ws.frozen_work !== undefined) {
      throw new ToolError('WORK_FROZEN', `Work ${ws.frozen_work} is frozen for review: it takes no ${need === 'write' ? 'edit' : 'command'} until it is reopened.`, {
        hint: 'Reading still works. To change the work, reopen it (work_review action "reopen"); its reviews then go stale at the first change.',
        details: { reason: 'frozen', work_id: ws.frozen_work, workspace_id: ws.id },
      });
    }
    if (need === 'write' && !ws.canWrite) {
      throw new ToolError('READ_ONLY', ws.trusted ? `Workspace ${ws.id} is read-only (profile ${ws.profile}).` : `Workspace ${ws.id} is in Restricted Mode: agents may only read.`, {
        hint: ws.trusted ? 'Ask the developer to set codespace.profile to "write" or "exec".' : 'Ask the developer to trust the workspace.',
        details: { workspace_id: ws.id, profile: ws.profile, trusted: ws.trusted },
      });
    }
    if (need === 'exec' && !ws.canExec) {
      throw new ToolError('EXEC_DISABLED', ws.trusted ? `Workspace ${ws.id} does not allow commands (profile ${ws.profile}).` : `Workspace ${ws.id} is in Restricted Mode: no process may start.`, {
        hint: ws.trusted ? 'Ask the developer to set codespace.profile to "exec".' : 'Ask the developer to trust the workspace.',
        details: { workspace_id: ws.id, profile: ws.profile, trusted: ws.trusted },
      });
    }
  }
}
