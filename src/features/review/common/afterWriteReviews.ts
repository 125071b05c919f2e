import { randomBytes } from 'node:crypto';
import type { Disposable } from '../../../base/disposable';
import { ToolError } from '../../../base/errors';
import type { ReviewMode } from '../../../kernel/approvals/holdPolicy';
import type { ApplyPatchResult, PatchIntent, RestoreRequest } from '../../patches';
import { contentVersion } from '../../patches';
import { confine, failureCode, realRootOf } from '../../../base/paths';
import type { Workspace } from '../../../kernel/workspaces';
import { occupancyScope } from '../../../kernel/workspaces';
import { Emitter } from '../../../base/emitter';
import type { Hunk } from './afterWriteHunks';
import type { HunkSide } from './afterWriteHunks';
import { hunkAtLine, hunksOf, keepHunk, linesOn, undoHunk, undoPatch } from './afterWriteHunks';
import { describeError, describeErrorWithStack } from '../../../base/describeError';
import { gitMode, isReviewText, modesDiffer, sideInfo } from './reviewedContent';
import type { AfterWriteOptions, AfterWriteSnapshot, ContentInfo, ReviewFileNow, ReviewFileState, ReviewState, ReviewUndone } from './afterWriteTypes';
import { MAX_REVIEW_FILE_BYTES } from './afterWriteTypes';
import type { ReadFile } from './afterWriteFiles';
import { publicOf, requireApplied, reviewedKey, sameBytes, splitCount, withoutAccepted } from './afterWriteFiles';
export * from './afterWriteTypes';

/**
 * Review after the write (`codespace.review.mode` `after`): what CodeSpace's patches wrote stays open to review, one
 * review per work (`work:<id>`, the patches that named it) or, for patches without a work, one per workspace
 * (`workspace:<id>`, since the review was last cleared). Each file of a review keeps its accepted text: the file
 * before the review's first write to it, with the hunks the reviewer kept. The hunks are what differs between that
 * and the file now, whoever changed it since. Keep moves a hunk into the accepted text; Undo writes the hunk's
 * reverse through the patch engine (version precondition, ledger record, all or nothing) and tells the agent on its
 * next answer (`review_update`). Mark as Reviewed hides a file until its content (or mode) changes again.
 *
 * A file that is not text on either side (binary, or not UTF-8) is one whole-file change: Keep accepts its bytes,
 * Undo puts the accepted bytes (and mode) back. A change of mode alone is a whole-file change too, once no hunk is
 * left: Keep accepts the mode, Undo puts the accepted mode back.
 */

/** Undo notices kept for agents that have not answered since (the oldest go first). */
const MAX_NOTICES = 200;
/** Sessions remembered per file. */
const MAX_SESSIONS_PER_FILE = 8;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** The accepted state of a file from its bytes (null: no file) and mode. */
function acceptedOf(bytes: Uint8Array | null, mode: number | undefined): Pick<ReviewFileState, 'base' | 'base_binary' | 'base_mode'> {
  const m = bytes !== null && mode !== undefined ? { base_mode: mode & 0o7777 } : {};
  if (bytes === null) return { base: null };
  return isReviewText(bytes) ? { base: decoder.decode(bytes), ...m } : { base: '', base_binary: Buffer.from(bytes).toString('base64'), ...m };
}

/** The accepted bytes of a file (null: no file). */
function acceptedBytes(f: ReviewFileState): Uint8Array | null {
  if (f.base === null) return null;
  return f.base_binary !== undefined ? new Uint8Array(Buffer.from(f.base_binary, 'base64')) : encoder.encode(f.base);
}

