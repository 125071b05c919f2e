import { createHash } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { OperationRecord } from '../../../kernel/ledger/operationRecord';
import type { Logger } from '../../../base/logger';
import type { WorkTreeChangeKind, WorkTreeRepo } from '../common/workTree';
import type { CommentSide } from '../../../kernel/approvals/reviewComments';
import { binaryDescription, isReviewText, modeChangeLabel, modeChangesSuffix, sideInfo } from '../../review';
import type { Steering, WorkView } from '../common/steering';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { gitApi, gitRepository } from './gitApi';
import { fromReviewUri, reviewDocuments, toReviewUri, validPath } from '../../review/vscode';
import { ReadOnlyDocuments } from '../../review/vscode';
import { describeError } from '../../../base/describeError';

/**
 * The review of a whole work: every file that differs between the baseline captured at work_open (a git tree)
 * and the workspace folder now, whoever changed it, in one multi-file diff (`vscode.changes`). The left side is
 * the baseline's content, a read-only review document (kind `work`); the right side is the file on disk. When the
 * review opens, the sha256 and git blob id of each right side are recorded; Commit Reviewed Work commits exactly
 * those bytes through the Git extension, or refuses.
 */
/** More changed files than this are not opened as one review (the multi-file diff editor would crawl). */
export const MAX_REVIEW_FILES = 500;

/** `baseline`, `deleted` (the empty right side of a deleted file); `binary-baseline`, `binary-now`: the sides of a binary file, described. */
type WorkSide = 'baseline' | 'deleted' | 'binary-baseline' | 'binary-now';

/**
 * `codespace-review://work.baseline.<work id>/<path of the file on disk>` (the left side) and
 * `codespace-review://work.deleted.<work id>/<…>` (the empty right side of a deleted file). The path is the one of
 * the file's `file:` URI, so both sides of a file share it: the multi-file diff editor flags a rename whenever the
 * two paths differ.
 */
export function toWorkUri(workId: string, side: WorkSide, root: string, file: string): vscode.Uri {
  if (!validPath(file)) throw new Error(`work URI: invalid path ${JSON.stringify(file)}`);
  return toReviewUri({ kind: 'work', side, id: workId, path: vscode.Uri.file(diskPath(root, file)).path });
}

const WORK_SIDES: readonly string[] = ['baseline', 'deleted', 'binary-baseline', 'binary-now'] satisfies readonly WorkSide[];

/** The work, side and `file:` URI path a work URI names, or undefined for anything else. */
export function fromWorkUri(uri: vscode.Uri): { workId: string; side: WorkSide; uriPath: string } | undefined {
  const ref = fromReviewUri(uri);
  if (ref?.kind !== 'work' || !WORK_SIDES.includes(ref.side)) return undefined;
  return { workId: ref.id, side: ref.side as WorkSide, uriPath: ref.path };
}

/** The workspace-relative path of a work URI's file under `root`, or undefined when it is not under it. */
function relativeTo(root: string, uriPath: string): string | undefined {
  const base = vscode.Uri.file(root).path.replace(/\/$/, '');
  if (!uriPath.startsWith(`${base}/`)) return undefined;
  const rel = uriPath.slice(base.length + 1);
  return validPath(rel) ? rel : undefined;
}

/** One file of an open review, with what its right side held when the review opened (null: no file). */
export interface ReviewedFile {
  readonly path: string;
  readonly kind: WorkTreeChangeKind;
  /** Either side is not text: both sides are described (binary, size, sha256) instead of shown. */
  readonly binary: boolean;
  /** The git modes before and after, when the mode changed (alone, or with the content). */
  readonly mode?: { readonly from: string; readonly to: string };
  /** How the file is named to the reviewer: `run.sh (mode 100644 → 100755)`, `logo.png (binary)`. */
  readonly label: string;
  readonly sha256: string | null;
  readonly blob: string | null;
  readonly left: vscode.Uri;
  readonly right: vscode.Uri;
}

