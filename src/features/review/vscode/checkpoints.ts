import * as vscode from 'vscode';
import type { Checkpoint, CheckpointOutcome, CheckpointService } from '../common/checkpointService';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { Steering, WorkView } from '../../works';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { workReviewLabel } from '../../works/vscode';
import { describeError, describeErrorWithStack } from '../../../base/describeError';

/**
 * The developer's side of checkpoints: Rewind Work to Checkpoint… (a quick pick of the work's operations, newest
 * first) and Redo Rewind, from the palette, the work review's title bar and the panel's activity (a button on an
 * operation of a work). Everything is said in notifications: nothing takes the focus away from the editor.
 */
export interface CheckpointCommandsDeps {
  readonly checkpoints: Pick<CheckpointService, 'list' | 'canRedo' | 'rewind' | 'redo'>;
  readonly steering: Pick<Steering, 'work' | 'works'>;
  /** The work an open work review shows in a document (its right side), for a rewind started from the review. */
  readonly locateWork: (uri: vscode.Uri) => { workId: string } | undefined;
  readonly log: Logger;
}

/** What the commands return (to a test, or to the panel). */
export interface CheckpointCommandResult {
  readonly ok: boolean;
  /** NOT_FOUND, NO_CHECKPOINTS, CANCELLED, CURRENT, NOTHING_TO_REDO, or the error code of a refused rewind (VERSION_CONFLICT, UNAVAILABLE, ...). */
  readonly code?: string;
  readonly message?: string;
  readonly work_id?: string;
  readonly checkpoint?: number;
  readonly files?: readonly { readonly path: string; readonly version: string | null }[];
  readonly told?: boolean;
}

/** Context key: true while the active tab is a work review (its title bar offers Rewind and Redo). */
const WORK_REVIEW_ACTIVE = 'codespace.workReviewActive';

/** For the in-editor tests: the labels of the checkpoint pick while it is open (in-process only; no agent reaches it). */
export interface CheckpointsForTests {
  openPick(): readonly string[] | undefined;
}

let openPick: readonly string[] | undefined;

