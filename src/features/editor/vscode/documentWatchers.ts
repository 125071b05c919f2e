import * as vscode from 'vscode';

/** Most files watched at once (one non-recursive watch each, in VS Code's file watcher process). */
export const MAX_WATCHED_DOCUMENTS = 256;

/**
 * Keeps a watch on the file of every document open in the editor, so the editor reloads it when an agent's write
 * changes it on disk.
 *
 * An open, clean document follows the disk only through the file events of VS Code's recursive workspace watcher.
 * On Linux that watcher (@parcel/watcher's inotify backend) can miss a folder that is created and filled at once: it
 * never watches it, and no write inside it ever reaches the editor (parcel-bundler/watcher#243). An agent creates
 * exactly such folders (`*** Add File: src/new/a.ts`), and its next patch of an open file there then leaves the
 * editor, the language servers and everything computed from them (diagnostics, rename) on the old text.
 *
 * A non-recursive watch of the file itself does not depend on that: VS Code serves it with a separate watcher, and its
 * events reach the same text file models (an extension's watch is not correlated to it). The watch is made when the
 * document opens, long before an agent writes it, and dropped when the document closes.
 */
export class DocumentWatchers implements vscode.Disposable {
  private readonly watchers = new Map<string, vscode.Disposable>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.workspace.onDidOpenTextDocument((doc) => this.watch(doc.uri)),
      vscode.workspace.onDidCloseTextDocument((doc) => this.unwatch(doc.uri)),
    ];
    for (const doc of vscode.workspace.textDocuments) this.watch(doc.uri);
  }

  /** Whether this file has a watch (for tests). */
  has(uri: vscode.Uri): boolean {
    return this.watchers.has(uri.toString());
  }

  private watch(uri: vscode.Uri): void {
    const key = uri.toString();
    if (uri.scheme !== 'file' || this.watchers.has(key) || this.watchers.size >= MAX_WATCHED_DOCUMENTS) return;
    // A watch of the file itself (its path as the base): non-recursive, and served as a watch of that one file. (A
    // recursive request inside the workspace is left to the workspace watcher, the one that can miss it; a folder's
    // non-recursive watch filters its events through the watcher excludes in VS Code 1.100 and drops them.)
    const pattern = new vscode.RelativePattern(uri, '*');
    // Change events are not ignored: a watcher that ignores every kind of event may not be started at all.
    this.watchers.set(key, vscode.workspace.createFileSystemWatcher(pattern, true, false, true));
  }

  private unwatch(uri: vscode.Uri): void {
    const key = uri.toString();
    this.watchers.get(key)?.dispose();
    this.watchers.delete(key);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    for (const w of this.watchers.values()) w.dispose();
    this.watchers.clear();
  }
}