export interface WorkReviewSession {
  readonly workId: string;
  readonly title: string;
  readonly root: string;
  readonly openedAt: string;
  readonly files: readonly ReviewedFile[];
}

/** What the commands return (to a test, or to a caller that wants to know). */
export interface WorkReviewResult {
  readonly ok: boolean;
  /** NOT_FOUND, NO_BASELINE, NO_CHANGES, TOO_MANY_FILES, CANCELLED, CHANGED_SINCE_REVIEW, UNSAVED_EDITS, INDEX_NOT_EMPTY, NOTHING_TO_COMMIT, GIT_UNAVAILABLE, NOT_REVIEWED, STAGED_DIFFERS, COMMIT_DIFFERS, COMMIT_FAILED */
  readonly code?: string;
  readonly message?: string;
  readonly work_id?: string;
  readonly files?: readonly WorkReviewFileShown[];
  readonly commit?: string;
  /** NO_BASELINE: the files patched under the work (the fallback list). */
  readonly patched?: readonly string[];
}

/** A file of a review as the commands answer it. */
export interface WorkReviewFileShown {
  readonly path: string;
  readonly kind: WorkTreeChangeKind;
  readonly binary: boolean;
  readonly mode?: { readonly from: string; readonly to: string };
  readonly label: string;
  readonly left: string;
  readonly right: string;
}

function shownOf(f: ReviewedFile): WorkReviewFileShown {
  return { path: f.path, kind: f.kind, binary: f.binary, ...(f.mode ? { mode: f.mode } : {}), label: f.label, left: f.left.toString(), right: f.right.toString() };
}

export interface WorkReviewDeps {
  readonly steering: Pick<Steering, 'work' | 'works'>;
  readonly tree: WorkTreeRepo;
  readonly workspaceRoot: (workspaceId: string) => string | undefined;
  /** The patch ledger's records: the files patched under a work are the list shown when it has no baseline. */
  readonly patchRecords: () => readonly Pick<OperationRecord, 'work_id' | 'files'>[];
  readonly log: Logger;
}

const EMPTY = new Uint8Array(0);

function message(err: unknown): string {
  return describeError(err);
}

function names(paths: readonly string[]): string {
  return paths.length <= 5 ? paths.join(', ') : `${paths.slice(0, 5).join(', ')} and ${paths.length - 5} more`;
}

function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function diskPath(root: string, file: string): string {
  return path.join(root, ...file.split('/'));
}

async function readDisk(root: string, file: string): Promise<Uint8Array | null> {
  try {
    return await vscode.workspace.fs.readFile(vscode.Uri.file(diskPath(root, file)));
  } catch (err) {
    if (err instanceof vscode.FileSystemError && (err.code === 'FileNotFound' || err.code === 'FileIsADirectory')) return null;
    throw err;
  }
}

/**
 * Read-only review documents of kind `work`: a work's baseline content, the empty right side of a deleted file, and
 * both sides of a binary file described (binary, size, sha256) instead of shown.
 */
class WorkBaselineFileSystem extends ReadOnlyDocuments {
  constructor(private readonly deps: WorkReviewDeps) {
    super('CodeSpace: the left side shows the file as it was when the work opened; edit the file itself on the right.');
  }

