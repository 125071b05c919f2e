import * as vscode from 'vscode';
import type { Approvals, HoldState, HoldView } from '../../../kernel/approvals/hold';
import { hasReviewFiles } from '../../../kernel/approvals/hold';
import type { Logger } from '../../../base/logger';
import type { Activity } from '../../../kernel/runner/events';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { settings } from '../../../kernel/vscode/settings';
import { BoundFileWatcher } from './boundFileWatcher';
import { ProposalFileSystem } from './proposalFileSystem';
import { fromProposalUri } from './proposalUri';
import type { ReviewFile } from './reviewEditors';
import { ReviewEditors } from './reviewEditors';
import type { ReviewUnit } from './reviewTabs';
import { ReviewTabs } from './reviewTabs';
import { describeError } from '../../../base/describeError';

export interface ReviewDeps {
  readonly approvals: Approvals;
  readonly activity: Activity;
  readonly log: Logger;
  /**
   * Absolute root folder of a workspace id, for watching the files a hold binds; with the hold's approval_id, the
   * folder its request acts in (a work's own worktree, when it names such a work).
   */
  readonly workspaceRoot: (workspaceId: string, approvalId?: string) => string | undefined;
}

/** What the decision commands return (to a test, or to a caller that wants to know). */
export interface ReviewDecision {
  readonly ok: boolean;
  readonly approval_id?: string;
  readonly state?: HoldState;
  /** Why it did not happen: STALE, APPROVAL_CONFLICT, VERSION_CONFLICT, NOT_FOUND, CANCELLED, SAVE_FAILED, ... */
  readonly code?: string;
  readonly message?: string;
}

/** Context key: 'approval' or 'preview' while the active tab shows one, '' otherwise (menus and the palette). */
const ACTIVE_REVIEW_KEY = 'codespace.activeReview';
/** How often, and how far apart, a proposal save the window refused is tried again before Approve gives up. */
const SAVE_ATTEMPTS = 5;
const SAVE_RETRY_MS = 300;

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(err: unknown): string {
  return describeError(err);
}

function fileList(hold: HoldView): string {
  const names = (hold.files ?? []).map((f) => (f.move_to ? `${f.path} → ${f.move_to}` : f.path));
  return names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;
}

function staleText(hold: HoldView | undefined): string {
  const why = hold?.stale_reason ?? 'a file it changes was modified after the agent proposed it';
  return `CodeSpace: this patch cannot be approved, it is stale: ${why}. Deny it, or let the agent read the file again and send a new patch.`;
}

/**
 * The reviewer's side of patch holds, in VS Code's own diff editors: the proposal file system, the review
 * commands, the notification when a hold appears, tabs that follow the hold's state, and the watcher that makes a
 * hold stale while it is pending. Closing a review tab never decides anything.
 */
