import { createHash, randomBytes } from 'node:crypto';
import type { Disposable } from '../../base/disposable';
import { InvalidArgumentsError, ToolError } from '../errors';
import type { Journal } from '../ports/journal';
import type { Logger } from '../ports/logger';
import type { WorktreeFactory } from '../ports/workTree';
import type { WorkRoots } from '../policy/workspaces';
import { Emitter } from '../../base/emitter';
import { checkReviewComments } from '../policy/reviewComments';
import type { ReviewComment } from '../policy/reviewComments';
import { withAuthor } from '../identity';
import type { AgentRef, Authors, Caller } from '../identity';
import type { InstructionRecord, WorkRecord } from '../ledger/schemas';
import type {
  Coordination,
  FinishOutcome,
  InstructionStatus,
  InstructionView,
  Steering,
  SteeringChange,
  RewindNotice,
  SteeringCounts,
  WorkBaseline,
  WorkIsolation,
  WorkOperations,
  WorkView,
} from './steering';
import type { WorkWorktree, WorktreeDiscard, WorktreeRetirement, WorktreeSurvey } from '../ports/workTree';
import { MAX_INSTRUCTIONS_PER_WORK, MAX_INSTRUCTION_BYTES, MAX_NOTE_BYTES, MAX_TITLE_CHARS } from './steering';
import { describeError, describeErrorWithStack } from '../../base/describeError';
import { SteeringJournal } from './steeringJournal';

/** Finished works kept (the newest), with their instructions; open works are always kept. */
export const DEFAULT_FINISHED_WORKS = 200;
/** Open works with their own worktrees at once, by default (`codespace.works.maxWorktrees`). */
export const DEFAULT_MAX_WORKTREE_WORKS = 8;
/** Total MiB the worktrees held may take, by default (`codespace.works.maxWorktreeDiskMiB`; 0: no bound). */
export const DEFAULT_MAX_WORKTREE_DISK_MIB = 2048;
const MIB = 1024 * 1024;
const utf8 = new TextEncoder();

export interface SteeringServiceOptions {
  readonly journal: Journal;
  readonly logger: Logger;
  /** Where a work's workspace is (WORKSPACE_NOT_FOUND when it is not one of the window's). */
  readonly workspaces: {
    get(id: string): { readonly id: string; readonly root: string };
    /** Every folder of the window (absent: the work's own folder only). */
    list?(): readonly { readonly id: string; readonly root: string }[];
  };
  /** Creates a work's git worktrees (absent: only shared works can be opened). */
  readonly worktrees?: WorktreeFactory;
  /** How many open works may have worktrees at once (read at every work_open). */
  readonly maxWorktreeWorks?: () => number;
  /** How many MiB all worktrees held may take together (read at every work_open; 0: no bound). */
  readonly maxWorktreeDiskMiB?: () => number;
  /** The isolation of a work_open that names none (`codespace.works.isolation`; default shared). */
  readonly defaultIsolation?: () => WorkIsolation;
  /** Captures the workspace at work_open for a later review (absent: works carry no baseline). */
  readonly baseline?: WorkBaseline;
  /** The operations recorded with a work_id, for operations(). */
  readonly sources?: {
    readonly patches: () => readonly { readonly work_id?: string; readonly operation_key: string }[];
    readonly execs: () => readonly { readonly work_id?: string; readonly process_id: string; readonly state?: string }[];
  };
  readonly maxFinishedWorks?: number;
  readonly now?: () => Date;
  readonly newId?: (prefix: 'work' | 'ins') => string;
}

/**
 * Works and instructions, in memory and in their own section of the shared journal. Every state change happens
 * synchronously, before the first await of the call, so two calls racing (two sessions claiming, a developer
 * queuing while the agent finishes) are ordered by the event loop: one instruction is never handed out twice,
 * and work_finish never closes over an instruction queued before it. The journal append follows; the call
 * resolves once the change is durable.
 *
 * Journal lines carry the whole record (last line wins); a torn last line is skipped by the journal. open()
 * compacts to one line per kept record.
 */
export class SteeringService implements Steering, WorkRoots, Disposable {
  private readonly workMap = new Map<string, WorkRecord>();
  private readonly instructionMap = new Map<string, InstructionRecord>();
  /** work id → instruction ids, creation order. */
  private readonly byWork = new Map<string, string[]>();
  /** `${work_id}\n${key}` → instruction id (deleted ones too, so a replay does not recreate a deleted draft). */
  private readonly keys = new Map<string, string>();
  /** MCP session id → the work it has open (opened or adopted). */
  private readonly sessions = new Map<string, string>();
  private readonly events: Emitter<SteeringChange>;
  private seq = 0;
  private opened = false;
  /** work_open calls creating worktrees now (counted against the bound). */
  private creating = 0;
  /** Under the disk bound, worktrees are measured and created one work_open at a time (each sees the last one's files). */
  private diskGate: Promise<void> = Promise.resolve();
  /** work id → its worktree removals under way (work_finish twice at once runs them one after the other). */
  private readonly retiring = new Map<string, Promise<void>>();
  private readonly journal: SteeringJournal;

  constructor(private readonly options: SteeringServiceOptions) {
    this.events = new Emitter<SteeringChange>((err) =>
      options.logger.error('[steering] a change listener failed', describeErrorWithStack(err)),
    );
    this.journal = new SteeringJournal(options.journal, options.logger, () => ({ works: this.workMap, instructions: this.instructionMap }));
  }