  protected async content(uri: vscode.Uri): Promise<Uint8Array> {
    const ref = fromWorkUri(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    const work = this.deps.steering.work(ref.workId);
    const root = work && workRoot(work, this.deps.workspaceRoot);
    const file = root === undefined ? undefined : relativeTo(root, ref.uriPath);
    if (!work || root === undefined || file === undefined || !this.deps.tree.readable(work.baseline)) throw vscode.FileSystemError.FileNotFound(uri);
    if (ref.side === 'deleted') return EMPTY;
    if (ref.side === 'binary-now') {
      const now = await readDisk(root, file);
      return new TextEncoder().encode(binaryDescription(file, now === null ? null : sideInfo(now)));
    }
    let bytes: Uint8Array | undefined;
    try {
      bytes = await this.deps.tree.baselineContent(root, work.baseline as string, file);
    } catch (err) {
      throw vscode.FileSystemError.Unavailable(`CodeSpace: the baseline of ${file} could not be read: ${message(err)}`);
    }
    if (ref.side === 'binary-baseline') return new TextEncoder().encode(binaryDescription(file, bytes === undefined ? null : sideInfo(bytes)));
    // A file the work added has no baseline: its left side is empty.
    return bytes ?? EMPTY;
  }

  /** Documents to read again (a binary file's description, which follows the file). */
  changed(uris: readonly vscode.Uri[]): void {
    if (uris.length > 0) this.emitter.fire(uris.map((uri) => ({ type: vscode.FileChangeType.Changed, uri })));
  }

  /** The work's opening time: the baseline is the files as they were then. */
  protected override times(uri: vscode.Uri): { ctime: number; mtime: number } {
    const opened = Date.parse(this.deps.steering.work(fromWorkUri(uri)?.workId ?? '')?.opened_at ?? '');
    const t = Number.isFinite(opened) ? opened : 0;
    return { ctime: t, mtime: t };
  }
}

/** For the in-editor tests: the open review sessions (in-process only; no agent reaches it). */
export interface WorkReviewForTests {
  session(workId: string): WorkReviewSession | undefined;
}

export function registerWorkReview(deps: WorkReviewDeps): {
  disposables: vscode.Disposable[];
  forTests: WorkReviewForTests;
  /** The open work review a document belongs to (either side of one of its files), the file's path and the side, for review comments. */
  locate: (uri: vscode.Uri) => { workId: string; path: string; side: CommentSide } | undefined;
} {
  const { steering, tree, log } = deps;
  const sessions = new Map<string, WorkReviewSession>();
  const fs = new WorkBaselineFileSystem(deps);
  // Commits run one after another: two at once would stage into the same index.
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(op: () => Promise<T>): Promise<T> => {
    const next = chain.then(op, op);
    chain = next.catch(() => undefined);
    return next;
  };

  const refuse = (code: string, text: string, extra: Partial<WorkReviewResult> = {}): WorkReviewResult => {
    void vscode.window.showErrorMessage(`CodeSpace: ${text}`);
    log.info(`[work-review] ${code}: ${text}`);
    return { ok: false, code, message: text, ...extra };
  };

  const pickWork = async (arg: unknown, title: string, candidates: WorkView[]): Promise<WorkView | undefined> => {
    if (typeof arg === 'string' && arg !== '') return steering.work(arg);
    if (candidates.length === 1) return candidates[0];
    if (candidates.length === 0) return undefined;
    const pick = await vscode.window.showQuickPick(
      candidates.map((w) => ({ label: visibleString(w.title), description: `${w.status} · ${w.workspace_id}`, detail: `opened ${new Date(w.opened_at).toLocaleString()}`, id: w.id })),
      { title, placeHolder: 'Pick a work' },
    );
    return pick ? steering.work(pick.id) : undefined;
  };

  const reviewWork = async (arg?: unknown): Promise<WorkReviewResult> => {
    const all = steering.works();
    const work = await pickWork(arg, 'CodeSpace: review which work?', [...all.filter((w) => w.status === 'finished'), ...all.filter((w) => w.status === 'open')]);
    if (!work) {
      if (typeof arg === 'string' && arg !== '') return refuse('NOT_FOUND', `there is no work ${arg}.`);
      if (all.length === 0) void vscode.window.showInformationMessage('CodeSpace: no work to review yet (an agent opens one with work_open).');
      return { ok: false, code: 'CANCELLED' };
    }
    const root = workRoot(work, deps.workspaceRoot);
    if (!root) return refuse('NOT_FOUND', `the workspace ${work.workspace_id} of this work is not open in this window.`, { work_id: work.id });
    if (!tree.readable(work.baseline)) {
      const patched = [...new Set(deps.patchRecords().filter((r) => r.work_id === work.id).flatMap((r) => r.files.flatMap((f) => (f.move_to ? [f.path, f.move_to] : [f.path]))))];
      const list = patched.length === 0 ? 'no file was patched under it' : `files patched under it: ${names(patched)}`;
      const text = `this work has no git baseline (its folder is not a git repository, or git was not found when it opened), so its changes cannot be shown as one diff; ${list}.`;
      void vscode.window.showWarningMessage(`CodeSpace: ${text}`);
      return { ok: false, code: 'NO_BASELINE', message: text, work_id: work.id, patched };
    }
    let changes;
    try {
      changes = await tree.changes(root, work.baseline as string);
    } catch (err) {
      return refuse('GIT_UNAVAILABLE', `the changes of the work could not be listed: ${message(err)}`, { work_id: work.id });
    }
    if (changes.length === 0) {
      void vscode.window.showInformationMessage(`CodeSpace: nothing changed in ${work.workspace_id} since the work "${visibleString(work.title)}" opened.`);
      sessions.delete(work.id);
      return { ok: false, code: 'NO_CHANGES', work_id: work.id, files: [] };
    }
    if (changes.length > MAX_REVIEW_FILES) {
      return refuse('TOO_MANY_FILES', `${changes.length} files changed since the work opened, more than a review shows (${MAX_REVIEW_FILES}); commit them with git itself.`, { work_id: work.id });
    }
    const files: ReviewedFile[] = [];
    for (const c of [...changes].sort((a, b) => a.path.localeCompare(b.path))) {
      const bytes = c.kind === 'delete' ? null : await readDisk(root, c.path);
      const kind: WorkTreeChangeKind = bytes === null ? 'delete' : c.kind;
      let baseline: Uint8Array | undefined;
      try {
        baseline = c.kind === 'add' ? undefined : await tree.baselineContent(root, work.baseline as string, c.path);
      } catch (err) {
        return refuse('GIT_UNAVAILABLE', `the baseline of ${c.path} could not be read: ${message(err)}`, { work_id: work.id });
      }
      // Binary on either side (the patch engine's rule): both sides are described, never shown as text.
      const binary = [bytes, baseline].some((b) => b !== null && b !== undefined && !isReviewText(b));
      const notes = [...(binary ? ['binary'] : []), ...(c.mode ? [modeChangeLabel(c.mode.from, c.mode.to)] : [])];
      files.push({
        path: c.path,
        kind,
        binary,
        ...(c.mode ? { mode: c.mode } : {}),
        label: notes.length > 0 ? `${c.path} (${notes.join(', ')})` : c.path,
        sha256: bytes === null ? null : sha256(bytes),
        blob: bytes === null ? null : await tree.blobId(root, bytes),
        left: toWorkUri(work.id, binary ? 'binary-baseline' : 'baseline', root, c.path),
        right: binary ? toWorkUri(work.id, 'binary-now', root, c.path) : bytes === null ? toWorkUri(work.id, 'deleted', root, c.path) : vscode.Uri.file(diskPath(root, c.path)),
      });
    }
    const session: WorkReviewSession = { workId: work.id, title: work.title, root, openedAt: new Date().toISOString(), files };
    sessions.set(work.id, session);
    // The title says what no diff shows: the files whose mode changed.
    const label = `${workReviewLabel(work)}${modeChangesSuffix(files)}`;
    fs.changed(files.filter((f) => f.binary).flatMap((f) => [f.left, f.right]));
    await vscode.commands.executeCommand(
      'vscode.changes',
      label,
      files.map((f) => [f.right, f.left, f.right]),
    );
    log.info(`[work-review] review of ${work.id} opened: ${files.length} file(s)`);
    return { ok: true, work_id: work.id, files: files.map(shownOf) };
  };

  const commit = async (arg?: unknown, messageArg?: unknown): Promise<WorkReviewResult> => {
    const reviewed = [...sessions.values()].map((s) => steering.work(s.workId)).filter((w): w is WorkView => w !== undefined);
    const work = await pickWork(arg, 'CodeSpace: commit which reviewed work?', reviewed);
    if (!work) {
      if (typeof arg === 'string' && arg !== '') return refuse('NOT_FOUND', `there is no work ${arg}.`);
      if (reviewed.length === 0) return refuse('NOT_REVIEWED', 'no work review is open: run "Review Work…" first, then commit what you reviewed.');
      return { ok: false, code: 'CANCELLED' };
    }
    const session = sessions.get(work.id);
    if (!session) return refuse('NOT_REVIEWED', `the work "${visibleString(work.title)}" has not been reviewed in this window: run "Review Work…" first.`, { work_id: work.id });
    const text =
      typeof messageArg === 'string'
        ? messageArg
        : await vscode.window.showInputBox({
            title: `Commit the reviewed work "${visibleString(work.title)}" (${session.files.length} file${session.files.length === 1 ? '' : 's'})`,
            prompt: 'Commit message. Only the reviewed files are staged, with exactly the content the review opened with.',
            value: work.title,
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() === '' ? 'A commit message is needed.' : undefined),
          });
    if (text === undefined) return { ok: false, code: 'CANCELLED', work_id: work.id };
    if (text.trim() === '') return refuse('CANCELLED', 'a commit needs a message.', { work_id: work.id });
    return serial(() => commitSession(session, text));
  };

