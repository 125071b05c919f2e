import type { Disposable } from '../../../base/disposable';
import { describeError } from '../../../base/describeError';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { withAuthor } from '../../../kernel/identity';
import type { AgentRef, Authors, Caller } from '../../../kernel/identity';
import type { WorkRecord } from '../../../kernel/ledger/schemas';
import type { ReviewComment } from '../../../kernel/approvals/reviewComments';
import type { WorkRoots } from '../../../kernel/workspaces';
import type { WorktreeDiscard, WorktreeSurvey } from './workTree';
import { InstructionQueue } from './instructionQueue';
import type {
  Coordination,
  FinishOutcome,
  InstructionStatus,
  InstructionView,
  RewindNotice,
  Steering,
  SteeringChange,
  SteeringCounts,
  WorkBaseline,
  WorkIsolation,
  WorkOperations,
  WorkView,
} from './steering';
import { MAX_TITLE_CHARS } from './steering';
import { SteeringStore, holdsWorktree } from './steeringStore';
import type { SteeringStoreOptions } from './steeringStore';
import { WorkSessions } from './workSessions';
import { workRootFor } from './workRoots';
import { WorktreeLifecycle } from './worktreeLifecycle';
import type { WorktreeLifecycleOptions } from './worktreeLifecycle';
import { instructionView, workView } from './views';

export { DEFAULT_FINISHED_WORKS } from './steeringStore';
export { DEFAULT_MAX_WORKTREE_DISK_MIB, DEFAULT_MAX_WORKTREE_WORKS, branchSlug } from './worktreeLifecycle';
export { reviewCommentsText, rewindText } from './instructionText';

export interface SteeringServiceOptions extends SteeringStoreOptions, WorktreeLifecycleOptions {
  /** The isolation of a work_open that names none (`codespace.works.isolation`; default shared). */
  readonly defaultIsolation?: () => WorkIsolation;
  /** Captures the workspace at work_open for a later review (absent: works carry no baseline). */
  readonly baseline?: WorkBaseline;
  /** The operations recorded with a work_id, for operations(). */
  readonly sources?: {
    readonly patches: () => readonly { readonly work_id?: string; readonly operation_key: string }[];
    readonly execs: () => readonly { readonly work_id?: string; readonly process_id: string; readonly state?: string }[];
  };
}

/**
 * Works and instructions, in memory and in their own section of the shared journal. Every state change happens
 * synchronously, before the first await of the call, so two calls racing (two sessions claiming, a developer
 * queuing while the agent finishes) are ordered by the event loop: one instruction is never handed out twice,
 * and work_finish never closes over an instruction queued before it. The journal append follows; the call
 * resolves once the change is durable.
 *
 * The pieces: SteeringStore (records, change events, journal), InstructionQueue (drafts, queue, claim, completion),
 * WorktreeLifecycle (a work's git worktrees), WorkSessions (which session has which work open). This class is the
 * work lifecycle (open, finish, discard) and the one API the tools, the panel and the runner call.
 */
export class SteeringService implements Steering, WorkRoots, Disposable {
  private readonly store: SteeringStore;
  private readonly queueOf: InstructionQueue;
  private readonly worktrees: WorktreeLifecycle;
  private readonly sessions: WorkSessions;

  constructor(private readonly options: SteeringServiceOptions) {
    this.store = new SteeringStore(options);
    this.queueOf = new InstructionQueue(this.store);
    this.worktrees = new WorktreeLifecycle(this.store, options);
    this.sessions = new WorkSessions((id) => this.store.works.get(id)?.status === 'open');
  }

  /** Loads works and instructions from the journal (last line of each id wins) and compacts it. */
  async open(): Promise<{ works: number; open: number; queued: number; claimed: number }> {
    await this.store.open();
    let open = 0;
    let queued = 0;
    let claimed = 0;
    for (const w of this.store.works.values()) {
      if (w.status !== 'open') continue;
      open++;
      const c = this.counts(w.id);
      queued += c.queued;
      claimed += c.claimed;
    }
    return { works: this.store.works.size, open, queued, claimed };
  }

  // ---- developer side -------------------------------------------------------------------------------------------

  works(filter?: { status?: 'open' | 'finished' }): WorkView[] {
    return [...this.store.works.values()].filter((w) => filter?.status === undefined || w.status === filter.status).map(workView);
  }

  work(id: string): WorkView | undefined {
    const w = this.store.works.get(id);
    return w ? workView(w) : undefined;
  }

  instructions(workId: string): InstructionView[] {
    this.requireWork(workId);
    return this.store.live(workId).map(instructionView);
  }

