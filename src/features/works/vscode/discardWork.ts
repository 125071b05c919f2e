import * as vscode from 'vscode';
import type { WorktreeDiscard, WorktreeSurvey } from '../common/workTree';
import type { WorkView } from '../common/steering';
import type { Logger } from '../../../base/logger';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { describeError } from '../../../base/describeError';

/** What the command needs of the works (SteeringService). */
export interface DiscardableWorks {
  works(): WorkView[];
  work(id: string): WorkView | undefined;
  surveyDiscard(workId: string): Promise<WorktreeSurvey[]>;
  discardWork(workId: string): Promise<{ work: WorkView; worktrees: WorktreeDiscard[] }>;
}

/** What `codespace.discardWork` answers (for tests and callers; the developer sees messages). */
export type DiscardWorkResult =
  | { readonly ok: true; readonly work_id: string; readonly worktrees: readonly WorktreeDiscard[] }
  | { readonly ok: false; readonly code: 'NOT_FOUND' | 'NO_WORKTREE' | 'CANCELLED' | 'REFUSED'; readonly message?: string };

function holding(w: WorkView): boolean {
  return (w.worktrees ?? []).some((t) => t.removed_at === undefined);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The confirmation's detail: per repository, what goes and what stays. */
export function discardSummary(survey: readonly WorktreeSurvey[]): string {
  const byTop = new Map<string, WorktreeSurvey & { ids: string[] }>();
  for (const s of survey) {
    const seen = byTop.get(s.top);
    if (seen) seen.ids.push(s.workspace_id);
    else byTop.set(s.top, { ...s, ids: [s.workspace_id] });
  }
  const lines: string[] = [];
  for (const s of byTop.values()) {
    const what = !s.present ? 'its folder is already gone' : s.changed + s.untracked === 0 ? 'no uncommitted change' : `${plural(s.changed, 'uncommitted file')} and ${plural(s.untracked, 'untracked file')} are DROPPED`;
    const branch = s.unsaved > 0 ? `the branch ${s.branch} is KEPT with ${plural(s.unsaved, 'unpushed commit')}` : `the branch ${s.branch} is deleted (no commit of its own)`;
    lines.push(`${s.ids.join(', ')}: ${what}; ${branch}.`);
  }
  return lines.join('\n');
}

/**
 * CodeSpace: Discard Work… The developer drops a work's worktrees: the work is finished, each worktree is removed
 * with its uncommitted and untracked files (after a modal confirmation that counts them), and a task branch is
 * deleted only when none of its commits would be lost; otherwise it stays and the message names it. The second
 * argument `{ confirm: false }` skips the confirmation (tests).
 */
export function registerDiscardWork(works: DiscardableWorks, log: Logger): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.discardWork, async (arg?: unknown, options?: { confirm?: boolean }): Promise<DiscardWorkResult> => {
    let work: WorkView | undefined;
    if (typeof arg === 'string' && arg !== '') {
      work = works.work(arg);
      if (!work) return refuse('NOT_FOUND', `there is no work ${visibleString(arg)}.`);
      if (!holding(work)) return refuse('NO_WORKTREE', `the work "${visibleString(work.title)}" holds no worktree: there is nothing to discard.`);
    } else {
      const candidates = works.works().filter(holding);
      if (candidates.length === 0) return refuse('NO_WORKTREE', 'no work holds a worktree (an agent opens one with work_open and isolation "worktree").');
      const pick = await vscode.window.showQuickPick(
        candidates.map((w) => ({ label: visibleString(w.title), description: `${w.worktrees?.[0]?.branch ?? ''} · ${w.status}`, id: w.id })),
        { title: 'CodeSpace: discard which work?', placeHolder: 'Its worktrees are removed; commits are never lost' },
      );
      if (!pick) return { ok: false, code: 'CANCELLED' };
      work = works.work(pick.id);
      if (!work) return refuse('NOT_FOUND', 'the work is gone.');
    }
    if (options?.confirm !== false) {
      let detail: string;
      try {
        detail = discardSummary(await works.surveyDiscard(work.id));
      } catch (err) {
        return refuse('REFUSED', `the work's worktrees could not be read: ${describeError(err)}`);
      }
      const answer = await vscode.window.showWarningMessage(
        `Discard the work "${visibleString(work.title)}"?${work.status === 'open' ? ' It is finished, and its queued instructions go back to drafts.' : ''}`,
        { modal: true, detail: `${detail}\n\nUncommitted work cannot be recovered.` },
        'Discard',
      );
      if (answer !== 'Discard') return { ok: false, code: 'CANCELLED' };
    }
    let out: { work: WorkView; worktrees: WorktreeDiscard[] };
    try {
      out = await works.discardWork(work.id);
    } catch (err) {
      return refuse('REFUSED', `the work was not discarded: ${describeError(err)}`);
    }
    const kept = out.worktrees.filter((t) => t.removed && !t.branch_deleted);
    const failed = out.worktrees.filter((t) => !t.removed);
    const parts = [`the work "${visibleString(work.title)}" is discarded.`];
    const keptNames = new Map<string, number>();
    for (const t of kept) if (t.removed) keptNames.set(t.branch, t.kept_commits ?? 0);
    for (const [branch, n] of keptNames) parts.push(`The branch ${branch} is kept: it has ${plural(n, 'unpushed commit')}.`);
    for (const t of failed) if (!t.removed) parts.push(`The worktree of ${t.workspace_id} is kept (${t.reason}${t.detail !== undefined ? `: ${t.detail}` : ''}).`);
    log.info(`[works] ${parts.join(' ')}`);
    if (failed.length > 0 || kept.length > 0) void vscode.window.showWarningMessage(`CodeSpace: ${parts.join(' ')}`);
    else void vscode.window.showInformationMessage(`CodeSpace: ${parts.join(' ')}`);
    return { ok: true, work_id: work.id, worktrees: out.worktrees };
  });
}

function refuse(code: 'NOT_FOUND' | 'NO_WORKTREE' | 'REFUSED', text: string): DiscardWorkResult {
  void vscode.window.showWarningMessage(`CodeSpace: ${text}`);
  return { ok: false, code, message: text };
}