export function registerCheckpointCommands(deps: CheckpointCommandsDeps): { disposables: vscode.Disposable[]; forTests: CheckpointsForTests } {
  const { checkpoints, steering, log } = deps;

  /** The work of the active work review: its focused document, else the tab's title. */
  const activeReviewWork = (): WorkView | undefined => {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const located = uri ? deps.locateWork(uri) : undefined;
    if (located) return steering.work(located.workId);
    const label = vscode.window.tabGroups.activeTabGroup.activeTab?.label;
    // The tab shows the title given to the multi-file diff, and the workbench may add a file count in brackets.
    const matches = label === undefined ? [] : steering.works().filter((w) => label === workReviewLabel(w) || label.startsWith(`${workReviewLabel(w)} (`));
    return matches.length === 1 ? matches[0] : undefined;
  };

  const pickWork = async (arg: unknown, title: string, candidates: WorkView[]): Promise<WorkView | 'missing' | undefined> => {
    if (typeof arg === 'string' && arg !== '') return steering.work(arg) ?? 'missing';
    const fromReview = activeReviewWork();
    if (fromReview && candidates.some((w) => w.id === fromReview.id)) return fromReview;
    if (candidates.length <= 1) return candidates[0];
    const pick = await vscode.window.showQuickPick(
      candidates.map((w) => ({ label: visibleString(w.title), description: `${w.status} · ${w.workspace_id}`, detail: `opened ${new Date(w.opened_at).toLocaleString()}`, id: w.id })),
      { title, placeHolder: 'Pick a work' },
    );
    return pick ? steering.work(pick.id) : undefined;
  };

  const refuse = (code: string, text: string, extra: Partial<CheckpointCommandResult> = {}): CheckpointCommandResult => {
    void vscode.window.showErrorMessage(`CodeSpace: ${text}`);
    log.info(`[checkpoints] ${code}: ${text}`);
    return { ok: false, code, message: text, ...extra };
  };

  const done = (work: WorkView, outcome: CheckpointOutcome): CheckpointCommandResult => {
    const { notice } = outcome;
    const where = notice.checkpoint === 0 ? 'before its first operation' : `checkpoint ${notice.checkpoint}`;
    const files = notice.files.map((f) => f.path);
    const list = files.length <= 4 ? files.join(', ') : `${files.slice(0, 4).join(', ')} and ${files.length - 4} more`;
    const told = outcome.told ? ' The agent is told.' : '';
    const text =
      notice.action === 'rewind'
        ? `rewound "${visibleString(work.title)}" to ${where}: ${list}.${told}`
        : `redid the rewind of "${visibleString(work.title)}": ${list} are back.${told}`;
    const offer = notice.action === 'rewind' ? ['Redo Rewind'] : [];
    vscode.window.showInformationMessage(`CodeSpace: ${text}`, ...offer).then(
      (pick) => {
        if (pick === 'Redo Rewind') void vscode.commands.executeCommand(COMMANDS.redoRewind, work.id);
      },
      () => undefined,
    );
    return { ok: true, work_id: work.id, checkpoint: notice.checkpoint, files: notice.files, told: outcome.told };
  };

  const failed = (err: unknown, workId: string): CheckpointCommandResult => {
    if (err instanceof ToolError) {
      const hint = err.hint ? ` ${err.hint}` : '';
      return refuse(err.code, `${err.message}${hint}`, { work_id: workId });
    }
    log.error('[checkpoints] failed', describeErrorWithStack(err));
    return refuse('INTERNAL', describeError(err), { work_id: workId });
  };

  /**
   * `codespace.rewindWork(workId?, checkpoint?)`: `checkpoint` is an index (0: before the first operation) or the
   * operation_id of one of the work's operations (the panel's button); without it, a quick pick.
   */
  const rewind = async (workArg?: unknown, checkpointArg?: unknown): Promise<CheckpointCommandResult> => {
    const withCheckpoints = steering.works().filter((w) => checkpoints.list(w.id).length > 0);
    const work = await pickWork(workArg, 'CodeSpace: rewind which work?', withCheckpoints);
    if (work === 'missing') return refuse('NOT_FOUND', `there is no work ${String(workArg)}.`);
    if (!work) {
      if (withCheckpoints.length === 0) return refuse('NO_CHECKPOINTS', 'no work has a checkpoint yet: every patch an agent applies under a work is one.');
      return { ok: false, code: 'CANCELLED' };
    }
    const list = checkpoints.list(work.id);
    if (list.length === 0) return refuse('NO_CHECKPOINTS', `the work "${visibleString(work.title)}" has no checkpoint yet: every patch its agent applies is one.`, { work_id: work.id });
    let index: number | undefined;
    if (typeof checkpointArg === 'number') index = checkpointArg;
    else if (typeof checkpointArg === 'string' && checkpointArg !== '') {
      index = list.find((c) => c.operation_id === checkpointArg)?.index;
      if (index === undefined) return refuse('NOT_FOUND', `operation ${checkpointArg} is not a checkpoint of the work "${visibleString(work.title)}" (only its applied patches are).`, { work_id: work.id });
    } else {
      const picked = await pickCheckpoint(work, list);
      if (picked === undefined) return { ok: false, code: 'CANCELLED', work_id: work.id };
      index = picked;
    }
    if (index === list.length) {
      void vscode.window.showInformationMessage(`CodeSpace: "${visibleString(work.title)}" is at checkpoint ${index} already (its newest operation).`);
      return { ok: false, code: 'CURRENT', work_id: work.id, checkpoint: index };
    }
    try {
      return done(work, await checkpoints.rewind(work.id, index));
    } catch (err) {
      return failed(err, work.id);
    }
  };

  const redo = async (workArg?: unknown): Promise<CheckpointCommandResult> => {
    const redoable = steering.works().filter((w) => checkpoints.canRedo(w.id));
    const work = await pickWork(workArg, 'CodeSpace: redo the rewind of which work?', redoable);
    if (work === 'missing') return refuse('NOT_FOUND', `there is no work ${String(workArg)}.`);
    if (!work) {
      if (redoable.length === 0) return refuse('NOTHING_TO_REDO', 'nothing to redo: no work was rewound since it last wrote.');
      return { ok: false, code: 'CANCELLED' };
    }
    if (!checkpoints.canRedo(work.id)) return refuse('NOTHING_TO_REDO', `nothing to redo for "${visibleString(work.title)}": it was not rewound since it last wrote.`, { work_id: work.id });
    try {
      return done(work, await checkpoints.redo(work.id));
    } catch (err) {
      return failed(err, work.id);
    }
  };

  const updateContext = (): void => {
    const label = vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? '';
    void vscode.commands.executeCommand('setContext', WORK_REVIEW_ACTIVE, label.startsWith(workReviewLabel({ title: '' })));
  };
  updateContext();

  return {
    disposables: [
      vscode.commands.registerCommand(COMMANDS.rewindWork, rewind),
      vscode.commands.registerCommand(COMMANDS.redoRewind, redo),
      vscode.window.tabGroups.onDidChangeTabs(updateContext),
      vscode.window.tabGroups.onDidChangeTabGroups(updateContext),
    ],
    forTests: { openPick: () => openPick },
  };
}

/** The quick pick of a work's checkpoints, newest first, with before-the-first at the end; the chosen index. */
async function pickCheckpoint(work: WorkView, list: readonly Checkpoint[]): Promise<number | undefined> {
  type Item = vscode.QuickPickItem & { index: number };
  const newest = list.length;
  const items: Item[] = [...list].reverse().map((c) => ({
    label: `#${c.index}  ${visibleString(c.summary)}`,
    description: `${new Date(c.at).toLocaleString()}${c.index === newest ? ' · current' : ''}`,
    detail: c.files.length <= 6 ? c.files.join(', ') : `${c.files.slice(0, 6).join(', ')} and ${c.files.length - 6} more`,
    index: c.index,
  }));
  items.push({ label: '#0  Before the first operation', description: `opened ${new Date(work.opened_at).toLocaleString()}`, detail: 'every file the work changed, as it was before', index: 0 });
  const shown = vscode.window.showQuickPick(items, {
    title: `CodeSpace: rewind "${visibleString(work.title)}" to…`,
    placeHolder: 'The work\'s files go back to how they were right after the chosen operation; Redo Rewind puts them back',
    matchOnDetail: true,
  });
  openPick = items.map((i) => i.label);
  try {
    return (await shown)?.index;
  } finally {
    openPick = undefined;
  }
}