  counts(workId: string): SteeringCounts {
    this.requireWork(workId);
    const c: Record<InstructionStatus, number> = { draft: 0, queued: 0, claimed: 0, done: 0, blocked: 0 };
    for (const r of this.store.live(workId)) c[r.status]++;
    return c;
  }

  /** One instruction by id (a deleted draft is gone). */
  instruction(id: string): InstructionView | undefined {
    const r = this.store.instructions.get(id);
    return r && r.deleted_at === undefined ? instructionView(r) : undefined;
  }

  async createDraft(workId: string, text: string, opts: { queue?: boolean; idempotencyKey?: string } = {}): Promise<InstructionView> {
    return (await this.create(workId, text, opts)).instruction;
  }

  /** createDraft, saying whether the call created the instruction or replayed its idempotency key. */
  create(workId: string, text: string, opts: { queue?: boolean; idempotencyKey?: string } = {}): Promise<{ instruction: InstructionView; created: boolean }> {
    return this.queueOf.create(workId, text, opts);
  }

  queueReviewComments(workId: string, comments: readonly ReviewComment[]): Promise<InstructionView> {
    return this.queueOf.queueReviewComments(workId, comments);
  }

  queueRewindNotice(workId: string, notice: RewindNotice): Promise<InstructionView> {
    return this.queueOf.queueRewindNotice(workId, notice);
  }

  editDraft(instructionId: string, text: string, expectedRevision?: number): Promise<InstructionView> {
    return this.queueOf.editDraft(instructionId, text, expectedRevision);
  }

  deleteDraft(instructionId: string): Promise<void> {
    return this.queueOf.deleteDraft(instructionId);
  }

  queue(instructionId: string): Promise<InstructionView> {
    return this.queueOf.queue(instructionId);
  }

  requeue(instructionId: string): Promise<InstructionView> {
    return this.queueOf.requeue(instructionId);
  }

  onDidChange(listener: (e: SteeringChange) => void): Disposable {
    return this.store.onDidChange(listener);
  }

  // ---- agent side -----------------------------------------------------------------------------------------------