  /** Loads works and instructions from the journal (last line of each id wins) and compacts it. */
  async open(): Promise<{ works: number; open: number; queued: number; claimed: number }> {
    const loaded = await this.journal.load();
    for (const [id, w] of loaded.works) this.workMap.set(id, w);
    for (const [id, r] of loaded.instructions) this.instructionMap.set(id, r);
    for (const r of [...this.instructionMap.values()]) {
      // A deleted draft is kept only for its idempotency key.
      if (!this.workMap.has(r.work_id) || (r.deleted_at !== undefined && r.idempotency_key === undefined)) {
        this.instructionMap.delete(r.id);
        continue;
      }
      this.index(r);
      if (r.seq !== undefined && r.seq >= this.seq) this.seq = r.seq + 1;
    }
    this.trim();
    await this.journal.compact();
    this.opened = true;
    let open = 0;
    let queued = 0;
    let claimed = 0;
    for (const w of this.workMap.values()) {
      if (w.status !== 'open') continue;
      open++;
      const c = this.counts(w.id);
      queued += c.queued;
      claimed += c.claimed;
    }
    return { works: this.workMap.size, open, queued, claimed };
  }

  // ---- developer side -------------------------------------------------------------------------------------------

  works(filter?: { status?: 'open' | 'finished' }): WorkView[] {
    return [...this.workMap.values()].filter((w) => filter?.status === undefined || w.status === filter.status).map(workView);
  }

  work(id: string): WorkView | undefined {
    const w = this.workMap.get(id);
    return w ? workView(w) : undefined;
  }

  instructions(workId: string): InstructionView[] {
    this.requireWork(workId);
    return this.live(workId).map(instructionView);
  }

  counts(workId: string): SteeringCounts {
    this.requireWork(workId);
    const c: Record<InstructionStatus, number> = { draft: 0, queued: 0, claimed: 0, done: 0, blocked: 0 };
    for (const r of this.live(workId)) c[r.status]++;
    return c;
  }

  /** One instruction by id (a deleted draft is gone). */
  instruction(id: string): InstructionView | undefined {
    const r = this.instructionMap.get(id);
    return r && r.deleted_at === undefined ? instructionView(r) : undefined;
  }

  async createDraft(workId: string, text: string, opts: { queue?: boolean; idempotencyKey?: string } = {}): Promise<InstructionView> {
    return (await this.create(workId, text, opts)).instruction;
  }

  /** createDraft, saying whether the call created the instruction or replayed its idempotency key. */
  async create(workId: string, text: string, opts: { queue?: boolean; idempotencyKey?: string } = {}): Promise<{ instruction: InstructionView; created: boolean }> {
    this.assertOpen();
    const work = this.requireWork(workId);
    const queue = opts.queue ?? false;
    const requestHash = opts.idempotencyKey === undefined ? undefined : hashOf({ text, queue });
    if (opts.idempotencyKey !== undefined) {
      checkKey(opts.idempotencyKey);
      const earlier = this.keys.get(keyOf(workId, opts.idempotencyKey));
      const r = earlier === undefined ? undefined : this.instructionMap.get(earlier);
      if (r) {
        if (r.request_hash !== requestHash) {
          throw new ToolError('OPERATION_KEY_CONFLICT', 'This idempotency key was used before with a different instruction.', {
            hint: 'Use a new key for a new instruction; resend the same text and queue flag to get the instruction the key created.',
            details: { instruction_id: r.id },
          });
        }
        if (r.deleted_at !== undefined) {
          throw new ToolError('INSTRUCTION_NOT_FOUND', `The instruction this idempotency key created (${r.id}) was deleted.`, {
            hint: 'Use a new key to create it again.',
            details: { instruction_id: r.id },
          });
        }
        await this.journal.flush();
        return { instruction: instructionView(r), created: false };
      }
    }
    checkText(text);
    assertWorkOpen(work);
    // Deleted drafts kept for their idempotency key count too, so create-and-delete cannot grow without bound.
    if ((this.byWork.get(workId)?.length ?? 0) >= MAX_INSTRUCTIONS_PER_WORK) {
      throw new InvalidArgumentsError(`Work ${workId} already has ${MAX_INSTRUCTIONS_PER_WORK} instructions, the most one work keeps.`, {
        hint: 'Delete drafts you no longer need, or ask the agent to finish this work and open a new one.',
        details: { reason: 'too_many_instructions' },
      });
    }
    const at = this.timestamp();
    const r: InstructionRecord = {
      id: this.newId('ins'),
      work_id: workId,
      text,
      status: queue ? 'queued' : 'draft',
      created_at: at,
      ...(queue ? { queued_at: at, seq: this.seq++ } : {}),
      revision: 1,
      ...(opts.idempotencyKey !== undefined ? { idempotency_key: opts.idempotencyKey, request_hash: requestHash } : {}),
    };
    this.index(r);
    this.instructionMap.set(r.id, r);
    if (opts.idempotencyKey !== undefined) this.keys.set(keyOf(workId, opts.idempotencyKey), r.id);
    this.events.emit({ kind: 'instruction', instruction: instructionView(r) });
    await this.persistInstruction(r);
    return { instruction: instructionView(r), created: true };
  }

  async queueReviewComments(workId: string, comments: readonly ReviewComment[]): Promise<InstructionView> {
    this.assertOpen();
    const work = this.requireWork(workId);
    assertWorkOpen(work);
    const checked = checkReviewComments(comments);
    if ((this.byWork.get(workId)?.length ?? 0) >= MAX_INSTRUCTIONS_PER_WORK) {
      throw new InvalidArgumentsError(`Work ${workId} already has ${MAX_INSTRUCTIONS_PER_WORK} instructions, the most one work keeps.`, { details: { reason: 'too_many_instructions' } });
    }
    const at = this.timestamp();
    const r: InstructionRecord = {
      id: this.newId('ins'),
      work_id: workId,
      text: reviewCommentsText(checked),
      status: 'queued',
      created_at: at,
      queued_at: at,
      seq: this.seq++,
      revision: 1,
      kind: 'review_comments',
      comments: checked.map((c) => ({ ...c, range: { ...c.range } })),
    };
    this.index(r);
    this.instructionMap.set(r.id, r);
    this.events.emit({ kind: 'instruction', instruction: instructionView(r) });
    await this.persistInstruction(r);
    return instructionView(r);
  }

