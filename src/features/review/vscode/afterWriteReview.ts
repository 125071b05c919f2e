import * as path from 'node:path';
import * as vscode from 'vscode';
import { ReadOnlyDocuments } from './readOnlyDocuments';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { HunkSide } from '../common/afterWriteHunks';
import { binaryDescription, modeChangeLabel, modeChangesSuffix } from '../common/reviewedContent';
import type { AfterWriteReviews, AfterWriteSnapshot, ReviewFileNow, ReviewState, ReviewUndone } from '../common/afterWriteReviews';
import type { Steering } from '../../works';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { validPath } from './proposalUri';
import { fromReviewUri, reviewDocuments, toReviewUri } from './reviewDocuments';
import { describeError } from '../../../base/describeError';

/**
 * The review after the write in the editor (`codespace.review.mode` `after`): one multi-file diff per review (a
 * work's, or a folder's patches without a work). Left: the file's accepted text, a read-only review
 * document (kind `after`) that changes in place when a hunk is kept; right: the file on disk, which an undo rewrites. Opened by
 * the developer (the status bar item, the command), never by an agent's patch: nothing takes focus. Keep, Undo and
 * Mark as Reviewed act on the hunk at the cursor, on either side of the diff and for every kind of change (an added,
 * deleted or moved file: see reviewOfFile), from its context menu or the commands with the cursor there. The state (accepted texts, marks, undo notices for works) is kept in workspaceState.
 */
const STATE_KEY = 'codespace.afterWriteReviews';
/** The context key of the menus: some review after the write has files to review. */
const CONTEXT_KEY = 'codespace.afterWriteReview';

/** `base`: the accepted side; `none`: the empty side of a file that is not there; `now`: the file now, described (binary). */
type Side = 'base' | 'none' | 'now';

/** `codespace-review://after.<side>.<review id>/<path of the file on disk>`: both sides of a file share the path. */
export function toAfterUri(reviewId: string, side: Side, root: string, file: string): vscode.Uri {
  if (!validPath(file)) throw new Error(`after-write URI: invalid path ${JSON.stringify(file)}`);
  return toReviewUri({ kind: 'after', side, id: reviewId, path: vscode.Uri.file(path.join(root, ...file.split('/'))).path });
}

function fromAfterUri(uri: vscode.Uri): { reviewId: string; side: Side; uriPath: string } | undefined {
  const ref = fromReviewUri(uri);
  if (ref?.kind !== 'after' || (ref.side !== 'base' && ref.side !== 'none' && ref.side !== 'now')) return undefined;
  return { reviewId: ref.id, side: ref.side, uriPath: ref.path };
}

/** What the commands answer (to a test, or to a caller that wants to know). */
export interface AfterWriteResult {
  readonly ok: boolean;
  /** NOT_FOUND, NO_CHANGES, NO_HUNK, CANCELLED, or the error code of the patch engine (VERSION_CONFLICT, …). */
  readonly code?: string;
  readonly message?: string;
  readonly review?: string;
  readonly path?: string;
  readonly files?: readonly AfterWriteFileShown[];
  readonly notice?: ReviewUndone;
  readonly reviewed?: boolean;
}

/** A file of an opened review: its hunks, or the whole-file change (binary, mode) that a reviewer acts on instead. */
export interface AfterWriteFileShown {
  readonly path: string;
  readonly hunks: readonly { start_line: number; end_line: number }[];
  readonly binary: boolean;
  readonly mode?: { readonly from: string; readonly to: string };
  /** How the file is named to the reviewer: `run.sh (mode 100644 → 100755)`, `logo.png (binary)`. */
  readonly label: string;
  readonly left: string;
  readonly right: string;
}

export interface AfterWriteDeps {
  readonly reviews: AfterWriteReviews;
  /** Where a review's files are: its work's worktree of the folder, or the folder. */
  readonly rootOf: (review: ReviewState) => string | undefined;
  readonly steering: Pick<Steering, 'work'>;
  readonly state: vscode.Memento;
  readonly log: Logger;
}

/**
 * The review after the write, file and side of the diff that `uri` shows: the file itself (`file:`, the right side,
 * `new`), its accepted text (`codespace-review://after.base.…`, the left side, `old`) or the empty right side of a file that
 * is not there (`codespace-review://after.none.…`, a deleted file or a move's source: `new`, with `empty` set) or the file now
 * described (`codespace-review://after.now.…`, a binary file: `new`). The one place
 * that decides which file and side is under the cursor: for the hunk commands and for line comments
 * (`locateAfterWriteComment`), whatever kind of change the file had.
 */
