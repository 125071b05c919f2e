import { randomBytes } from 'node:crypto';
import type { Disposable } from '../../base/disposable';
import { ToolError } from '../errors';
import type { ReviewMode } from '../approvals/holdPolicy';
import type { ApplyPatchResult, PatchIntent, PatchService, RestoreRequest } from '../patch/patchService';
import { contentVersion } from '../patch/version';
import type { Logger } from '../ports/logger';
import type { WorkspaceFs } from '../ports/workspaceFs';
import { confine, failureCode, realRootOf } from '../policy/paths';
import type { Workspace, WorkspaceRegistry } from '../policy/workspaces';
import { occupancyScope } from '../policy/workspaces';
import { Emitter } from '../../base/emitter';
import type { Hunk } from './afterWriteHunks';
import type { HunkSide } from './afterWriteHunks';
import { hunkAtLine, hunksOf, keepHunk, linesOn, undoHunk, undoPatch } from './afterWriteHunks';
import { describeError, describeErrorWithStack } from '../../base/describeError';

/**
 * Review after the write (`codespace.review.mode` `after`): what CodeSpace's patches wrote stays open to review, one
 * review per work (`work:<id>`, the patches that named it) or, for patches without a work, one per workspace
 * (`workspace:<id>`, since the review was last cleared). Each file of a review keeps its accepted text: the file
 * before the review's first write to it, with the hunks the reviewer kept. The hunks are what differs between that
 * and the file now, whoever changed it since. Keep moves a hunk into the accepted text; Undo writes the hunk's
 * reverse through the patch engine (version precondition, ledger record, all or nothing) and tells the agent on its
 * next answer (`review_update`). Mark as Reviewed hides a file until its content changes again.
 */

/** One file of a review: the accepted text (null: no file), the version marked reviewed, the sessions that wrote it. */
export interface ReviewFileState {
  readonly path: string;
  readonly base: string | null;
  readonly reviewed_version?: string;
  readonly sessions: readonly string[];
}

export interface ReviewState {
  /** `work:<work id>` or `workspace:<workspace id>`. */
  readonly id: string;
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly files: readonly ReviewFileState[];
}

/** What the agent is told of an undone hunk, on its next answer (`review_update`). */
export interface ReviewUndone {
  readonly action: 'undone';
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly path: string;
  /** The lines of the agent's version the undo replaced (1-based, inclusive; end_line = start_line − 1: none, the text went back before start_line). */
  readonly range: { readonly start_line: number; readonly end_line: number };
  /** Those lines' text (what was undone). */
  readonly undone: string;
  /** The text put back in their place (what the file had before). */
  readonly restored: string;
  /** The file's version after the undo (absent: the undo deleted the file the agent added). */
  readonly version?: string;
  /** The ledger record of the undo. */
  readonly operation_id: string;
}

/** A file of a review as it stands now. */
export interface ReviewFileNow {
  readonly path: string;
  readonly base: string | null;
  /** The file's text now (null: no file). */
  readonly current: string | null;
  /** The version now (absent: no file). */
  readonly version?: string;
  readonly hunks: readonly Hunk[];
  /** Marked reviewed at exactly this content. */
  readonly reviewed: boolean;
}

export interface AfterWriteSnapshot {
  readonly reviews: readonly ReviewState[];
  readonly notices: readonly { readonly sessions: readonly string[]; readonly notice: ReviewUndone }[];
}

export interface AfterWriteOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly patches: PatchService;
  readonly mode: (workspaceId: string) => ReviewMode;
  readonly logger: Logger;
  /**
   * A file's content in a work's baseline (captured at work_open): its bytes, null when the baseline has no such
   * file, undefined when the work has no baseline. Absent: every file starts from its content before the first write.
   */
  readonly baseline?: (workspaceId: string, workId: string, path: string) => Promise<Uint8Array | null | undefined>;
}

