import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Approvals, HoldView } from '../../../kernel/approvals/hold';
import { hasReviewFiles } from '../../../kernel/approvals/hold';
import type { Logger } from '../../../base/logger';
import { describeError } from '../../../base/describeError';

interface Watched {
  readonly root: string;
  readonly paths: ReadonlySet<string>;
}

/** Case-insensitive file systems (Windows, macOS by default) name one file several ways. */
const FOLD = process.platform === 'win32' || process.platform === 'darwin';

function norm(rel: string): string {
  return FOLD ? rel.toLowerCase() : rel;
}

/**
 * Keeps pending patch holds honest while they wait: whenever a file one of them binds (a path it updates, deletes,
 * moves or adds, or a move destination) changes on disk or is saved in the editor, the hold is revalidated, so it
 * goes stale while the reviewer is still looking rather than only when they approve. One recursive watcher per
 * workspace folder that has pending holds.
 */
export class BoundFileWatcher implements vscode.Disposable {
  private readonly holds = new Map<string, Watched>();
  private readonly watchers = new Map<string, { watcher: vscode.FileSystemWatcher; subs: vscode.Disposable[] }>();
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly saveSub: vscode.Disposable;

  constructor(
    private readonly approvals: Approvals,
    private readonly workspaceRoot: (workspaceId: string, approvalId?: string) => string | undefined,
    private readonly log: Logger,
  ) {
    this.saveSub = vscode.workspace.onDidSaveTextDocument((doc) => this.changed(doc.uri));
  }

  /** Watches the files of a pending patch hold (again after a change of the hold: idempotent). */
  track(hold: HoldView): void {
    if (!hasReviewFiles(hold) || hold.state !== 'pending') return this.untrack(hold.approval_id);
    const root = this.workspaceRoot(hold.workspace_id, hold.approval_id);
    if (!root) {
      this.log.warn(`[review] workspace ${hold.workspace_id} of hold ${hold.approval_id} is not open; its files are not watched`);
      return;
    }
    const paths = new Set<string>();
    for (const f of hold.files ?? []) {
      paths.add(norm(f.path));
      if (f.move_to) paths.add(norm(f.move_to));
    }
    this.holds.set(hold.approval_id, { root, paths });
    this.ensureWatcher(root);
  }

  untrack(approvalId: string): void {
    const w = this.holds.get(approvalId);
    if (!w) return;
    this.holds.delete(approvalId);
    const timer = this.timers.get(approvalId);
    if (timer) clearTimeout(timer);
    this.timers.delete(approvalId);
    if (![...this.holds.values()].some((h) => h.root === w.root)) {
      const entry = this.watchers.get(w.root);
      entry?.watcher.dispose();
      entry?.subs.forEach((s) => s.dispose());
      this.watchers.delete(w.root);
    }
  }

  private ensureWatcher(root: string): void {
    if (this.watchers.has(root)) return;
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(root), '**/*'));
    const on = (uri: vscode.Uri): void => this.changed(uri);
    this.watchers.set(root, { watcher, subs: [watcher.onDidChange(on), watcher.onDidCreate(on), watcher.onDidDelete(on)] });
  }

  private changed(uri: vscode.Uri): void {
    if (uri.scheme !== 'file') return;
    for (const [id, w] of this.holds) {
      const rel = path.relative(w.root, uri.fsPath);
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) continue;
      if (w.paths.has(norm(rel.split(path.sep).join('/')))) this.schedule(id);
    }
  }

  /** Bursts of events (a save is a change and a watcher event) revalidate once. */
  private schedule(approvalId: string): void {
    if (this.timers.has(approvalId)) return;
    this.timers.set(
      approvalId,
      setTimeout(() => {
        this.timers.delete(approvalId);
        if (!this.holds.has(approvalId)) return;
        this.approvals.revalidate(approvalId).catch((err: unknown) => this.log.warn(`[review] revalidating hold ${approvalId} failed: ${describeError(err)}`));
      }, 50),
    );
  }

  dispose(): void {
    this.saveSub.dispose();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const { watcher, subs } of this.watchers.values()) {
      watcher.dispose();
      subs.forEach((s) => s.dispose());
    }
    this.watchers.clear();
    this.holds.clear();
  }
}