  /** work_open: a new work in a workspace; the session (if any) has it open from now on. */
  async openWork(workspaceId: string, title: string, opts: { session?: string; agent?: AgentRef; isolation?: WorkIsolation; base?: string } = {}): Promise<WorkView> {
    this.store.assertOpen();
    const ws = this.options.workspaces.get(workspaceId);
    const shown = title.trim();
    if (shown === '') throw new InvalidArgumentsError('title must not be empty: name the task in a few words.', { field: 'title' });
    if (shown.length > MAX_TITLE_CHARS) throw new InvalidArgumentsError(`title has ${shown.length} characters; at most ${MAX_TITLE_CHARS}.`, { field: 'title' });
    const isolation = opts.isolation ?? this.options.defaultIsolation?.() ?? 'shared';
    if (opts.base !== undefined && isolation !== 'worktree') {
      throw new InvalidArgumentsError('base applies to a work with isolation "worktree" only.', { field: 'base', hint: 'Pass isolation: "worktree" with it, or leave base out.' });
    }
    const id = this.store.newId('work');
    const worktrees = isolation === 'worktree' ? await this.worktrees.create(id, shown, ws.id, opts.base) : undefined;
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
      opened_at: this.store.timestamp(),
      ...(opts.session !== undefined ? { session: opts.session } : {}),
      ...(opts.agent !== undefined ? { agent: { id: opts.agent.id, name: opts.agent.name } } : {}),
      ...(baseline !== undefined ? { baseline } : {}),
      ...(worktrees !== undefined ? { worktrees: worktrees.map((t) => ({ workspace_id: t.workspace_id, root: t.root, top: t.top, branch: t.branch, base: t.base })) } : {}),
    };
    // The session has the work before its change event fires (a listener may ask for the session's work).
    if (opts.session !== undefined) this.sessions.set(opts.session, w.id);
    await this.store.putWork(w);
    return workView(w);
  }

  /** work_finish: closes the work unless instructions are queued or claimed. Finishing a finished work is a no-op. */
  async finishWork(workId: string): Promise<FinishOutcome> {
    this.store.assertOpen();
    const w = this.requireWork(workId);
    if (w.status === 'finished') {
      await this.store.journal.flush();
      return this.worktrees.retire(w.id);
    }
    const counts = this.counts(workId);
    if (counts.queued > 0 || counts.claimed > 0) return { closed: false, reason: 'pending_user_input', work: workView(w), counts };
    await this.close({ ...w, status: 'finished', finished_at: this.store.timestamp() });
    const out = await this.worktrees.retire(w.id);
    this.store.trim();
    return out;
  }

  /** What discarding work `workId` would drop and keep, per folder it still holds a worktree of. */
  surveyDiscard(workId: string): Promise<WorktreeSurvey[]> {
    return this.worktrees.survey(workId);
  }

  /**
   * The developer's discard of a work with worktrees: it is finished (its queued instructions go back to drafts, no
   * agent having seen them), and each worktree is removed with whatever changed or untracked files it has; a task
   * branch goes only when no commit of it would be lost, else it stays. Refused while an instruction of the work is
   * claimed (an agent is acting on it) or a command of the work runs (it could be writing in the worktree).
   */
  async discardWork(workId: string): Promise<{ work: WorkView; worktrees: WorktreeDiscard[] }> {
    this.store.assertOpen();
    const w = this.requireWork(workId);
    if (!holdsWorktree(w) || (w.worktrees ?? []).every((t) => t.removed_at !== undefined)) {
      throw new InvalidArgumentsError(`Work ${w.id} holds no worktree: there is nothing to discard.`, { details: { reason: 'no_worktree', work_id: w.id } });
    }
    const claimed = this.store.live(workId).filter((r) => r.status === 'claimed');
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
      const saved = this.queueOf.unqueueAll(workId);
      const at = this.store.timestamp();
      saved.push(this.close({ ...w, status: 'finished', finished_at: at, discarded_at: at }));
      await Promise.all(saved);
    }
    const out = await this.worktrees.discard(workId);
    this.store.trim();
    return { work: workView(out.work), worktrees: out.worktrees };
  }

  /** steer_claim_next: the oldest queued instruction, now claimed; undefined when none is queued. */
  claimNext(workId: string, session?: string, agent?: AgentRef): Promise<InstructionView | undefined> {
    return this.queueOf.claimNext(workId, session, agent);
  }

  /** steer_complete: a claimed instruction becomes done or blocked, with the agent's note. Repeating the same completion returns it. */
  complete(instructionId: string, status: 'done' | 'blocked', note?: string): Promise<InstructionView> {
    return this.queueOf.complete(instructionId, status, note);
  }

  /** The work a session has open (opened or adopted), if it is still open. */
  sessionWork(session: string | undefined): string | undefined {
    return this.sessions.workOf(session);
  }

  /** A session adopts an open work by naming it (after a reload, a new session takes the work on). */
  adopt(session: string | undefined, workId: string): void {
    this.sessions.adopt(session, workId);
  }

  /** Forgets a closed session; its works stay. */
  endSession(session: string): void {
    this.sessions.end(session);
  }

  /** What the runner attaches to a result of this session: its open work and how many instructions wait. */
  coordination(session: string | undefined, workId?: string): Coordination | undefined {
    const id = workId !== undefined && this.store.works.get(workId)?.status === 'open' ? workId : this.sessionWork(session);
    if (id === undefined) return undefined;
    let queued = 0;
    for (const r of this.store.live(id)) if (r.status === 'queued') queued++;
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
    return this.store.works.get(workId)?.frozen?.digest;
  }

  /**
   * A caller named the work in a call that writes or runs a command: its session and its agent (with an agent
   * credential) are among the work's authors from now on (src/kernel/identity.ts).
   */
  noteEditor(workId: string, caller: Caller): void {
    const w = this.store.works.get(workId);
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
    this.store.assertOpen();
    const next = change(this.requireWork(workId));
    await this.store.putWork(next);
    return next;
  }

  /** An operation names its work: it must exist and act in a workspace of the work (see rootFor). */
  checkOperationWork(workId: string, workspaceId: string): void {
    this.rootFor(workId, workspaceId);
  }

  /** WorkRoots: where work `workId` edits workspace `workspaceId` (see workRootFor). */
  rootFor(workId: string, workspaceId: string): string | undefined {
    return workRootFor(this.requireWork(workId), workspaceId);
  }

  /** Throws WORK_NOT_FOUND unless the work exists. */
  requireWork(workId: string): WorkRecord {
    return this.store.requireWork(workId);
  }

  /** Resolves once every change so far is durable. */
  flush(): Promise<void> {
    return this.store.journal.flush();
  }

  dispose(): void {
    this.store.dispose();
  }

  /** Records a work as finished (or discarded): no session has it open from its change event on. */
  private close(done: WorkRecord): Promise<void> {
    this.sessions.closeWork(done.id);
    return this.store.putWork(done);
  }
}