/** Largest file a review keeps the accepted text of (a larger one is not followed). */
export const MAX_REVIEW_FILE_BYTES = 4 * 1024 * 1024;
/** Undo notices kept for agents that have not answered since (the oldest go first). */
const MAX_NOTICES = 200;
/** Sessions remembered per file. */
const MAX_SESSIONS_PER_FILE = 8;

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

function decode(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

export function reviewIdOf(workspaceId: string, workId: string | undefined): string {
  return workId !== undefined ? `work:${workId}` : `workspace:${workspaceId}`;
}

interface MutableReview {
  readonly id: string;
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly files: Map<string, ReviewFileState>;
}

export class AfterWriteReviews implements Disposable {
  private readonly reviews = new Map<string, MutableReview>();
  private readonly written = new Map<string, { review: string; paths: string[] }>();
  private notices: { sessions: readonly string[]; notice: ReviewUndone }[] = [];
  private readonly changes: Emitter<string>;

  constructor(private readonly options: AfterWriteOptions) {
    this.changes = new Emitter<string>((err) => options.logger.error('[review] a listener failed', describeErrorWithStack(err)));
  }

  /** Fires with a review's id when its files, accepted texts or marks change. */
  onDidChange(listener: (reviewId: string) => void): Disposable {
    return this.changes.on(listener);
  }

  mode(workspaceId: string): ReviewMode {
    return this.options.mode(workspaceId);
  }

  /**
   * A committed patch (called by apply_patch's commit, direct or resumed): in a workspace reviewed after the write,
   * each text file it wrote joins the review of its work (or workspace), with the text it had before as its
   * accepted text when it is new to the review.
   */
  async recordCommit(intent: PatchIntent, result: ApplyPatchResult): Promise<void> {
    if (result.status !== 'applied' || intent.request.check_only === true) return;
    const workspaceId = intent.ws.id;
    if (this.options.mode(workspaceId) !== 'after') return;
    const workId = intent.request.work_id;
    const review = this.open(workspaceId, workId);
    const paths: string[] = [];
    const fromBaseline = async (path: string): Promise<Uint8Array | null | undefined> => {
      if (workId === undefined || !this.options.baseline) return undefined;
      try {
        return await this.options.baseline(workspaceId, workId, path);
      } catch (err) {
        this.options.logger.info(`[review] the baseline of ${path} could not be read (${describeError(err)}): it starts from its content before the write`);
        return undefined;
      }
    };
    const enter = async (path: string, written: Uint8Array | undefined): Promise<void> => {
      paths.push(path);
      if (review.files.has(path)) return;
      // A work's file starts from the work's baseline when it has one, else from its content before this write.
      const known = await fromBaseline(path);
      const before = known === undefined ? written : (known ?? undefined);
      if (before !== undefined && before.byteLength > MAX_REVIEW_FILE_BYTES) {
        this.options.logger.info(`[review] ${path} is over ${MAX_REVIEW_FILE_BYTES} bytes: not in the review after the write`);
        return;
      }
      const base = before === undefined ? null : decode(before);
      if (base === undefined) {
        this.options.logger.info(`[review] ${path} is not UTF-8 text: not in the review after the write`);
        return;
      }
      review.files.set(path, { path, base, sessions: [] });
    };
    for (const f of intent.planned.files) {
      if (f.kind === 'move' && f.move_to !== undefined) {
        await enter(f.path, f.before);
        await enter(f.move_to, undefined);
      } else await enter(f.path, f.kind === 'add' ? undefined : f.before);
    }
    this.written.set(result.operation_id, { review: review.id, paths });
    if (this.written.size > 64) this.written.delete(this.written.keys().next().value as string);
    this.changes.emit(review.id);
  }

  /** The session that made a recorded commit (after-commit work): undo notices about those files go to it. */
  attribute(operationId: string, session: string | undefined): void {
    const w = this.written.get(operationId);
    this.written.delete(operationId);
    if (!w || session === undefined) return;
    const review = this.reviews.get(w.review);
    if (!review) return;
    for (const p of w.paths) {
      const f = review.files.get(p);
      if (f && !f.sessions.includes(session)) review.files.set(p, { ...f, sessions: [...f.sessions, session].slice(-MAX_SESSIONS_PER_FILE) });
    }
  }

  list(): ReviewState[] {
    return [...this.reviews.values()].map((r) => this.view(r));
  }

  get(reviewId: string): ReviewState | undefined {
    const r = this.reviews.get(reviewId);
    return r ? this.view(r) : undefined;
  }

  /** Every file of a review as it is now, in path order. */
  async files(reviewId: string): Promise<ReviewFileNow[]> {
    const review = this.require(reviewId);
    const ws = this.workspaceOf(review);
    const out: ReviewFileNow[] = [];
    for (const f of [...review.files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) out.push(await this.now(ws, f));
    return out;
  }

  /** One file of a review as it is now. */
  async file(reviewId: string, path: string): Promise<ReviewFileNow> {
    const review = this.require(reviewId);
    return this.now(this.workspaceOf(review), this.requireFile(review, path));
  }

  /**
   * Keep: the hunk at `line` (0-based, of the file now; of the accepted text with side `old`) joins the accepted
   * text and leaves the review.
   */
  async keep(reviewId: string, path: string, line: number, side: HunkSide = 'new'): Promise<Hunk> {
    const review = this.require(reviewId);
    const f = this.requireFile(review, path);
    const now = await this.now(this.workspaceOf(review), f);
    const hunk = this.hunkAt(now, line, side);
    const base = now.current === null && f.base !== null && hunk.base.start === 0 && splitCount(f.base) === hunk.base.end ? null : keepHunk(f.base ?? '', hunk);
    review.files.set(path, { ...f, base });
    this.changes.emit(review.id);
    return hunk;
  }

  /**
   * Undo: writes the reverse of the hunk at `line` (0-based, of the file now; of the accepted text with side `old`) through the patch engine, in the
   * workspace's patch turn, bound to the version read now: the file changed since (or the hunk's place is not unique
   * enough to find) refuses and writes nothing. The agent that wrote the file learns it on its next answer.
   */
  async undo(reviewId: string, path: string, line: number, side: HunkSide = 'new'): Promise<{ notice: ReviewUndone; result: ApplyPatchResult }> {
    const review = this.require(reviewId);
    const ws = this.workspaceOf(review);
    const release = await this.options.patches.lock(occupancyScope(ws));
    try {
      const f = this.requireFile(review, path);
      const now = await this.now(ws, f);
      const hunk = this.hunkAt(now, line, side);
      const current = now.current ?? '';
      const exact = undoHunk(current, hunk);
      const operationKey = `review-undo-${randomBytes(8).toString('hex')}`;
      const work = review.work_id !== undefined ? { work_id: review.work_id } : {};
      let result: ApplyPatchResult;
      const deleted = now.current === null;
      if (deleted || (f.base === null && exact === '' && hunk.current.start === 0 && hunk.current.end === splitCount(current))) {
        // The agent deleted the file (put it back as it was, with its mode) or added it (its only hunk undone deletes
        // it, and the folders its add created go again when empty): the one restore step of the patch engine.
        const history = this.options.patches.fileHistory(review.workspace_id, path);
        const restore: RestoreRequest = {
          workspace_id: review.workspace_id,
          operation_key: operationKey,
          ...work,
          files: [{ path, expected: deleted ? null : (now.version as string), content: deleted ? encoder.encode(exact) : null, ...(deleted && history.mode !== undefined ? { mode: history.mode } : {}) }],
          ...(deleted ? {} : { remove_folders: history.created_folders }),
        };
        result = await this.options.patches.commit(await this.options.patches.prepareRestore(ws, restore));
      } else {
        const request = { workspace_id: review.workspace_id, patch: undoPatch(path, current, hunk), expected_versions: { [path]: now.version as string }, operation_key: operationKey, ...work };
        const prepared = await this.options.patches.prepare(ws, request);
        if ('replay' in prepared) throw new ToolError('INTERNAL', 'An undo was answered from the ledger instead of being applied.');
        const planned = prepared.intent.planned.files[0];
        const bytes = encoder.encode(exact);
        // The engine keeps a file's final-newline state; the reviewer's bytes are the accepted text exactly.
        const reviewed = planned && planned.after !== undefined && !sameBytes(planned.after, bytes) ? new Map([[path, bytes]]) : undefined;
        result = await this.options.patches.commit(prepared.intent, reviewed);
      }
      if (result.status !== 'applied') {
        throw new ToolError('UNAVAILABLE', `The undo of ${path} was not applied (${result.status}${result.reason ? `: ${result.reason}` : ''}).`, { details: { path, operation_id: result.operation_id } });
      }
      const after = result.files[0]?.kind === 'delete' ? undefined : result.files[0]?.after_version;
      const notice: ReviewUndone = {
        action: 'undone',
        workspace_id: review.workspace_id,
        ...(review.work_id !== undefined ? { work_id: review.work_id } : {}),
        path,
        range: { start_line: hunk.current.start + 1, end_line: hunk.current.end },
        undone: hunk.added,
        restored: hunk.removed,
        ...(after !== undefined ? { version: after } : {}),
        operation_id: result.operation_id,
      };
      this.notices.push({ sessions: f.sessions, notice });
      if (this.notices.length > MAX_NOTICES) this.notices.splice(0, this.notices.length - MAX_NOTICES);
      this.changes.emit(review.id);
      this.options.logger.info(`[review] undid lines ${notice.range.start_line}-${notice.range.end_line} of ${path} (${review.id}) as ${result.operation_id}`);
      return { notice, result };
    } finally {
      release();
    }
  }

  /** Mark as Reviewed: the file leaves the review until its content changes again. */
  async markReviewed(reviewId: string, path: string): Promise<ReviewFileNow> {
    const review = this.require(reviewId);
    const f = this.requireFile(review, path);
    const now = await this.now(this.workspaceOf(review), f);
    review.files.set(path, { ...f, reviewed_version: now.version ?? 'none' });
    this.changes.emit(review.id);
    return { ...now, reviewed: true };
  }

  /** Clears a review: its files leave it, and the next write starts it again from what is on disk then. */
  clear(reviewId: string): boolean {
    const had = this.reviews.delete(reviewId);
    if (had) this.changes.emit(reviewId);
    return had;
  }

  /**
   * The undo notices for an answer to `session` (the sessions that wrote the file) or to a call of work `workId`:
   * each is delivered once.
   */
  take(session: string | undefined, workId: string | undefined): ReviewUndone[] {
    if (this.notices.length === 0 || (session === undefined && workId === undefined)) return [];
    const out: ReviewUndone[] = [];
    this.notices = this.notices.filter((n) => {
      const mine = (session !== undefined && n.sessions.includes(session)) || (workId !== undefined && n.notice.work_id === workId);
      if (mine) out.push(n.notice);
      return !mine;
    });
    return out;
  }

  snapshot(): AfterWriteSnapshot {
    return { reviews: this.list(), notices: this.notices.filter((n) => n.notice.work_id !== undefined) };
  }

  /** Takes back a snapshot (a window reload); entries of the wrong shape are skipped. */
  restore(snapshot: unknown): void {
    const s = snapshot as Partial<AfterWriteSnapshot> | undefined;
    for (const r of Array.isArray(s?.reviews) ? s.reviews : []) {
      if (typeof r?.id !== 'string' || typeof r.workspace_id !== 'string' || !Array.isArray(r.files)) continue;
      const files = new Map<string, ReviewFileState>();
      for (const f of r.files) {
        if (typeof f?.path !== 'string' || (f.base !== null && typeof f.base !== 'string')) continue;
        files.set(f.path, { path: f.path, base: f.base, sessions: [], ...(typeof f.reviewed_version === 'string' ? { reviewed_version: f.reviewed_version } : {}) });
      }
      this.reviews.set(r.id, { id: r.id, workspace_id: r.workspace_id, ...(typeof r.work_id === 'string' ? { work_id: r.work_id } : {}), files });
    }
    for (const n of Array.isArray(s?.notices) ? s.notices : []) {
      if (n?.notice?.action === 'undone' && typeof n.notice.work_id === 'string') this.notices.push({ sessions: [], notice: n.notice });
    }
  }

  dispose(): void {
    this.changes.dispose();
  }

  // ---- internals ----

  private open(workspaceId: string, workId: string | undefined): MutableReview {
    const id = reviewIdOf(workspaceId, workId);
    let review = this.reviews.get(id);
    if (!review) {
      review = { id, workspace_id: workspaceId, ...(workId !== undefined ? { work_id: workId } : {}), files: new Map() };
      this.reviews.set(id, review);
    }
    return review;
  }

  private view(r: MutableReview): ReviewState {
    return { id: r.id, workspace_id: r.workspace_id, ...(r.work_id !== undefined ? { work_id: r.work_id } : {}), files: [...r.files.values()] };
  }

  private require(reviewId: string): MutableReview {
    const r = this.reviews.get(reviewId);
    if (!r) throw new ToolError('NOT_FOUND', `There is no review after the write ${JSON.stringify(reviewId)} (cleared, or nothing was written under it).`, { details: { review: reviewId } });
    return r;
  }

  private requireFile(review: MutableReview, path: string): ReviewFileState {
    const f = review.files.get(path);
    if (!f) throw new ToolError('NOT_FOUND', `${path} is not in the review ${review.id}.`, { details: { review: review.id, path } });
    return f;
  }

  private workspaceOf(review: MutableReview): Workspace {
    return this.options.workspaces.get(review.workspace_id, review.work_id);
  }

  private hunkAt(now: ReviewFileNow, line: number, side: HunkSide): Hunk {
    const hunk = Number.isInteger(line) && line >= 0 ? hunkAtLine(now.hunks, line, side) : undefined;
    if (hunk) return hunk;
    const on = (h: Hunk): Hunk['base'] => linesOn(h, side);
    const where = now.hunks.map((h) => (on(h).end > on(h).start ? `${on(h).start + 1}-${on(h).end}` : `at ${on(h).start + 1}`)).join(', ');
    const which = side === 'old' ? 'of the accepted text (the left side) ' : '';
    throw new ToolError('INVALID_ARGUMENTS', `Line ${line + 1} ${which}of ${now.path} is in no change of the review${where ? ` (changes: lines ${where})` : ': the file has no change left'}.`, {
      details: { field: 'line', path: now.path, side },
    });
  }

  private async now(ws: Workspace, f: ReviewFileState): Promise<ReviewFileNow> {
    const { fs } = this.options;
    const realRoot = await realRootOf(fs, ws.root);
    const { abs } = await confine(fs, ws.root, f.path, { realRoot });
    let bytes: Uint8Array | undefined;
    try {
      bytes = (await fs.readFile(abs, { within: realRoot, maxBytes: MAX_REVIEW_FILE_BYTES })).bytes;
    } catch (err) {
      const code = failureCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR' && code !== 'ENOTREG') throw err;
    }
    const current = bytes === undefined ? null : decode(bytes);
    if (current === undefined) throw new ToolError('NOT_TEXT', `${f.path} is no longer UTF-8 text: its changes cannot be reviewed by hunk.`, { details: { path: f.path } });
    const version = bytes === undefined ? undefined : contentVersion(bytes);
    const hunks = f.base === current ? [] : hunksOf(f.base ?? '', current ?? '');
    // A file added empty, or deleted while empty, differs from no file without a line of difference.
    return { path: f.path, base: f.base, current, ...(version !== undefined ? { version } : {}), hunks, reviewed: f.reviewed_version !== undefined && f.reviewed_version === (version ?? 'none') };
  }
}

function splitCount(text: string): number {
  const t = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (t === '') return 0;
  const n = t.split('\n').length;
  return t.endsWith('\n') ? n - 1 : n;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