  const commitSession = async (session: WorkReviewSession, text: string): Promise<WorkReviewResult> => {
    const { root, files, workId } = session;
    const at = { work_id: workId };
    // 1. What the reviewer saw is what is on disk: no unsaved edit, no change since the review opened.
    const dirty = files.filter((f) => vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.scheme === 'file' && d.uri.fsPath === diskPath(root, f.path))).map((f) => f.path);
    if (dirty.length > 0) return refuse('UNSAVED_EDITS', `not committed: ${names(dirty)} ha${dirty.length === 1 ? 's' : 've'} unsaved edits. Save or revert them, review the work again, then commit.`, at);
    const changed: string[] = [];
    for (const f of files) {
      const now = await readDisk(root, f.path);
      if ((now === null ? null : sha256(now)) !== f.sha256) changed.push(f.path);
    }
    if (changed.length > 0) return refuse('CHANGED_SINCE_REVIEW', `not committed: ${names(changed)} changed after the review opened. Review the work again to see the change, then commit.`, at);

    // 2. The Git extension, and an index holding nothing else.
    const api = await gitApi();
    if (typeof api === 'string') return refuse('GIT_UNAVAILABLE', `not committed: ${api}.`, at);
    const repo = await gitRepository(api, vscode.Uri.file(root));
    if (!repo) return refuse('GIT_UNAVAILABLE', `not committed: the Git extension found no repository at ${root}.`, at);
    await repo.status();
    const staged = [...new Set([...(await tree.stagedPaths(root)), ...repo.state.indexChanges.map((c) => path.relative(repo.rootUri.fsPath, c.uri.fsPath).split(path.sep).join('/'))])];
    if (staged.length > 0) {
      return refuse('INDEX_NOT_EMPTY', `not committed: the index already holds staged changes (${names(staged)}). A reviewed commit stages only the reviewed files; commit or unstage those first.`, at);
    }