  async queueRewindNotice(workId: string, notice: RewindNotice): Promise<InstructionView> {
    this.assertOpen();
    const work = this.requireWork(workId);
    assertWorkOpen(work);
    if ((this.byWork.get(workId)?.length ?? 0) >= MAX_INSTRUCTIONS_PER_WORK) {
      throw new InvalidArgumentsError(`Work ${workId} already has ${MAX_INSTRUCTIONS_PER_WORK} instructions, the most one work keeps.`, { details: { reason: 'too_many_instructions' } });
    }
    const at = this.timestamp();
    const rewind = { ...notice, files: notice.files.map((f) => ({ ...f })) };
    const r: InstructionRecord = { id: this.newId('ins'), work_id: workId, text: rewindText(rewind), status: 'queued', created_at: at, queued_at: at, seq: this.seq++, revision: 1, kind: 'rewind', rewind };
    this.index(r);
    this.instructionMap.set(r.id, r);
    this.events.emit({ kind: 'instruction', instruction: instructionView(r) });
    await this.persistInstruction(r);
    return instructionView(r);
  }

  async editDraft(instructionId: string, text: string, expectedRevision?: number): Promise<InstructionView> {
    this.assertOpen();
    const r = this.requireInstruction(instructionId);
    this.assertDraft(r, 'edited');
    if (expectedRevision !== undefined && expectedRevision !== r.revision) {
      throw new InvalidArgumentsError(`Instruction ${r.id} is at revision ${r.revision}, not ${expectedRevision}: it changed since you read it.`, {
        hint: 'Read the instruction again and apply your edit to its current text.',
        details: { reason: 'revision_mismatch', instruction_id: r.id, revision: r.revision },
      });
    }
    checkText(text);
    return this.update(r, { text });
  }

  async deleteDraft(instructionId: string): Promise<void> {
    this.assertOpen();
    const r = this.requireInstruction(instructionId);
    this.assertDraft(r, 'deleted');
    const gone: InstructionRecord = { ...r, deleted_at: this.timestamp(), revision: r.revision + 1 };
    if (r.idempotency_key !== undefined) {
      this.instructionMap.set(r.id, gone);
    } else {
      // Nothing to remember it for: forget it now (the journal's tombstone line goes at the next compaction).
      this.instructionMap.delete(r.id);
      const list = this.byWork.get(r.work_id);
      if (list) list.splice(list.indexOf(r.id), 1);
    }
    this.events.emit({ kind: 'instruction_deleted', id: r.id, work_id: r.work_id });
    await this.persistInstruction(gone);
  }

  async queue(instructionId: string): Promise<InstructionView> {
    this.assertOpen();
    const r = this.requireInstruction(instructionId);
    this.assertDraft(r, 'queued');
    assertWorkOpen(this.requireWork(r.work_id));
    return this.update(r, { status: 'queued', queued_at: this.timestamp(), seq: this.seq++ });
  }