function infoOf(bytes: Uint8Array | null): ContentInfo | null {
  return bytes === null ? null : sideInfo(bytes);
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
   * each file it wrote (text or not) joins the review of its work (or workspace), with the text it had before as its
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
    const enter = async (path: string, written: Uint8Array | undefined, mode: number | undefined): Promise<void> => {
      paths.push(path);
      if (review.files.has(path)) return;
      // A work's file starts from the work's baseline when it has one, else from its content before this write.
      const known = await fromBaseline(path);
      const before = known === undefined ? written : (known ?? undefined);
      if (before !== undefined && before.byteLength > MAX_REVIEW_FILE_BYTES) {
        this.options.logger.info(`[review] ${path} is over ${MAX_REVIEW_FILE_BYTES} bytes: not in the review after the write`);
        return;
      }
      // A binary file (or one that is not UTF-8) joins as one whole-file change; its mode is the one before the write.
      review.files.set(path, { path, ...acceptedOf(before ?? null, before === undefined ? undefined : mode), sessions: [] });
    };
    for (const f of intent.planned.files) {
      if (f.kind === 'move' && f.move_to !== undefined) {
        await enter(f.path, f.before, f.mode);
        await enter(f.move_to, undefined, undefined);
      } else await enter(f.path, f.kind === 'add' ? undefined : f.before, f.kind === 'add' ? undefined : f.mode);
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
   * text and leaves the review. A whole-file change (binary, or a mode change with no hunk left) is kept whole,
   * whatever the line: the file's bytes and mode now become the accepted ones (answers undefined).
   */
  async keep(reviewId: string, path: string, line: number, side: HunkSide = 'new'): Promise<Hunk | undefined> {
    const review = this.require(reviewId);
    const f = this.requireFile(review, path);
    const now = await this.read(this.workspaceOf(review), f);
    if (now.whole !== undefined) {
      review.files.set(path, { ...withoutAccepted(f), ...acceptedOf(now.bytes, now.modeNow) });
      this.changes.emit(review.id);
      return undefined;
    }
    const hunk = this.hunkAt(now, line, side);
    const base = now.current === null && f.base !== null && hunk.base.start === 0 && splitCount(f.base) === hunk.base.end ? null : keepHunk(f.base ?? '', hunk);
    // A kept add takes the file's mode now as the accepted one; a kept deletion has none.
    const mode = base === null ? undefined : f.base === null ? now.modeNow : f.base_mode;
    review.files.set(path, { ...withoutAccepted(f), base, ...(mode !== undefined ? { base_mode: mode } : {}) });
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
      const now = await this.read(ws, f);
      if (now.whole !== undefined) return await this.undoWhole(review, f, now);
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
      requireApplied(path, result);
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
      this.told(review, f, notice, `lines ${hunk.current.start + 1}-${hunk.current.end}`);
      return { notice, result };
    } finally {
      release();
    }
  }

  /**
   * Undo of a whole-file change (in the patch turn): the accepted bytes and mode go back through the restore step
   * of the patch engine, bound to the version read now; an accepted "no file" deletes the file (and the folders its
   * add created, when empty); a file that is gone comes back.
   */
  private async undoWhole(review: MutableReview, f: ReviewFileState, now: ReadFile): Promise<{ notice: ReviewUndone; result: ApplyPatchResult }> {
    const { path } = f;
    const content = acceptedBytes(f);
    const history = this.options.patches.fileHistory(review.workspace_id, path);
    const mode = f.base_mode ?? (now.bytes === null ? history.mode : undefined);
    const restore: RestoreRequest = {
      workspace_id: review.workspace_id,
      operation_key: `review-undo-${randomBytes(8).toString('hex')}`,
      ...(review.work_id !== undefined ? { work_id: review.work_id } : {}),
      files: [{ path, expected: now.version ?? null, content, ...(content !== null && mode !== undefined ? { mode } : {}) }],
      ...(content === null ? { remove_folders: history.created_folders } : {}),
    };
    const result = await this.options.patches.commit(await this.options.patches.prepareRestore(this.workspaceOf(review), restore));
    requireApplied(path, result);
    const after = result.files[0]?.kind === 'delete' || content === null ? undefined : contentVersion(content);
    const notice: ReviewUndone = {
      action: 'undone',
      workspace_id: review.workspace_id,
      ...(review.work_id !== undefined ? { work_id: review.work_id } : {}),
      path,
      change: now.whole as 'binary' | 'mode',
      ...(now.whole === 'binary' ? { content: { undone: infoOf(now.bytes), restored: infoOf(content) } } : {}),
      ...(now.mode !== undefined && content !== null ? { mode: { undone: now.mode.current, restored: now.mode.base } } : {}),
      ...(after !== undefined ? { version: after } : {}),
      operation_id: result.operation_id,
    };
    this.told(review, f, notice, now.whole === 'binary' ? 'the binary content' : 'the mode');
    return { notice, result };
  }

  /** An undo is done: the agent is told on its next answer, the review follows. */
  private told(review: MutableReview, f: ReviewFileState, notice: ReviewUndone, what: string): void {
    this.notices.push({ sessions: f.sessions, notice });
    if (this.notices.length > MAX_NOTICES) this.notices.splice(0, this.notices.length - MAX_NOTICES);
    this.changes.emit(review.id);
    this.options.logger.info(`[review] undid ${what} of ${f.path} (${review.id}) as ${notice.operation_id}`);
  }

  /** Mark as Reviewed: the file leaves the review until its content changes again. */
  async markReviewed(reviewId: string, path: string): Promise<ReviewFileNow> {
    const review = this.require(reviewId);
    const f = this.requireFile(review, path);
    const now = await this.read(this.workspaceOf(review), f);
    review.files.set(path, { ...f, reviewed_version: reviewedKey(now.version, now.mode) });
    this.changes.emit(review.id);
    return { ...publicOf(now), reviewed: true };
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
        if (f.base_binary !== undefined && (typeof f.base_binary !== 'string' || f.base !== '')) continue;
        files.set(f.path, {
          path: f.path,
          base: f.base,
          sessions: [],
          ...(typeof f.base_binary === 'string' ? { base_binary: f.base_binary } : {}),
          ...(Number.isInteger(f.base_mode) && f.base !== null ? { base_mode: (f.base_mode as number) & 0o7777 } : {}),
          ...(typeof f.reviewed_version === 'string' ? { reviewed_version: f.reviewed_version } : {}),
        });
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
    return publicOf(await this.read(ws, f));
  }

  /** A file as it is now: its bytes, mode, hunks, and the whole-file change left when no hunk carries it. */
  private async read(ws: Workspace, f: ReviewFileState): Promise<ReadFile> {
    const { fs } = this.options;
    const realRoot = await realRootOf(fs, ws.root);
    const { abs } = await confine(fs, ws.root, f.path, { realRoot });
    let found: { bytes: Uint8Array; mode?: number } | undefined;
    try {
      found = await fs.readFile(abs, { within: realRoot, maxBytes: MAX_REVIEW_FILE_BYTES });
    } catch (err) {
      const code = failureCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR' && code !== 'ENOTREG') throw err;
    }
    const bytes = found?.bytes ?? null;
    const base = acceptedBytes(f);
    // Binary on either side (the patch engine's rule): no text hunk, the file is one whole-file change.
    const binary = f.base_binary !== undefined || (bytes !== null && !isReviewText(bytes));
    const current = bytes === null ? null : binary ? '' : decoder.decode(bytes);
    const version = bytes === null ? undefined : contentVersion(bytes);
    const hunks = binary || f.base === current ? [] : hunksOf(f.base ?? '', current ?? '');
    const modeNow = found?.mode !== undefined ? found.mode & 0o7777 : undefined;
    const mode = bytes !== null && f.base !== null && modesDiffer(f.base_mode, modeNow) ? { base: gitMode(f.base_mode as number), current: gitMode(modeNow as number) } : undefined;
    const bytesDiffer = binary && (base === null || bytes === null ? base !== bytes : contentVersion(base) !== version);
    const whole = bytesDiffer ? 'binary' : hunks.length === 0 && mode !== undefined ? 'mode' : undefined;
    // A file added empty, or deleted while empty, differs from no file without a line of difference.
    return {
      path: f.path,
      base: binary && f.base !== null ? '' : f.base,
      current,
      ...(version !== undefined ? { version } : {}),
      hunks,
      binary,
      sides: { base: infoOf(base), current: infoOf(bytes) },
      ...(mode !== undefined ? { mode } : {}),
      ...(whole !== undefined ? { whole } : {}),
      changed: hunks.length > 0 || whole !== undefined || mode !== undefined,
      reviewed: f.reviewed_version !== undefined && f.reviewed_version === reviewedKey(version, mode),
      bytes,
      ...(modeNow !== undefined ? { modeNow } : {}),
    };
  }
}