export function registerReview(deps: ReviewDeps): vscode.Disposable[] {
  const { approvals, activity, log } = deps;
  const fs = new ProposalFileSystem(approvals, activity);
  const tabs = new ReviewTabs();
  const editors = new ReviewEditors(tabs);
  const watcher = new BoundFileWatcher(approvals, deps.workspaceRoot, log);
  const states = new Map<string, HoldState>();

  // Holds kept from before this window started are known, not announced again.
  for (const hold of approvals.list()) {
    states.set(hold.approval_id, hold.state);
    if (hold.state === 'pending') watcher.track(hold);
  }

  // UI reactions run one after another: a hold can be created and go stale before its tabs have opened.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (what: string, op: () => Promise<void>): void => {
    queue = queue.then(op).catch((err: unknown) => log.error(`[review] ${what} failed`, errorMessage(err)));
  };

  const updateContext = (): void => {
    const unit = tabs.activeUnit();
    const value = unit === undefined ? '' : unit.approvalId !== undefined ? 'approval' : 'preview';
    void vscode.commands.executeCommand('setContext', ACTIVE_REVIEW_KEY, value);
  };

  /** The hold a command acts on: its argument (an id, or a proposal URI from an editor menu), else the active tab's. */
  const holdIdFrom = (arg: unknown): string | undefined => {
    if (typeof arg === 'string' && arg !== '') return arg;
    if (arg instanceof vscode.Uri) {
      const id = fromProposalUri(arg)?.approvalId;
      if (id) return id;
    }
    return tabs.activeUnit()?.approvalId;
  };

  const pickPending = async (title: string): Promise<string | undefined> => {
    const pending = approvals.pending().filter((h) => hasReviewFiles(h));
    if (pending.length === 0) {
      void vscode.window.showInformationMessage('CodeSpace: no patch is waiting for review.');
      return undefined;
    }
    if (pending.length === 1) return pending[0]?.approval_id;
    const pick = await vscode.window.showQuickPick(
      pending.map((h) => ({ label: `$(diff) ${fileList(h)}`, description: h.workspace_id, detail: `held ${new Date(h.created_at).toLocaleTimeString()} (${h.reason})`, id: h.approval_id })),
      { title, placeHolder: 'Pick a held patch' },
    );
    return pick?.id;
  };

  const resolveTarget = async (arg: unknown, title: string): Promise<string | undefined> => holdIdFrom(arg) ?? (await pickPending(title));

  const openReview = async (arg?: unknown): Promise<{ approval_id: string; files: number } | undefined> => {
    const id = await resolveTarget(arg, 'CodeSpace: review which patch?');
    if (!id) return undefined;
    const hold = approvals.get(id);
    if (!hasReviewFiles(hold)) {
      void vscode.window.showErrorMessage(`CodeSpace: no patch hold ${id}.`);
      return undefined;
    }
    if (hold.state !== 'pending' && hold.state !== 'stale') {
      void vscode.window.showInformationMessage(`CodeSpace: that patch is already ${hold.state}.`);
      return undefined;
    }
    await editors.openUnit({ approvalId: id }, hold.files, { stale: hold.state === 'stale' });
    updateContext();
    return { approval_id: id, files: hold.files.length };
  };

  /**
   * Saves every unsaved edit of the hold's proposal, so what is approved is what the reviewer sees. `save()` answers
   * false, without a reason, whenever the window does not save the document at that moment (microsoft/vscode#3607:
   * also when the window's own model is not dirty yet, its last keystrokes still on the way); such a refusal is
   * tried again for a short while, as long as the document still has unsaved edits, and logged.
   */
  const saveEdits = async (approvalId: string): Promise<boolean> => {
    const dirty = vscode.workspace.textDocuments.filter((d) => d.isDirty && fromProposalUri(d.uri)?.approvalId === approvalId);
    for (const doc of dirty) {
      for (let attempt = 1; ; attempt++) {
        if (await doc.save()) break;
        if (!doc.isDirty) break; // saved meanwhile (the window's own save): its bytes reached the proposal
        log.warn(`[review] hold ${approvalId}: the window did not save ${doc.uri.path} (attempt ${attempt} of ${SAVE_ATTEMPTS}, version ${doc.version})`);
        if (attempt >= SAVE_ATTEMPTS) return false;
        await new Promise((resolve) => setTimeout(resolve, SAVE_RETRY_MS));
      }
    }
    return true;
  };

  const approve = async (arg?: unknown): Promise<ReviewDecision> => {
    const id = await resolveTarget(arg, 'CodeSpace: approve which patch?');
    if (!id) return { ok: false, code: 'CANCELLED' };
    const hold = approvals.get(id);
    if (!hasReviewFiles(hold)) {
      void vscode.window.showErrorMessage(`CodeSpace: no patch hold ${id}.`);
      return { ok: false, approval_id: id, code: 'NOT_FOUND' };
    }
    if (hold.state === 'stale') {
      void vscode.window.showErrorMessage(staleText(hold));
      return { ok: false, approval_id: id, state: hold.state, code: 'STALE', message: hold.stale_reason };
    }
    if (hold.state !== 'pending') {
      void vscode.window.showErrorMessage(`CodeSpace: this patch is already ${hold.state}; there is nothing to approve.`);
      return { ok: false, approval_id: id, state: hold.state, code: 'APPROVAL_CONFLICT' };
    }
    if (!(await saveEdits(id))) {
      void vscode.window.showErrorMessage('CodeSpace: your edit of the proposal could not be saved, so the patch was not approved.');
      return { ok: false, approval_id: id, state: approvals.get(id)?.state, code: 'SAVE_FAILED' };
    }
    try {
      const view = await approvals.resolve(id, 'grant', { by: 'reviewer' });
      log.info(`[review] hold ${id} approved by the reviewer`);
      return { ok: true, approval_id: id, state: view.state };
    } catch (err) {
      const code = errorCode(err) ?? 'INTERNAL';
      const now = approvals.get(id);
      if (code === 'VERSION_CONFLICT' || now?.state === 'stale') void vscode.window.showErrorMessage(staleText(now));
      else void vscode.window.showErrorMessage(`CodeSpace: the patch could not be approved: ${errorMessage(err)}`);
      return { ok: false, approval_id: id, state: now?.state, code, message: errorMessage(err) };
    }
  };

  const deny = async (arg?: unknown, noteArg?: unknown): Promise<ReviewDecision> => {
    const id = await resolveTarget(arg, 'CodeSpace: deny which patch?');
    if (!id) return { ok: false, code: 'CANCELLED' };
    const hold = approvals.get(id);
    if (!hasReviewFiles(hold)) {
      void vscode.window.showErrorMessage(`CodeSpace: no patch hold ${id}.`);
      return { ok: false, approval_id: id, code: 'NOT_FOUND' };
    }
    if (hold.state !== 'pending') {
      void vscode.window.showInformationMessage(`CodeSpace: this patch is already ${hold.state}; nothing will be applied.`);
      return { ok: false, approval_id: id, state: hold.state, code: 'APPROVAL_CONFLICT' };
    }
    const note =
      typeof noteArg === 'string'
        ? noteArg
        : await vscode.window.showInputBox({
            title: `Deny the patch to ${fileList(hold)}`,
            prompt: 'Optional note for the agent: why, or what to do instead. Enter denies, Escape cancels.',
            ignoreFocusOut: true,
          });
    if (note === undefined) return { ok: false, approval_id: id, state: hold.state, code: 'CANCELLED' };
    try {
      const trimmed = note.trim();
      const view = await approvals.resolve(id, 'deny', trimmed === '' ? { by: 'reviewer' } : { by: 'reviewer', note: trimmed });
      log.info(`[review] hold ${id} denied by the reviewer`);
      return { ok: true, approval_id: id, state: view.state };
    } catch (err) {
      void vscode.window.showErrorMessage(`CodeSpace: the patch could not be denied: ${errorMessage(err)}`);
      return { ok: false, approval_id: id, state: approvals.get(id)?.state, code: errorCode(err) ?? 'INTERNAL', message: errorMessage(err) };
    }
  };

  const unitFiles = (unit: ReviewUnit): readonly ReviewFile[] => {
    if (unit.approvalId !== undefined) return approvals.get(unit.approvalId)?.files ?? [];
    return activity.preview(unit.previewId) ?? [];
  };

  /** Next / previous file of the review the active tab belongs to, in a per-file diff editor (to edit it there). */
  const step = async (delta: 1 | -1): Promise<{ index: number; path: string } | undefined> => {
    const unit = tabs.activeUnit();
    if (!unit) {
      void vscode.window.showInformationMessage('CodeSpace: the active editor is not a review.');
      return undefined;
    }
    const files = unitFiles(unit);
    const current = editors.activeIndex(files) ?? (delta > 0 ? -1 : files.length);
    const next = current + delta;
    const file = files[next];
    if (!file) {
      vscode.window.setStatusBarMessage(delta > 0 ? 'CodeSpace: this is the last file of the review' : 'CodeSpace: this is the first file of the review', 3000);
      const at = files[current];
      return at ? { index: current, path: at.path } : undefined;
    }
    const hold = unit.approvalId !== undefined ? approvals.get(unit.approvalId) : undefined;
    await editors.openFile(unit, file, { preserveFocus: false, stale: hold?.state === 'stale' });
    return { index: next, path: file.move_to ?? file.path };
  };

  const checkedPreviews = (): { run_id: string; title: string; at: string }[] => {
    const out: { run_id: string; title: string; at: string }[] = [];
    for (const e of activity.recent()) {
      if (e.type === 'operation.committed' && e.status === 'checked' && e.operation.reviewable === true) out.push({ run_id: e.operation.run_id, title: e.operation.title, at: e.operation.at });
    }
    return out.reverse();
  };

  const openPreview = async (arg?: unknown): Promise<{ run_id: string; files: number } | undefined> => {
    let runId = typeof arg === 'string' && arg !== '' ? arg : arg instanceof vscode.Uri ? fromProposalUri(arg)?.previewId : undefined;
    if (!runId) {
      const previews = checkedPreviews();
      if (previews.length === 0) {
        void vscode.window.showInformationMessage('CodeSpace: no check_only preview is kept.');
        return undefined;
      }
      const pick = await vscode.window.showQuickPick(
        previews.map((p) => ({ label: `$(preview) ${p.title}`, description: new Date(p.at).toLocaleTimeString(), id: p.run_id })),
        { title: 'CodeSpace: open which preview?' },
      );
      runId = pick?.id;
      if (!runId) return undefined;
    }
    const files = activity.preview(runId);
    if (!files) {
      void vscode.window.showWarningMessage(`CodeSpace: preview ${runId} is no longer kept (only the latest previews are).`);
      return undefined;
    }
    await editors.openUnit({ previewId: runId }, files);
    updateContext();
    return { run_id: runId, files: files.length };
  };

  const announce = (hold: HoldView & { files: NonNullable<HoldView['files']> }): void => {
    const unit: ReviewUnit = { approvalId: hold.approval_id };
    const review = settings.review();
    if (review.openOnHold) enqueue(`opening the review of ${hold.approval_id}`, () => editors.openInBackground(unit, hold.files));
    if (!review.notify) return;
    const sensitive = hold.sensitive_paths.length > 0 ? ` It touches sensitive paths: ${hold.sensitive_paths.join(', ')}.` : '';
    const n = hold.files.length;
    const text = `CodeSpace: an agent wants to change ${n === 1 ? '1 file' : `${n} files`} in ${hold.workspace_id}: ${fileList(hold)}.${sensitive}`;
    void vscode.window.showInformationMessage(text, 'Review', 'Approve', 'Deny').then((pick) => {
      if (pick === 'Review') void vscode.commands.executeCommand(COMMANDS.openReview, hold.approval_id);
      else if (pick === 'Approve') void vscode.commands.executeCommand(COMMANDS.approveReview, hold.approval_id);
      else if (pick === 'Deny') void vscode.commands.executeCommand(COMMANDS.denyReview, hold.approval_id);
    });
  };

  const onHold = (hold: HoldView): void => {
    fs.holdChanged(hold);
    if (!hasReviewFiles(hold)) return;
    const id = hold.approval_id;
    const prev = states.get(id);
    states.set(id, hold.state);
    const unit: ReviewUnit = { approvalId: id };
    if (hold.state === 'pending') {
      watcher.track(hold);
      if (prev === undefined) announce(hold);
      return;
    }
    watcher.untrack(id);
    if (prev === hold.state) return;
    if (hold.state === 'stale') {
      enqueue(`marking ${id} stale`, async () => {
        if (tabs.tabsOf(unit).length === 0) return;
        await editors.markStale(unit, hold.files);
        void vscode.window.showWarningMessage(staleText(hold));
      });
    } else {
      enqueue(`closing the review of ${id}`, async () => {
        const left = await tabs.close(unit);
        if (left > 0) log.info(`[review] hold ${id} is ${hold.state}; ${left} tab(s) with unsaved edits stay open`);
      });
    }
    enqueue('updating the review context', async () => updateContext());
  };

  updateContext();
  return [
    fs,
    fs.register(),
    watcher,
    approvals.onDidChange(onHold),
    vscode.window.tabGroups.onDidChangeTabs(updateContext),
    vscode.window.tabGroups.onDidChangeTabGroups(updateContext),
    vscode.commands.registerCommand(COMMANDS.openReview, openReview),
    vscode.commands.registerCommand(COMMANDS.approveReview, approve),
    vscode.commands.registerCommand(COMMANDS.denyReview, deny),
    vscode.commands.registerCommand(COMMANDS.nextReviewFile, () => step(1)),
    vscode.commands.registerCommand(COMMANDS.previousReviewFile, () => step(-1)),
    vscode.commands.registerCommand(COMMANDS.openPreview, openPreview),
  ].map((d) => (d instanceof vscode.Disposable ? d : new vscode.Disposable(() => d.dispose())));
}