  async requeue(instructionId: string): Promise<InstructionView> {
    this.assertOpen();
    const r = this.requireInstruction(instructionId);
    if (r.status !== 'claimed' && r.status !== 'blocked') {
      throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}; only a claimed or blocked instruction can be queued again.`, {
        details: { reason: 'invalid_state', instruction_id: r.id, status: r.status },
      });
    }
    assertWorkOpen(this.requireWork(r.work_id));
    const rest: InstructionRecord = { ...r };
    delete rest.claimed_at;
    delete rest.completed_at;
    delete rest.note;
    delete rest.claimed_by;
    return this.update(rest, { status: 'queued', queued_at: this.timestamp(), seq: this.seq++ });
  }

  onDidChange(listener: (e: SteeringChange) => void): Disposable {
    return this.events.on(listener);
  }

  // ---- agent side -----------------------------------------------------------------------------------------------

  /** work_open: a new work in a workspace; the session (if any) has it open from now on. */
  async openWork(workspaceId: string, title: string, opts: { session?: string; agent?: AgentRef; isolation?: WorkIsolation; base?: string } = {}): Promise<WorkView> {
    this.assertOpen();
    const ws = this.options.workspaces.get(workspaceId);
    const shown = title.trim();
    if (shown === '') throw new InvalidArgumentsError('title must not be empty: name the task in a few words.', { field: 'title' });
    if (shown.length > MAX_TITLE_CHARS) throw new InvalidArgumentsError(`title has ${shown.length} characters; at most ${MAX_TITLE_CHARS}.`, { field: 'title' });
    if (opts.base !== undefined && (opts.isolation ?? this.options.defaultIsolation?.() ?? 'shared') !== 'worktree') {
      throw new InvalidArgumentsError('base applies to a work with isolation "worktree" only.', { field: 'base', hint: 'Pass isolation: "worktree" with it, or leave base out.' });
    }
    const isolation = opts.isolation ?? this.options.defaultIsolation?.() ?? 'shared';
    const id = this.newId('work');
    const worktrees = isolation === 'worktree' ? await this.createWorktrees(id, shown, ws.id, opts.base) : undefined;
    const own = worktrees?.find((t) => t.workspace_id === ws.id);
    let baseline: string | undefined;
    try {
      baseline = await this.options.baseline?.capture(own?.root ?? ws.root);
    } catch (err) {
      this.options.logger.warn(`[steering] could not capture a baseline of ${ws.id}: ${describeError(err)}`);
    }
    const w: WorkRecord = {
      id,
      workspace_id: ws.id,
      title: shown,
      status: 'open',
      opened_at: this.timestamp(),
      ...(opts.session !== undefined ? { session: opts.session } : {}),
      ...(opts.agent !== undefined ? { agent: { id: opts.agent.id, name: opts.agent.name } } : {}),
      ...(baseline !== undefined ? { baseline } : {}),
      ...(worktrees !== undefined ? { worktrees: worktrees.map((t) => ({ workspace_id: t.workspace_id, root: t.root, top: t.top, branch: t.branch, base: t.base })) } : {}),
    };
    this.workMap.set(w.id, w);
    if (opts.session !== undefined) this.sessions.set(opts.session, w.id);
    this.events.emit({ kind: 'work', work: workView(w) });
    await this.persistWork(w);
    return workView(w);
  }

  /** work_finish: closes the work unless instructions are queued or claimed. Finishing a finished work is a no-op. */
  async finishWork(workId: string): Promise<FinishOutcome> {
    this.assertOpen();
    const w = this.requireWork(workId);
    if (w.status === 'finished') {
      await this.journal.flush();
      return this.retireWorktrees(w.id);
    }
    const counts = this.counts(workId);
    if (counts.queued > 0 || counts.claimed > 0) return { closed: false, reason: 'pending_user_input', work: workView(w), counts };
    const done: WorkRecord = { ...w, status: 'finished', finished_at: this.timestamp() };
    this.workMap.set(w.id, done);
    for (const [s, id] of this.sessions) if (id === w.id) this.sessions.delete(s);
    this.events.emit({ kind: 'work', work: workView(done) });
    await this.persistWork(done);
    const out = await this.retireWorktrees(w.id);
    this.trim();
    return out;
  }

  /**
   * A finished work's worktrees and branches go once nothing in them would be lost; the others stay, each with its
   * reason, and the next work_finish tries them again. One work's removals run one at a time.
   */
  private retireWorktrees(workId: string): Promise<FinishOutcome & { closed: true }> {
    const step = (this.retiring.get(workId) ?? Promise.resolve()).then(async () => {
      const w = this.requireWork(workId);
      if (w.worktrees === undefined) return { closed: true as const, work: workView(w) };
      const left = w.worktrees.filter((t) => t.removed_at === undefined);
      const outcomes = left.length === 0 ? [] : this.options.worktrees ? await this.options.worktrees.retire(left, { folderOf: (id) => this.folderOf(id) }) : left.map((t) => ({ workspace_id: t.workspace_id, removed: false as const, reason: 'failed' as const, detail: 'this host has no git support' }));
      const at = this.timestamp();
      const gone = new Set(outcomes.filter((o) => o.removed).map((o) => o.workspace_id));
      const now = this.requireWork(workId);
      let next = now;
      if (gone.size > 0) {
        next = { ...now, worktrees: (now.worktrees ?? []).map((t) => (t.removed_at === undefined && gone.has(t.workspace_id) ? { ...t, removed_at: at } : t)) };
        this.workMap.set(workId, next);
        this.events.emit({ kind: 'work', work: workView(next) });
        await this.persistWork(next);
      }
      const byId = new Map(outcomes.map((o) => [o.workspace_id, o]));
      return {
        closed: true as const,
        work: workView(next),
        worktrees: (next.worktrees ?? []).map((t): WorktreeRetirement => byId.get(t.workspace_id) ?? { workspace_id: t.workspace_id, removed: true }),
      };
    });
    const settled = step.then(() => undefined, () => undefined);
    this.retiring.set(workId, settled);
    void settled.then(() => {
      if (this.retiring.get(workId) === settled) this.retiring.delete(workId);
    });
    return step;
  }

  /** What discarding work `workId` would drop and keep, per folder it still holds a worktree of. */
  async surveyDiscard(workId: string): Promise<WorktreeSurvey[]> {
    const w = this.requireWork(workId);
    const left = (w.worktrees ?? []).filter((t) => t.removed_at === undefined);
    if (left.length === 0 || !this.options.worktrees) return [];
    return this.options.worktrees.survey(left, { folderOf: (id) => this.folderOf(id) });
  }

  /**
   * The developer's discard of a work with worktrees: it is finished (its queued instructions go back to drafts, no
   * agent having seen them), and each worktree is removed with whatever changed or untracked files it has; a task
   * branch goes only when no commit of it would be lost, else it stays. Refused while an instruction of the work is
   * claimed (an agent is acting on it) or a command of the work runs (it could be writing in the worktree).
   */
  async discardWork(workId: string): Promise<{ work: WorkView; worktrees: WorktreeDiscard[] }> {
    this.assertOpen();
    const w = this.requireWork(workId);
    if (!holdsWorktree(w) || (w.worktrees ?? []).every((t) => t.removed_at !== undefined)) {
      throw new InvalidArgumentsError(`Work ${w.id} holds no worktree: there is nothing to discard.`, { details: { reason: 'no_worktree', work_id: w.id } });
    }
    const claimed = this.live(workId).filter((r) => r.status === 'claimed');
    if (claimed.length > 0) {
      throw new InvalidArgumentsError(`An agent is acting on ${claimed.length} instruction(s) of work ${w.id}; it is not discarded.`, {
        hint: 'Wait for the agent to complete them, or put them back in the queue (its agent went away), then discard.',
        details: { reason: 'instruction_claimed', work_id: w.id, instructions: claimed.map((r) => r.id) },
      });
    }
    const running = this.runningProcesses(workId);
    if (running.length > 0) {
      throw new ToolError('WORKSPACE_BUSY', `${running.length} command(s) of work ${w.id} still run; it is not discarded.`, {
        hint: 'Stop them (or wait for them to end), then discard.',
        details: { reason: 'processes_running', work_id: w.id, processes: [...running] },
      });
    }
    if (w.status === 'open') {
      // Decided synchronously (no await until the work is finished), so no claim slips in between.
      const saved: Promise<void>[] = [];
      for (const r of this.live(workId)) {
        if (r.status !== 'queued') continue;
        const back: InstructionRecord = { ...r, status: 'draft', revision: r.revision + 1 };
        delete back.queued_at;
        delete back.seq;
        this.instructionMap.set(r.id, back);
        this.events.emit({ kind: 'instruction', instruction: instructionView(back) });
        saved.push(this.persistInstruction(back));
      }
      const at = this.timestamp();
      const done: WorkRecord = { ...w, status: 'finished', finished_at: at, discarded_at: at };
      this.workMap.set(w.id, done);
      for (const [s, id] of this.sessions) if (id === w.id) this.sessions.delete(s);
      this.events.emit({ kind: 'work', work: workView(done) });
      saved.push(this.persistWork(done));
      await Promise.all(saved);
    }
    const step = (this.retiring.get(workId) ?? Promise.resolve()).then(async () => {
      const left = (this.requireWork(workId).worktrees ?? []).filter((t) => t.removed_at === undefined);
      const factory = this.options.worktrees;
      const outcomes: WorktreeDiscard[] =
        left.length === 0 ? [] : factory ? await factory.discard(left, { folderOf: (id) => this.folderOf(id) }) : left.map((t) => ({ workspace_id: t.workspace_id, removed: false as const, branch: t.branch, reason: 'failed' as const, detail: 'this host has no git support' }));
      const gone = new Set(outcomes.filter((o) => o.removed).map((o) => o.workspace_id));
      const now = this.requireWork(workId);
      let next = now;
      if (gone.size > 0) {
        const at = this.timestamp();
        next = { ...now, worktrees: (now.worktrees ?? []).map((t) => (t.removed_at === undefined && gone.has(t.workspace_id) ? { ...t, removed_at: at } : t)) };
        this.workMap.set(workId, next);
        this.events.emit({ kind: 'work', work: workView(next) });
        await this.persistWork(next);
      }
      if (next.discarded_at === undefined) {
        next = { ...next, discarded_at: this.timestamp() };
        this.workMap.set(workId, next);
        this.events.emit({ kind: 'work', work: workView(next) });
        await this.persistWork(next);
      }
      this.options.logger.info(`[steering] work ${workId} discarded by the developer`);
      return { work: workView(next), worktrees: outcomes };
    });
    const settled = step.then(() => undefined, () => undefined);
    this.retiring.set(workId, settled);
    void settled.then(() => {
      if (this.retiring.get(workId) === settled) this.retiring.delete(workId);
    });
    const out = await step;
    this.trim();
    return out;
  }

  /** steer_claim_next: the oldest queued instruction, now claimed; undefined when none is queued. */
  async claimNext(workId: string, session?: string, agent?: AgentRef): Promise<InstructionView | undefined> {
    this.assertOpen();
    this.requireWork(workId);
    let next: InstructionRecord | undefined;
    for (const r of this.live(workId)) {
      if (r.status === 'queued' && (next === undefined || (r.seq ?? 0) < (next.seq ?? 0))) next = r;
    }
    if (!next) return undefined;
    // No await before this line: the claim is decided synchronously, so a racing claim sees it.
    return this.update(next, { status: 'claimed', claimed_at: this.timestamp(), ...(session !== undefined ? { claimed_by: session } : {}), ...(agent !== undefined ? { claimed_by_agent: agent.name } : {}) });
  }

  /** steer_complete: a claimed instruction becomes done or blocked, with the agent's note. Repeating the same completion returns it. */
  async complete(instructionId: string, status: 'done' | 'blocked', note?: string): Promise<InstructionView> {
    this.assertOpen();
    const r = this.requireInstruction(instructionId);
    if (note !== undefined && utf8.encode(note).length > MAX_NOTE_BYTES) {
      throw new InvalidArgumentsError(`note has ${utf8.encode(note).length} bytes; at most ${MAX_NOTE_BYTES}.`, { field: 'note' });
    }
    const kept = note === '' ? undefined : note;
    if ((r.status === 'done' || r.status === 'blocked') && r.status === status && r.note === kept) {
      await this.journal.flush();
      return instructionView(r);
    }
    if (r.status !== 'claimed') {
      throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}, not claimed: only an instruction you claimed with steer_claim_next can be completed.`, {
        hint: r.status === 'queued' ? 'Claim it first with steer_claim_next.' : 'Call steer_status to see what is pending.',
        details: { reason: 'invalid_state', instruction_id: r.id, status: r.status },
      });
    }
    return this.update(r, { status, completed_at: this.timestamp(), ...(kept !== undefined ? { note: kept } : {}) });
  }

  /** The work a session has open (opened or adopted), if it is still open. */
  sessionWork(session: string | undefined): string | undefined {
    if (session === undefined) return undefined;
    const id = this.sessions.get(session);
    if (id !== undefined && this.workMap.get(id)?.status !== 'open') {
      this.sessions.delete(session);
      return undefined;
    }
    return id;
  }

  /** A session adopts an open work by naming it (after a reload, a new session takes the work on). */
  adopt(session: string | undefined, workId: string): void {
    if (session === undefined) return;
    if (this.workMap.get(workId)?.status === 'open') this.sessions.set(session, workId);
  }

  /** Forgets a closed session; its works stay. */
  endSession(session: string): void {
    this.sessions.delete(session);
  }

  /** What the runner attaches to a result of this session: its open work and how many instructions wait. */
  coordination(session: string | undefined, workId?: string): Coordination | undefined {
    const id = workId !== undefined && this.workMap.get(workId)?.status === 'open' ? workId : this.sessionWork(session);
    if (id === undefined) return undefined;
    let queued = 0;
    for (const r of this.live(id)) if (r.status === 'queued') queued++;
    return { work_id: id, queued_instructions: queued };
  }

  /** The patch operation keys and process ids recorded with a work. */
  operations(workId: string): WorkOperations {
    this.requireWork(workId);
    const patches = (this.options.sources?.patches() ?? []).filter((p) => p.work_id === workId).map((p) => p.operation_key);
    const processes = (this.options.sources?.execs() ?? []).filter((e) => e.work_id === workId).map((e) => e.process_id);
    return { patches, processes };
  }

  /** The process ids of the work's commands still running. */
  runningProcesses(workId: string): readonly string[] {
    return (this.options.sources?.execs() ?? []).filter((e) => e.work_id === workId && e.state === 'running').map((e) => e.process_id);
  }

  /** WorkRoots: the checkpoint digest of a frozen work (its edits are refused), undefined otherwise. */
  frozenDigest(workId: string): string | undefined {
    return this.workMap.get(workId)?.frozen?.digest;
  }

  /**
   * A caller named the work in a call that writes or runs a command: its session and its agent (with an agent
   * credential) are among the work's authors from now on (src/core/identity.ts).
   */
  noteEditor(workId: string, caller: Caller): void {
    const w = this.workMap.get(workId);
    if (!w) return;
    const before: Authors = { sessions: w.editors ?? [], agents: w.editor_agents ?? [] };
    if (withAuthor(before, caller) === before) return;
    void this.updateWork(workId, (cur) => {
      const now = withAuthor({ sessions: cur.editors ?? [], agents: cur.editor_agents ?? [] }, caller);
      return { ...cur, ...(now.sessions.length > 0 ? { editors: [...now.sessions] } : {}), ...(now.agents.length > 0 ? { editor_agents: [...now.agents] } : {}) };
    }).catch(() => undefined);
  }

  /** Changes a work's record (synchronously, then durably); used by freezing and reviews. */
  async updateWork(workId: string, change: (w: WorkRecord) => WorkRecord): Promise<WorkRecord> {
    this.assertOpen();
    const next = change(this.requireWork(workId));
    this.workMap.set(workId, next);
    this.events.emit({ kind: 'work', work: workView(next) });
    await this.persistWork(next);
    return next;
  }

  /** An operation names its work: it must exist and act in a workspace of the work (see rootFor). */
  checkOperationWork(workId: string, workspaceId: string): void {
    this.rootFor(workId, workspaceId);
  }

  /**
   * WorkRoots: where work `workId` edits workspace `workspaceId`. A work with worktrees acts in every folder it has
   * a worktree of (its worktree's folder); a shared work in its own workspace only (the folder itself: undefined).
   */
  rootFor(workId: string, workspaceId: string): string | undefined {
    const w = this.requireWork(workId);
    if (w.worktrees !== undefined) {
      const t = w.worktrees.find((x) => x.workspace_id === workspaceId);
      if (t?.removed_at !== undefined) {
        throw new InvalidArgumentsError(`Work ${w.id} is finished and its worktree of workspace ${JSON.stringify(workspaceId)} was removed.`, {
          field: 'work_id',
          hint: 'Open a new work, or leave work_id out to act in the folder itself.',
          details: { reason: 'worktree_removed', work_id: w.id, workspace_id: workspaceId },
        });
      }
      if (t) return t.root;
      throw new InvalidArgumentsError(`Work ${w.id} has no worktree of workspace ${JSON.stringify(workspaceId)}: that folder was not in a git repository when the work opened.`, {
        field: 'work_id',
        hint: `Its worktrees are of: ${w.worktrees.map((x) => x.workspace_id).join(', ')}. Leave work_id out to act in the folder itself.`,
        details: { reason: 'no_worktree', work_id: w.id, workspace_id: workspaceId, worktrees: w.worktrees.map((x) => x.workspace_id) },
      });
    }
    if (w.workspace_id !== workspaceId) {
      throw new InvalidArgumentsError(`Work ${w.id} is in workspace ${JSON.stringify(w.workspace_id)}, not ${JSON.stringify(workspaceId)}.`, {
        field: 'work_id',
        hint: 'Pass the work_id of a work opened in this workspace, or open one there with work_open.',
        details: { work_id: w.id, workspace_id: w.workspace_id },
      });
    }
    return undefined;
  }

  /** The bound, then the worktrees of every git folder of the window, on a task branch named after the work. */
  private async createWorktrees(id: string, title: string, workspaceId: string, base: string | undefined): Promise<readonly WorkWorktree[]> {
    const factory = this.options.worktrees;
    if (!factory) throw new ToolError('UNAVAILABLE', 'This host cannot create worktrees (no git support); open the work with isolation "shared".', { details: { reason: 'no_worktrees' } });
    const max = this.options.maxWorktreeWorks?.() ?? DEFAULT_MAX_WORKTREE_WORKS;
    // A finished work that kept a worktree (something in it would be lost) still counts.
    const holding = [...this.workMap.values()].filter(holdsWorktree);
    // Counted with the ones being created now, so that racing opens cannot pass the bound together.
    if (holding.length + this.creating >= max) {
      throw new ToolError('UNAVAILABLE', `${holding.length + this.creating} works already have their own worktrees; at most ${max} (codespace.works.maxWorktrees).`, {
        hint: 'Finish one of them with work_finish (a finished work keeps a worktree until its changes are committed and merged or pushed; then call work_finish again), or open this work with isolation "shared".',
        details: { reason: 'worktree_limit', max, works: holding.map((x) => x.id) },
      });
    }
    this.creating++;
    const maxMiB = this.options.maxWorktreeDiskMiB?.() ?? DEFAULT_MAX_WORKTREE_DISK_MIB;
    let release = (): void => undefined;
    const turn = this.diskGate;
    if (maxMiB > 0) this.diskGate = new Promise<void>((r) => (release = r));
    try {
      const folders = (this.options.workspaces.list?.() ?? [this.options.workspaces.get(workspaceId)]).map((f) => ({ id: f.id, root: f.root }));
      if (maxMiB > 0) {
        await turn;
        const [needed, used] = await Promise.all([factory.checkoutBytes(folders, base !== undefined ? { base } : {}), factory.usage()]);
        if (used + needed > maxMiB * MIB) {
          throw new ToolError('UNAVAILABLE', `The worktrees held take ${mib(used)} MiB and this work's checkout needs ${mib(needed)} MiB; at most ${maxMiB} MiB together (codespace.works.maxWorktreeDiskMiB).`, {
            hint: 'Finish works holding worktrees (a finished work keeps one until its changes are committed and merged or pushed) or ask the developer to discard one, or open this work with isolation "shared".',
            details: { reason: 'worktree_disk_limit', max_mib: maxMiB, used_mib: mib(used), needed_mib: mib(needed) },
          });
        }
      }
      const made = await factory.create(folders, { name: `codespace/${branchSlug(title)}-${id.replace(/^work_/, '').slice(0, 8)}`, ...(base !== undefined ? { base } : {}) });
      if (!made.some((t) => t.workspace_id === workspaceId)) {
        await factory.remove(made, { branches: true });
        throw new InvalidArgumentsError(`Workspace ${workspaceId} is not in a git repository, so the work cannot have a worktree of it.`, {
          field: 'isolation',
          hint: 'Open the work with isolation "shared", or in a workspace folder that git tracks.',
          details: { reason: 'not_git', workspace_id: workspaceId },
        });
      }
      return made;
    } finally {
      this.creating--;
      release();
    }
  }

  /** The window's folder of a workspace id, if it is still one of them. */
  private folderOf(workspaceId: string): string | undefined {
    try {
      return this.options.workspaces.get(workspaceId).root;
    } catch {
      return undefined;
    }
  }

  /** Throws WORK_NOT_FOUND unless the work exists. */
  requireWork(workId: string): WorkRecord {
    const w = this.workMap.get(workId);
    if (!w) {
      throw new ToolError('WORK_NOT_FOUND', `No work ${JSON.stringify(workId.length > 100 ? `${workId.slice(0, 100)}…` : workId)}.`, {
        hint: 'Open one with work_open, or pass the work_id work_open returned.',
        details: { work_id: workId },
      });
    }
    return w;
  }

  /** Resolves once every change so far is durable. */
  flush(): Promise<void> {
    return this.journal.flush();
  }

  dispose(): void {
    this.opened = false;
    this.events.dispose();
  }

  // ---- internals ------------------------------------------------------------------------------------------------

  private live(workId: string): InstructionRecord[] {
    const out: InstructionRecord[] = [];
    for (const id of this.byWork.get(workId) ?? []) {
      const r = this.instructionMap.get(id);
      if (r && r.deleted_at === undefined) out.push(r);
    }
    return out;
  }

  private index(r: InstructionRecord): void {
    const list = this.byWork.get(r.work_id);
    if (list) list.push(r.id);
    else this.byWork.set(r.work_id, [r.id]);
    if (r.idempotency_key !== undefined) this.keys.set(keyOf(r.work_id, r.idempotency_key), r.id);
  }

  private requireInstruction(id: string): InstructionRecord {
    const r = this.instructionMap.get(id);
    if (!r || r.deleted_at !== undefined) {
      throw new ToolError('INSTRUCTION_NOT_FOUND', `No instruction ${JSON.stringify(id.length > 100 ? `${id.slice(0, 100)}…` : id)}.`, {
        hint: 'List the instructions of the work (steer_status gives counts) and use an id from there.',
        details: { instruction_id: id },
      });
    }
    return r;
  }

  private assertDraft(r: InstructionRecord, what: 'edited' | 'deleted' | 'queued'): void {
    if (r.status !== 'draft') {
      throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}; only a draft can be ${what}.`, {
        hint: r.status === 'queued' ? 'It is already waiting for the agent.' : 'Write a new instruction instead.',
        details: { reason: 'not_draft', instruction_id: r.id, status: r.status },
      });
    }
  }

  private assertOpen(): void {
    if (!this.opened) throw new ToolError('INTERNAL', 'Steering is not available: its journal is not open.');
  }

  private async update(r: InstructionRecord, change: Partial<InstructionRecord>): Promise<InstructionView> {
    const next: InstructionRecord = { ...r, ...change, revision: r.revision + 1 };
    this.instructionMap.set(r.id, next);
    this.events.emit({ kind: 'instruction', instruction: instructionView(next) });
    await this.persistInstruction(next);
    return instructionView(next);
  }

  private persistWork(w: WorkRecord): Promise<void> {
    return this.journal.appendWork(w);
  }

  private persistInstruction(r: InstructionRecord): Promise<void> {
    return this.journal.appendInstruction(r);
  }

  /** Drops the oldest finished works (and their instructions) beyond the limit. */
  private trim(): void {
    const max = this.options.maxFinishedWorks ?? DEFAULT_FINISHED_WORKS;
    // A finished work that still holds a worktree is kept: a later work_finish removes it.
    const finished = [...this.workMap.values()].filter((w) => w.status === 'finished' && !holdsWorktree(w)).sort((a, b) => (a.finished_at ?? '').localeCompare(b.finished_at ?? ''));
    for (const w of finished.slice(0, Math.max(0, finished.length - max))) {
      this.workMap.delete(w.id);
      for (const id of this.byWork.get(w.id) ?? []) {
        const r = this.instructionMap.get(id);
        if (r?.idempotency_key !== undefined) this.keys.delete(keyOf(w.id, r.idempotency_key));
        this.instructionMap.delete(id);
      }
      this.byWork.delete(w.id);
    }
  }

  private timestamp(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }

  private newId(prefix: 'work' | 'ins'): string {
    return this.options.newId?.(prefix) ?? `${prefix}_${randomBytes(8).toString('hex')}`;
  }
}

function workView(w: WorkRecord): WorkView {
  return {
    id: w.id,
    workspace_id: w.workspace_id,
    title: w.title,
    status: w.status,
    opened_at: w.opened_at,
    ...(w.finished_at !== undefined ? { finished_at: w.finished_at } : {}),
    ...(w.discarded_at !== undefined ? { discarded_at: w.discarded_at } : {}),
    ...(w.session !== undefined ? { session: w.session } : {}),
    ...(w.agent !== undefined ? { agent: { ...w.agent } } : {}),
    ...(w.baseline !== undefined ? { baseline: w.baseline } : {}),
    ...(w.worktrees !== undefined
      ? { worktrees: w.worktrees.map((t) => ({ workspace_id: t.workspace_id, root: t.root, top: t.top, branch: t.branch, base: t.base, ...(t.removed_at !== undefined ? { removed_at: t.removed_at } : {}) })) }
      : {}),
    ...(w.frozen !== undefined ? { frozen: { digest: w.frozen.digest, at: w.frozen.at } } : {}),
    ...(w.reviews !== undefined && w.reviews.length > 0 ? { review: { ...(w.reviews[w.reviews.length - 1] as NonNullable<WorkRecord['reviews']>[number]) } } : {}),
    ...(w.committed !== undefined ? { committed: { digest: w.committed.digest, commits: w.committed.commits.map((c) => ({ ...c })) } } : {}),
    ...(w.delivered !== undefined ? { delivered: w.delivered.map((d) => ({ ...d })) } : {}),
  };
}

/** Whether a work still has a worktree on disk: open with worktrees, or finished with one kept. */
/** Bytes in MiB, one decimal, rounded up (a non-zero size never shows as 0). */
function mib(bytes: number): number {
  return Math.ceil((bytes / MIB) * 10) / 10;
}

function holdsWorktree(w: WorkRecord): boolean {
  return w.worktrees !== undefined && (w.status === 'open' || w.worktrees.some((t) => t.removed_at === undefined));
}

/** A task branch's name part from a work's title: lower-case words joined by `-`, at most 40 characters. */
export function branchSlug(title: string): string {
  const s = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '');
  return s === '' ? 'work' : s;
}

function instructionView(r: InstructionRecord): InstructionView {
  return {
    id: r.id,
    work_id: r.work_id,
    text: r.text,
    status: r.status,
    created_at: r.created_at,
    ...(r.queued_at !== undefined ? { queued_at: r.queued_at } : {}),
    ...(r.claimed_at !== undefined ? { claimed_at: r.claimed_at } : {}),
    ...(r.completed_at !== undefined ? { completed_at: r.completed_at } : {}),
    ...(r.note !== undefined ? { note: r.note } : {}),
    revision: r.revision,
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
    ...(r.comments !== undefined ? { comments: r.comments } : {}),
    ...(r.rewind !== undefined ? { rewind: r.rewind } : {}),
  };
}

/** The text of a rewind instruction: what the developer did and which files now hold other content, cut to the size limit. */
export function rewindText(n: RewindNotice): string {
  const where = n.checkpoint === 0 ? 'before its first operation' : `checkpoint ${n.checkpoint} (right after operation ${n.operation_id ?? '?'})`;
  const head =
    n.action === 'rewind'
      ? `The developer rewound this work's files to ${where}. Your later changes to these files are gone from disk; read them again before editing (versions in "rewind"):`
      : `The developer redid the rewind: this work's files are back as they were before it, at ${where}. Read them again before editing (versions in "rewind"):`;
  let text = [head, ...n.files.map((f) => `- ${f.path}${f.version === null ? ' (no file)' : ''}`)].join('\n');
  const enc = new TextEncoder();
  if (enc.encode(text).length > MAX_INSTRUCTION_BYTES) {
    while (enc.encode(text).length > MAX_INSTRUCTION_BYTES - 64) text = text.slice(0, Math.floor(text.length * 0.9));
    text += '\n… (cut; every file is in "rewind")';
  }
  return text;
}