    // 3. Stage only the reviewed files (a deletion only if git tracks the file), then check the index holds exactly the reviewed bytes.
    const index = await tree.indexBlobs(root, files.map((f) => f.path));
    const toStage = files.filter((f) => f.blob !== null || index.get(f.path) !== undefined);
    if (toStage.length === 0) return refuse('NOTHING_TO_COMMIT', 'not committed: none of the reviewed changes is one git would record (untracked files that were deleted again).', at);
    const abs = toStage.map((f) => diskPath(root, f.path));
    const unstage = async (): Promise<void> => {
      try {
        await repo.revert(abs);
      } catch (err) {
        log.error('[work-review] unstaging after a refused commit failed', message(err));
      }
    };
    try {
      await repo.add(abs);
    } catch (err) {
      await unstage();
      return refuse('COMMIT_FAILED', `not committed: staging failed: ${message(err)}`, at);
    }
    const after = await tree.indexBlobs(root, toStage.map((f) => f.path));
    const differs = toStage.filter((f) => (after.get(f.path) ?? null) !== f.blob).map((f) => f.path);
    const reviewedPaths = new Set(files.map((f) => f.path));
    /** Repository-relative paths that are not files of the review. */
    const outside = async (repoPaths: readonly string[]): Promise<string[]> => {
      const out: string[] = [];
      for (const p of repoPaths) {
        const w = await tree.toWorkspacePath(root, p);
        if (w === undefined || !reviewedPaths.has(w)) out.push(p);
      }
      return out;
    };
    const nowStaged = await tree.stagedPaths(root);
    const extra = await outside(nowStaged);
    if (differs.length > 0 || extra.length > 0) {
      await unstage();
      const why = differs.length > 0 ? `the staged content of ${names(differs)} is not the reviewed bytes (changed while staging, or a git clean filter or line-ending conversion rewrote it)` : `other files were staged meanwhile (${names(extra)})`;
      return refuse('STAGED_DIFFERS', `not committed: ${why}.`, at);
    }
    if (nowStaged.length === 0) {
      return refuse('NOTHING_TO_COMMIT', 'not committed: the reviewed files are already as HEAD has them.', at);
    }

