import { DisposableBase } from '../disposable';
import { ToolError } from '../errors';
import type { FolderInfo, Profile, WorkspaceSource } from '../ports/workspaceSource';

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

  get(id: string): Workspace {
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

  /** Throws READ_ONLY / EXEC_DISABLED when the workspace's profile or trust forbids the action. */
  require(ws: Workspace, need: 'read' | 'write' | 'exec'): void {
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