/**
 * The text of a review_comments instruction, for whoever reads only text (the panel, /inbox, an agent that ignores
 * `comments`): one line per comment, `path:start-end: body` (` (old side)` after the lines of a comment on the file
 * before the change; the body's whitespace runs as one space), cut to the instruction size limit. `comments` has
 * each body exactly.
 */
export function reviewCommentsText(comments: readonly ReviewComment[]): string {
  const files = new Set(comments.map((c) => c.path)).size;
  const head = `Review comments from the developer (${comments.length} on ${files} file${files === 1 ? '' : 's'}; each with its lines in "comments"):`;
  const lines = comments.map((c) => {
    const at = c.range.start_line === c.range.end_line ? `${c.range.start_line}` : `${c.range.start_line}-${c.range.end_line}`;
    return `- ${c.path}:${at}${c.side === 'old' ? ' (old side)' : ''}: ${c.body.replace(/\s+/g, ' ').trim()}`;
  });
  let text = [head, ...lines].join('\n');
  const enc = new TextEncoder();
  if (enc.encode(text).length > MAX_INSTRUCTION_BYTES) {
    while (enc.encode(text).length > MAX_INSTRUCTION_BYTES - 64) text = text.slice(0, Math.floor(text.length * 0.9));
    text += '\n… (cut; every comment is in "comments")';
  }
  return text;
}

function assertWorkOpen(w: WorkRecord): void {
  if (w.status !== 'open') {
    throw new InvalidArgumentsError(`Work ${w.id} is finished; it takes no new instructions.`, {
      hint: 'Ask the agent to open a new work for further changes.',
      details: { reason: 'work_finished', work_id: w.id },
    });
  }
}

function checkText(text: string): void {
  if (text.trim() === '') throw new InvalidArgumentsError('The instruction text is empty.', { field: 'text', hint: 'Write what the agent should do.' });
  const n = utf8.encode(text).length;
  if (n > MAX_INSTRUCTION_BYTES) {
    throw new InvalidArgumentsError(`The instruction has ${n} bytes; at most ${MAX_INSTRUCTION_BYTES} (UTF-8).`, {
      field: 'text',
      hint: 'Shorten it, or split it into several instructions.',
      details: { bytes: n, max_bytes: MAX_INSTRUCTION_BYTES },
    });
  }
}

function checkKey(key: string): void {
  if (key === '' || key.length > 200) throw new InvalidArgumentsError('The idempotency key must have 1 to 200 characters.', { field: 'idempotency_key' });
}

function keyOf(workId: string, key: string): string {
  return `${workId}\n${key}`;
}

function hashOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