export function reviewOfFile(
  deps: Pick<AfterWriteDeps, 'reviews' | 'rootOf'>,
  uri: vscode.Uri,
): { review: ReviewState; path: string; side: HunkSide; empty: boolean } | undefined {
  const ref = fromAfterUri(uri);
  if (uri.scheme !== 'file' && !ref) return undefined;
  const reviews = ref ? [deps.reviews.get(ref.reviewId)].filter((r): r is ReviewState => r !== undefined) : deps.reviews.list();
  const uriPath = ref ? ref.uriPath : vscode.Uri.file(uri.fsPath).path;
  for (const review of reviews) {
    const root = deps.rootOf(review);
    if (root === undefined) continue;
    const base = vscode.Uri.file(root).path.replace(/\/$/, '');
    const rel = uriPath.startsWith(`${base}/`) ? uriPath.slice(base.length + 1) : undefined;
    if (rel !== undefined && review.files.some((f) => f.path === rel)) return { review, path: rel, side: ref?.side === 'base' ? 'old' : 'new', empty: ref?.side === 'none' };
  }
  return undefined;
}

/**
 * Where a line comment on a file of a work's review after the write goes: to that work, as a work review's comments
 * do (one review_comments instruction on Send Comments to the Agent), on either side of the diff (the accepted text
 * is `old`: a deleted file is commented there). The empty side of a file that is not there takes none. A folder's
 * review without a work has no agent queue to send to, so its files take no comments.
 */
export function locateAfterWriteComment(deps: Pick<AfterWriteDeps, 'reviews' | 'rootOf'>, uri: vscode.Uri): { workId: string; path: string; side: HunkSide } | undefined {
  const at = reviewOfFile(deps, uri);
  if (!at || at.empty) return undefined;
  if (at.side === 'old' && at.review.files.find((f) => f.path === at.path)?.base === null) return undefined;
  return at.review.work_id !== undefined ? { workId: at.review.work_id, path: at.path, side: at.side } : undefined;
}

/** Most characters of accepted text kept in workspaceState; beyond, the largest files are not kept across a reload. */
const MAX_PERSISTED_CHARS = 8 * 1024 * 1024;

/** The snapshot as saved: within MAX_PERSISTED_CHARS of accepted text (the largest files left out, and logged). */
function persisted(snapshot: AfterWriteSnapshot, log: Logger): AfterWriteSnapshot {
  const sizes = snapshot.reviews.flatMap((r) => r.files.map((f) => ({ r: r.id, path: f.path, n: f.base?.length ?? 0 })));
  let total = sizes.reduce((n, x) => n + x.n, 0);
  if (total <= MAX_PERSISTED_CHARS) return snapshot;
  const left = new Set<string>();
  for (const x of sizes.sort((a, b) => b.n - a.n)) {
    if (total <= MAX_PERSISTED_CHARS) break;
    left.add(`${x.r}\0${x.path}`);
    total -= x.n;
    log.info(`[review] ${x.path} (${x.r}) is not kept across a reload: the accepted texts are over ${MAX_PERSISTED_CHARS} characters`);
  }
  return { ...snapshot, reviews: snapshot.reviews.map((r) => ({ ...r, files: r.files.filter((f) => !left.has(`${r.id}\0${f.path}`)) })) };
}

function describe(err: unknown): string {
  return describeError(err);
}

function lines(f: ReviewFileNow): { start_line: number; end_line: number }[] {
  return f.hunks.map((h) => ({ start_line: h.current.start + 1, end_line: h.current.end }));
}

function modeOf(f: ReviewFileNow): { from: string; to: string } | undefined {
  return f.mode ? { from: f.mode.base, to: f.mode.current } : undefined;
}

/** The name a reviewer reads for a file: its path, with what a text diff does not show (binary, a mode change). */
function labelOf(f: ReviewFileNow): string {
  const notes = [...(f.binary ? ['binary'] : []), ...(f.mode ? [modeChangeLabel(f.mode.base, f.mode.current)] : [])];
  return notes.length > 0 ? `${f.path} (${notes.join(', ')})` : f.path;
}

/**
 * Read-only review documents of kind `after`: the accepted text of a file, the empty side of a file that is not there,
 * and for a binary file each side described (binary, size, sha256, mode) instead of its bytes.
 */
class AcceptedTextFileSystem extends ReadOnlyDocuments {
  private readonly started = Date.now();
  private readonly stamps = new Map<string, number>();

