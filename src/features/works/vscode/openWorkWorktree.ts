import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Steering, WorkView } from '../common/steering';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';

/** What `codespace.openWorkWorktree` answers (for tests and callers; the developer sees the new window). */
export type OpenWorktreeResult =
  | { readonly ok: true; readonly work_id: string; readonly uri: string }
  | { readonly ok: false; readonly code: 'NOT_FOUND' | 'NO_WORKTREE' | 'GONE' | 'CANCELLED'; readonly message?: string };

/**
 * CodeSpace: Open Work in New Window. A work with worktrees opens in a window of its own: its one worktree as a
 * folder, or several (one per repository) as a workspace file written beside them. The developer looks at (and may
 * build in) the work's files there without mixing them into this window's folders. The second argument
 * `{ open: false }` only prepares what would open (tests).
 */
export function registerOpenWorkWorktree(steering: Steering): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.openWorkWorktree, async (arg?: unknown, options?: { open?: boolean }): Promise<OpenWorktreeResult> => {
    const withTrees = steering.works().filter((w) => w.worktrees !== undefined);
    let work: WorkView | undefined;
    if (typeof arg === 'string' && arg !== '') {
      work = steering.work(arg);
      if (!work) return refuse('NOT_FOUND', `there is no work ${visibleString(arg)}.`);
    } else {
      if (withTrees.length === 0) return refuse('NO_WORKTREE', 'no work has its own worktree (an agent opens one with work_open and isolation "worktree").');
      const pick = await vscode.window.showQuickPick(
        withTrees.map((w) => ({ label: visibleString(w.title), description: `${w.worktrees?.[0]?.branch ?? ''} · ${w.status}`, id: w.id })),
        { title: 'CodeSpace: open which work in a new window?' },
      );
      if (!pick) return { ok: false, code: 'CANCELLED' };
      work = steering.work(pick.id);
      if (!work) return refuse('NOT_FOUND', 'the work is gone.');
    }
    const trees = work.worktrees;
    if (!trees || trees.length === 0) return refuse('NO_WORKTREE', `the work "${visibleString(work.title)}" edits the workspace folders themselves: it has no worktree to open.`);
    const tops = [...new Set(trees.map((t) => t.root))];
    const missing = tops.filter((t) => !fs.existsSync(t));
    if (missing.length > 0) return refuse('GONE', `the worktree ${missing.join(', ')} of the work "${visibleString(work.title)}" is no longer on disk.`);
    let target: vscode.Uri;
    if (tops.length === 1) {
      target = vscode.Uri.file(tops[0] as string);
    } else {
      // Beside the work's worktrees (in the extension's storage), never in the developer's folders or a worktree.
      const file = path.join(path.dirname(trees[0]?.top as string), 'work.code-workspace');
      fs.writeFileSync(file, `${JSON.stringify({ folders: trees.map((t) => ({ name: `${t.workspace_id} (${t.branch})`, path: t.root })) }, null, 2)}\n`);
      target = vscode.Uri.file(file);
    }
    if (options?.open !== false) await vscode.commands.executeCommand('vscode.openFolder', target, { forceNewWindow: true });
    return { ok: true, work_id: work.id, uri: target.toString() };
  });
}

function refuse(code: 'NOT_FOUND' | 'NO_WORKTREE' | 'GONE', text: string): OpenWorktreeResult {
  void vscode.window.showWarningMessage(`CodeSpace: ${text}`);
  return { ok: false, code, message: text };
}