    // 4. Commit (hooks off: a hook could change what is committed), then check the commit against the review.
    try {
      await repo.commit(text, { noVerify: true });
    } catch (err) {
      await unstage();
      return refuse('COMMIT_FAILED', `the commit failed: ${message(err)}`, at);
    }
    const head = await tree.head(root);
    if (!head) return refuse('COMMIT_FAILED', 'the commit did not happen (HEAD names no commit).', at);
    const inCommit = await tree.commitBlobs(root, head, files.map((f) => f.path));
    const wrong = files.filter((f) => (inCommit.get(f.path) ?? null) !== f.blob && (f.blob !== null || index.get(f.path) !== undefined)).map((f) => f.path);
    const touched = await outside(await tree.commitChangedPaths(root, head));
    if (wrong.length > 0 || touched.length > 0) {
      return refuse('COMMIT_DIFFERS', `commit ${head.slice(0, 10)} was made but differs from the review (${names([...wrong, ...touched])}): inspect it before pushing.`, { ...at, commit: head });
    }
    sessions.delete(workId);
    log.info(`[work-review] work ${workId} committed as ${head} (${toStage.length} file(s))`);
    void vscode.window.showInformationMessage(`CodeSpace: committed ${head.slice(0, 10)}: the ${toStage.length} reviewed file${toStage.length === 1 ? '' : 's'} of "${visibleString(session.title)}".`);
    return { ok: true, work_id: workId, commit: head, files: toStage.map(shownOf) };
  };

  return {
    disposables: [
      fs,
      reviewDocuments.serve(['work'], fs),
      vscode.commands.registerCommand(COMMANDS.reviewWork, reviewWork),
      vscode.commands.registerCommand(COMMANDS.commitReviewedWork, commit),
    ],
    forTests: { session: (id) => sessions.get(id) },
    locate: (uri) => {
      // Either side: the file on disk (new) or its baseline (old); the empty side of an added or deleted file, none.
      const key = uri.toString();
      for (const session of sessions.values()) {
        for (const file of session.files) {
          if (file.kind !== 'delete' && file.right.toString() === key) return { workId: session.workId, path: file.path, side: 'new' };
          if (file.kind !== 'add' && file.left.toString() === key) return { workId: session.workId, path: file.path, side: 'old' };
        }
      }
      return undefined;
    },
  };
}

/** The title of a work's review tab. */
export function workReviewLabel(work: Pick<WorkView, 'title'>): string {
  return `CodeSpace work review: ${visibleString(work.title).slice(0, 80)}`;
}

/** Where a work's changes are: its own worktree of its workspace, or the workspace folder itself. */
function workRoot(work: WorkView, workspaceRoot: (id: string) => string | undefined): string | undefined {
  return work.worktrees?.find((t) => t.workspace_id === work.workspace_id)?.root ?? workspaceRoot(work.workspace_id);
}