  constructor(private readonly deps: AfterWriteDeps) {
    super('CodeSpace: the left side is the accepted text; use Keep or Undo on a change, or edit the file on the right.');
  }

  /** The sides of a review changed (a kept hunk, an undone binary file): open diffs read them again. */
  changed(review: ReviewState, root: string): void {
    const now = Date.now();
    const events: vscode.FileChangeEvent[] = [];
    for (const f of review.files) {
      for (const side of ['base', 'now'] as const) {
        const uri = toAfterUri(review.id, side, root, f.path);
        this.stamps.set(uri.toString(), now);
        events.push({ type: vscode.FileChangeType.Changed, uri });
      }
    }
    if (events.length > 0) this.emitter.fire(events);
  }

  protected async content(uri: vscode.Uri): Promise<Uint8Array> {
    const at = reviewOfFile(this.deps, uri);
    const ref = fromAfterUri(uri);
    if (!at || !ref) throw vscode.FileSystemError.FileNotFound(uri);
    if (at.empty) return new Uint8Array(0);
    const state = at.review.files.find((f) => f.path === at.path);
    if (ref.side === 'base' && state?.base_binary === undefined) {
      // A text accepted side stays text unless the file is binary now (then both sides are described).
      const now = await this.deps.reviews.file(at.review.id, at.path).catch(() => undefined);
      if (!now?.binary) return new TextEncoder().encode(state?.base ?? '');
    }
    let now: ReviewFileNow;
    try {
      now = await this.deps.reviews.file(at.review.id, at.path);
    } catch (err) {
      throw vscode.FileSystemError.Unavailable(`CodeSpace: ${at.path} could not be read: ${describe(err)}`);
    }
    const base = ref.side === 'base';
    return new TextEncoder().encode(binaryDescription(at.path, base ? now.sides.base : now.sides.current, base ? now.mode?.base : now.mode?.current));
  }

  protected override times(uri: vscode.Uri): { ctime: number; mtime: number } {
    return { ctime: this.started, mtime: this.stamps.get(uri.toString()) ?? this.started };
  }
}

