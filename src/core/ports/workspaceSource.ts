import type { Disposable } from '../../base/disposable';

export type Profile = 'read-only' | 'write' | 'exec';
export type ApprovalsMode = 'off' | 'confirm';

/** A folder of the editor's workspace as the host sees it. */
export interface FolderInfo {
  /** Absolute path of the folder root. */
  readonly root: string;
  /** Display name (VS Code's folder name). */
  readonly name: string;
  /** The folder's `codespace.workspaceId` setting, if any. */
  readonly preferredId?: string;
  /** Effective profile, already filtered for trust (settings from an untrusted workspace are ignored). */
  readonly profile: Profile;
}

/** Where the core learns which folders are open and whether the workspace is trusted. */
export interface WorkspaceSource {
  folders(): readonly FolderInfo[];
  isTrusted(): boolean;
  onDidChange(listener: () => void): Disposable;
}

/** A fixed set of folders; test double and the standalone/bench host. */
export class InMemoryWorkspaceSource implements WorkspaceSource {
  private listeners = new Set<() => void>();
  constructor(private list: FolderInfo[], private trusted = true) {}
  folders(): readonly FolderInfo[] {
    return this.list;
  }
  isTrusted(): boolean {
    return this.trusted;
  }
  set(list: FolderInfo[], trusted = this.trusted): void {
    this.list = list;
    this.trusted = trusted;
    for (const l of [...this.listeners]) l();
  }
  onDidChange(listener: () => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}
