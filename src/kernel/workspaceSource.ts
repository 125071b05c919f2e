import type { Disposable } from '../base/disposable';
import { Emitter } from '../base/emitter';

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
  /** Every listener hears of a change; one that throws does not stop the others and its error is rethrown later, not lost. */
  private readonly changes = new Emitter<void>((err) =>
    queueMicrotask(() => {
      throw err;
    }),
  );
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
    this.changes.emit();
  }
  onDidChange(listener: () => void): Disposable {
    return this.changes.on(listener);
  }
}