export function registerAfterWriteReview(deps: AfterWriteDeps): vscode.Disposable[] {
  const { reviews, log } = deps;
  try {
    reviews.restore(deps.state.get(STATE_KEY));
  } catch (err) {
    log.error('[review] the review after the write could not be restored', describe(err));
  }
  const fs = new AcceptedTextFileSystem(deps);
  const status = vscode.window.createStatusBarItem('codespace.afterWriteReview', vscode.StatusBarAlignment.Right, 99);
  status.name = 'CodeSpace: Review After the Write';
  status.command = COMMANDS.reviewAfterWrite;

  const titleOf = (review: ReviewState): string => {
    const work = review.work_id !== undefined ? deps.steering.work(review.work_id) : undefined;
    return `CodeSpace review after the write: ${work ? visibleString(work.title).slice(0, 80) : review.workspace_id}`;
  };
  // A review's tab: its title, and what the title says of mode changes (` (mode 100644 → 100755: run.sh)`).
  const tabsOf = (title: string): vscode.Tab[] => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label === title || t.label.startsWith(`${title} (`));
  const outcome = (r: AfterWriteResult): AfterWriteResult => {
    if (!r.ok && r.code !== 'CANCELLED' && r.message !== undefined) void vscode.window.showErrorMessage(`CodeSpace: ${r.message}`);
    return r;
  };

  /** The files to review now: with a change left, and not marked reviewed at this content. */
  const pending = async (review: ReviewState): Promise<ReviewFileNow[]> => (await reviews.files(review.id)).filter((f) => f.changed && !f.reviewed);

  // The status bar and the menus' context key, and the saved state, follow every change (coalesced).
  let refreshing: NodeJS.Timeout | undefined;
  const refresh = (): void => {
    if (refreshing) return;
    refreshing = setTimeout(() => {
      refreshing = undefined;
      void (async () => {
        let files = 0;
        let first: ReviewState | undefined;
        for (const r of reviews.list()) {
          try {
            const n = (await pending(r)).length;
            files += n;
            if (n > 0) first ??= r;
          } catch (err) {
            log.info(`[review] ${r.id}: ${describe(err)}`);
          }
        }
        status.text = `$(diff) ${files}`;
        status.tooltip = `CodeSpace: ${files} file${files === 1 ? '' : 's'} written by agents to review (Keep or Undo each change)`;
        if (files > 0) status.show();
        else status.hide();
        await vscode.commands.executeCommand('setContext', CONTEXT_KEY, files > 0);
        await deps.state.update(STATE_KEY, persisted(reviews.snapshot(), log));
      })().catch((err: unknown) => log.error('[review] refreshing the review after the write failed', describe(err)));
    }, 150);
  };

  const pickReview = async (arg: unknown): Promise<ReviewState | undefined> => {
    if (typeof arg === 'string' && arg !== '') return reviews.get(arg);
    const all = reviews.list().filter((r) => r.files.length > 0);
    if (all.length <= 1) return all[0];
    const pick = await vscode.window.showQuickPick(
      all.map((r) => ({ label: titleOf(r).replace(/^CodeSpace review after the write: /, ''), description: `${r.files.length} file(s) · ${r.workspace_id}`, id: r.id })),
      { title: 'CodeSpace: review which changes?' },
    );
    return pick ? reviews.get(pick.id) : undefined;
  };

  /** Opens (or, when the developer asks again, replaces in place) the review's multi-file diff. */
  const open = async (arg?: unknown): Promise<AfterWriteResult> => {
    const review = await pickReview(arg);
    if (!review) {
      if (typeof arg === 'string' && arg !== '') return outcome({ ok: false, code: 'NOT_FOUND', message: `there is no review after the write ${arg}.` });
      void vscode.window.showInformationMessage('CodeSpace: nothing written by agents is waiting for review (set codespace.review.mode to "after" to review after the write).');
      return { ok: false, code: 'NO_CHANGES' };
    }
    const root = deps.rootOf(review);
    if (root === undefined) return outcome({ ok: false, code: 'NOT_FOUND', review: review.id, message: `the folder ${review.workspace_id} of this review is not open in this window.` });
    const files = await pending(review);
    const title = titleOf(review);
    const old = tabsOf(title);
    if (files.length === 0) {
      if (old.length > 0) await vscode.window.tabGroups.close(old, true);
      void vscode.window.showInformationMessage(`CodeSpace: every change of "${title.replace(/^CodeSpace review after the write: /, '')}" is kept, undone or reviewed.`);
      return { ok: false, code: 'NO_CHANGES', review: review.id, files: [] };
    }
    const shown = files.map((f) => {
      // A binary file is described on both sides (the file now on the right: its bytes are not text to show).
      const right = f.current === null ? toAfterUri(review.id, 'none', root, f.path) : f.binary ? toAfterUri(review.id, 'now', root, f.path) : vscode.Uri.file(path.join(root, ...f.path.split('/')));
      return { f, left: toAfterUri(review.id, 'base', root, f.path), right };
    });
    const label = `${title}${modeChangesSuffix(files.map((f) => ({ path: f.path, mode: modeOf(f) })))}`;
    await vscode.commands.executeCommand('vscode.changes', label, shown.map((s) => [s.right, s.left, s.right]));
    // One review per work: the tab it replaces goes (the new one is open first, so the group does not jump).
    const live = new Set(vscode.window.tabGroups.all.flatMap((g) => g.tabs));
    const stale = old.filter((t) => !t.isActive && live.has(t));
    // A tab the new one replaced is gone already: closing it is then not needed.
    if (stale.length > 0) await vscode.window.tabGroups.close(stale, true).then(undefined, (err: unknown) => log.info(`[review] an earlier review tab was already gone: ${describe(err)}`));
    log.info(`[review] ${review.id} opened after the write: ${files.length} file(s)`);
    return {
      ok: true,
      review: review.id,
      files: shown.map((s) => {
        const mode = modeOf(s.f);
        return { path: s.f.path, hunks: lines(s.f), binary: s.f.binary, ...(mode ? { mode } : {}), label: labelOf(s.f), left: s.left.toString(), right: s.right.toString() };
      }),
    };
  };

  /**
   * The review, file, side and line a hunk command acts on: its arguments, or the cursor of the editor showing the
   * document (either side of the diff: the file, its accepted text, or the empty side of a file that is not there).
   */
  const target = async (arg: unknown, lineArg: unknown): Promise<{ review: ReviewState; path: string; line: number; side: HunkSide } | AfterWriteResult> => {
    let uri: vscode.Uri | undefined;
    let line: number | undefined = typeof lineArg === 'number' ? lineArg : undefined;
    if (arg instanceof vscode.Uri) uri = arg;
    else if (typeof arg === 'object' && arg !== null && typeof (arg as { review?: unknown }).review === 'string') {
      const a = arg as { review: string; path?: unknown; line?: unknown; side?: unknown };
      const review = reviews.get(a.review);
      if (!review) return outcome({ ok: false, code: 'NOT_FOUND', message: `there is no review after the write ${a.review}.` });
      if (typeof a.path !== 'string') return outcome({ ok: false, code: 'NOT_FOUND', message: 'name the file of the review.' });
      if (a.side !== undefined && a.side !== 'old' && a.side !== 'new') return outcome({ ok: false, code: 'NOT_FOUND', message: 'side is "old" (the accepted text) or "new" (the file).' });
      return { review, path: a.path, line: typeof a.line === 'number' ? a.line : -1, side: a.side === 'old' ? 'old' : 'new' };
    }
    const active = vscode.window.activeTextEditor;
    uri ??= active?.document.uri;
    // The cursor of the editor showing the document: the active one, else a visible one (a side of a multi-file diff).
    const key = uri?.toString();
    const editor = [...(active ? [active] : []), ...vscode.window.visibleTextEditors].find((e) => e.document.uri.toString() === key);
    if (line === undefined && editor) line = editor.selection.active.line;
    if (!uri) return outcome({ ok: false, code: 'NOT_FOUND', message: 'put the cursor in a change of the review after the write first.' });
    const at = reviewOfFile(deps, uri);
    if (at) return { review: at.review, path: at.path, side: at.side, line: line ?? -1 };
    const name = uri.scheme === 'file' ? vscode.workspace.asRelativePath(uri) : uri.toString();
    return outcome({ ok: false, code: 'NOT_FOUND', message: `${name} is in no review after the write.` });
  };

  const failed = (err: unknown, review: string, file: string): AfterWriteResult => {
    if (ToolError.is(err)) return outcome({ ok: false, code: err.code === 'INVALID_ARGUMENTS' ? 'NO_HUNK' : err.code, message: err.message, review, path: file });
    log.error('[review] a review action failed', describe(err));
    return outcome({ ok: false, code: 'INTERNAL', message: `the action failed: ${describe(err)}`, review, path: file });
  };

  const keep = async (arg?: unknown, line?: unknown): Promise<AfterWriteResult> => {
    const t = await target(arg, line);
    if ('ok' in t) return t;
    try {
      await reviews.keep(t.review.id, t.path, t.line, t.side);
      return { ok: true, review: t.review.id, path: t.path };
    } catch (err) {
      return failed(err, t.review.id, t.path);
    }
  };

  const undo = async (arg?: unknown, line?: unknown): Promise<AfterWriteResult> => {
    const t = await target(arg, line);
    if ('ok' in t) return t;
    try {
      const { notice } = await reviews.undo(t.review.id, t.path, t.line, t.side);
      return { ok: true, review: t.review.id, path: t.path, notice };
    } catch (err) {
      return failed(err, t.review.id, t.path);
    }
  };

  const markReviewed = async (arg?: unknown): Promise<AfterWriteResult> => {
    const t = await target(arg, -1);
    if ('ok' in t) return t;
    try {
      await reviews.markReviewed(t.review.id, t.path);
      // The file leaves the review: the open review is shown again without it.
      if (tabsOf(titleOf(t.review)).length > 0) await open(t.review.id);
      return { ok: true, review: t.review.id, path: t.path, reviewed: true };
    } catch (err) {
      return failed(err, t.review.id, t.path);
    }
  };

  const clear = async (arg?: unknown): Promise<AfterWriteResult> => {
    const review = await pickReview(arg);
    if (!review) return { ok: false, code: 'CANCELLED' };
    const old = tabsOf(titleOf(review));
    reviews.clear(review.id);
    if (old.length > 0) await vscode.window.tabGroups.close(old, true);
    return { ok: true, review: review.id };
  };

  const watching = reviews.onDidChange((id) => {
    const review = reviews.get(id);
    const root = review && deps.rootOf(review);
    if (review && root !== undefined) fs.changed(review, root);
    refresh();
  });
  // A file edited by hand changes its hunks (and may clear its mark): the count follows.
  const saved = vscode.workspace.onDidSaveTextDocument(() => refresh());
  refresh();

  return [
    fs,
    status,
    watching,
    saved,
    { dispose: () => refreshing && clearTimeout(refreshing) },
    reviewDocuments.serve(['after'], fs),
    vscode.commands.registerCommand(COMMANDS.reviewAfterWrite, open),
    vscode.commands.registerCommand(COMMANDS.keepChange, keep),
    vscode.commands.registerCommand(COMMANDS.undoChange, undo),
    vscode.commands.registerCommand(COMMANDS.markFileReviewed, markReviewed),
    vscode.commands.registerCommand(COMMANDS.clearAfterWriteReview, clear),
  ];
}
