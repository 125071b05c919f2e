import * as vscode from 'vscode';
import type { Disposable } from '../base/disposable';
import type { FolderInfo, WorkspaceSource } from '../kernel/workspaceSource';
import { settings } from '../kernel/vscode/settings';

/** The window's folders, trust and per-folder settings, as the core's WorkspaceSource. */
export class VsCodeWorkspaceSource implements WorkspaceSource {
  folders(): readonly FolderInfo[] {
    return (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === 'file')
      .map((f) => {
        const preferredId = settings.workspaceId(f);
        return { root: f.uri.fsPath, name: f.name, profile: settings.profile(f), ...(preferredId ? { preferredId } : {}) };
      });
  }

  isTrusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  onDidChange(listener: () => void): Disposable {
    const subs = [
      vscode.workspace.onDidChangeWorkspaceFolders(() => listener()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => listener()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (settings.affects(e, 'profile') || settings.affects(e, 'workspaceId')) listener();
      }),
    ];
    return { dispose: () => subs.forEach((s) => s.dispose()) };
  }
}
