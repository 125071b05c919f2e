import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Disposable } from '../../base/disposable';
import { ToolError } from '../errors';
import type { ToolErrorBody } from '../errors';
import type { Journal } from '../ports/journal';
import type { Logger } from '../ports/logger';
import { holdRecordSchema, LINE_TYPES } from '../ledger/schemas';
import { Emitter } from '../../base/emitter';
import { checkReviewComments } from '../policy/reviewComments';
import { assertNotOwn, withAuthor } from '../identity';
import type { Authors, Caller } from '../identity';
import type { ReviewComment } from '../policy/reviewComments';
import type { Approvals, Decider, HoldCommand, HoldFile, HoldReason, HoldState, HoldView, ProposalFile } from './hold';
import { describeError, describeErrorWithStack } from '../../base/describeError';

/** The operator's approval settings (user scope only: a workspace cannot relax them). */
export interface ApprovalPolicy {
  readonly patches: 'off' | 'sensitive' | 'confirm';
  readonly commands: 'off' | 'confirm';
  /** The MCP caller may call approval_resolve. Default false: only the person in VS Code decides. */
  readonly agentMayResolve: boolean;
}

export const DEFAULT_APPROVAL_POLICY: ApprovalPolicy = { patches: 'sensitive', commands: 'off', agentMayResolve: false };

/** A hold as kept: the view plus what resuming needs. */
export interface StoredHold extends HoldView {
  /** The original tool arguments, as the agent sent them (after schema validation). */
  readonly request: Readonly<Record<string, unknown>>;
  readonly request_hash: string;
  /** Terminal result of a consumed hold: what a repeated operation_resume returns. */
  readonly result?: unknown;
  /** Terminal error of a consumed hold (the resumed operation failed for good). */
  readonly error?: ToolErrorBody;
  /** Every session and agent that asked for it (none of them may resolve it). */
  readonly authors?: Authors;
}

export interface CreateHoldRequest {
  readonly tool: string;
  readonly workspace_id: string;
  readonly request: Readonly<Record<string, unknown>>;
  readonly request_hash: string;
  readonly reason: HoldReason;
  readonly files?: readonly HoldFile[];
  readonly command?: HoldCommand;
  readonly sensitive_paths: readonly string[];
  readonly operation_key?: string;
  /** The planned content, kept in memory for the diff editor (re-planned after a reload). */
  readonly proposal?: readonly ProposalFile[];
  /** Who asked: one of the hold's authors, who may not resolve it (src/core/identity.ts). */
  readonly caller?: Caller;
}

const NO_AUTHORS: Authors = { sessions: [], agents: [] };

/** What is on disk at a workspace-relative path now: a version, nothing, or a folder. */
/** The version of a file now; `workId`: the work the held request names (its worktree, when it has one). */
export type DiskProbe = (workspaceId: string, relPath: string, workId?: string) => Promise<string | undefined | 'directory'>;

export interface ApprovalServiceOptions {
  readonly journal: Journal;
  readonly logger: Logger;
  readonly policy: () => ApprovalPolicy;
  readonly probe: DiskProbe;
  /** Plans a hold's content again (after a reload, or when it was dropped from memory): the held operation's re-plan. */
  readonly replan: (hold: StoredHold) => Promise<readonly ProposalFile[]>;
  /** Finished holds kept (newest); pending, granted and resuming ones are always kept. Default 200. */
  readonly maxFinished?: number;
  readonly now?: () => number;
  readonly newId?: () => string;
}

const ENTRY_TYPE = LINE_TYPES.hold.type;
const ENTRY_VERSION = LINE_TYPES.hold.v;
/** A hold whose journal line would be larger is kept in memory only (it does not survive a reload). */
const MAX_RECORD_CHARS = 8 * 1024 * 1024;
/** Planned content kept in memory across all holds; beyond it the oldest proposals are dropped and re-planned on demand. */
const MAX_PROPOSAL_BYTES = 128 * 1024 * 1024;
/** Holds waiting for a decision at once: an agent cannot bury the reviewer (or the extension's memory). */
export const MAX_PENDING = 64;
/** Appended journal lines after which the journal is compacted to the latest state of each kept hold. */
const COMPACT_AFTER_APPENDS = 2000;
/** Longest reviewer note. */
export const MAX_NOTE_CHARS = 4000;

const entrySchema = z.object({ type: z.literal(ENTRY_TYPE), v: z.literal(ENTRY_VERSION), hold: holdRecordSchema });

function view(h: StoredHold): HoldView {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { request, request_hash, result, error, authors, ...rest } = h;
  return rest;
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function proposalBytes(files: readonly ProposalFile[]): number {
  return files.reduce((n, f) => n + (f.before?.length ?? 0) + (f.proposed?.length ?? 0), 0);
}

/**
 * The hold state machine, durable in its own journal. Decisions come from the person in VS Code (panel, diff
 * editor) or, only when the operator allows it, from the MCP caller. A hold is bound to the request (its hash)
 * and to the versions of the files it touches: a bound file that changes while the hold is pending makes it
 * stale, and a stale hold can never be granted. Resuming is at most once: `resuming` is durable before the
 * operation runs, so a crash in between leaves `ambiguous`, never a second run.
 */
export class ApprovalService implements Approvals, Disposable {
  private readonly holds = new Map<string, StoredHold>();
  private readonly proposals = new Map<string, readonly ProposalFile[]>();
  private readonly reviewedContent = new Map<string, Map<string, Uint8Array>>();
  private readonly changes: Emitter<HoldView>;
  private readonly waiters = new Map<string, Set<() => void>>();
  private opened = false;
  private appends = 0;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.changes = new Emitter<HoldView>((err) => options.logger.error('[approvals] a listener failed', describeErrorWithStack(err)));
  }

  /** Loads the journal; a hold cut off while resuming becomes `ambiguous`. Compacts the journal. */
  async open(): Promise<{ loaded: number; pending: number; ambiguous: number }> {
    const { journal, logger } = this.options;
    let ambiguous = 0;
    for (const record of await journal.load()) {
      const parsed = entrySchema.safeParse(record);
      if (!parsed.success) {
        logger.warn(`[approvals] skipped a journal record that is not a hold: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        continue;
      }
      this.holds.set(parsed.data.hold.approval_id, parsed.data.hold as StoredHold);
    }
    for (const [id, h] of this.holds) {
      if (h.state === 'resuming') {
        this.holds.set(id, { ...h, state: 'ambiguous' });
        ambiguous++;
      }
    }
    this.trim();
    await journal.rewrite([...this.holds.values()].filter((h) => this.fits(h)).map((hold) => ({ type: ENTRY_TYPE, v: ENTRY_VERSION, hold })));
    this.opened = true;
    const pending = [...this.holds.values()].filter((h) => h.state === 'pending').length;
    return { loaded: this.holds.size, pending, ambiguous };
  }

  policy(): ApprovalPolicy {
    return this.options.policy();
  }

  // ---- Approvals (the editor's port) ----

  list(): readonly HoldView[] {
    return [...this.holds.values()].reverse().map(view);
  }

  get(approvalId: string): HoldView | undefined {
    const h = this.holds.get(approvalId);
    return h ? view(h) : undefined;
  }

  pending(): readonly HoldView[] {
    return this.list().filter((h) => h.state === 'pending');
  }

  stored(approvalId: string): StoredHold {
    const h = this.holds.get(approvalId);
    if (!h) {
      throw new ToolError('OPERATION_NOT_FOUND', `No approval hold has id ${JSON.stringify(approvalId.slice(0, 100))}.`, {
        hint: 'Use the approval_id that APPROVAL_REQUIRED or approval_create returned. Finished holds roll off after a while.',
        details: { approval_id: approvalId },
      });
    }
    return h;
  }

  async proposal(approvalId: string): Promise<readonly ProposalFile[]> {
    const h = this.stored(approvalId);
    if (h.files === undefined) throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} ${h.command ? 'is a command; it has' : 'has'} no file content.`);
    if (h.state !== 'pending' && h.state !== 'stale' && h.state !== 'granted') {
      throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} is ${h.state}; its proposal is no longer shown.`, { details: { approval_id: approvalId, state: h.state } });
    }
    let files = this.proposals.get(approvalId);
    if (!files) {
      files = await this.options.replan(h);
      this.keepProposal(approvalId, files);
    }
    const reviewed = this.reviewedContent.get(approvalId);
    return files.map((f) => {
      const r = reviewed?.get(f.path);
      return r !== undefined ? { ...f, reviewed: r } : f;
    });
  }

  /** The reviewer's edits of a hold, by section path (empty when unedited). */
  reviewed(approvalId: string): ReadonlyMap<string, Uint8Array> {
    return this.reviewedContent.get(approvalId) ?? new Map();
  }

  setReviewed(approvalId: string, path: string, bytes: Uint8Array): void {
    const h = this.stored(approvalId);
    if (h.state !== 'pending') throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} is ${h.state}; its proposal can no longer be edited.`, { details: { approval_id: approvalId, state: h.state } });
    const file = h.files?.find((f) => f.path === path);
    if (!file || file.kind === 'delete') {
      throw new ToolError('INVALID_ARGUMENTS', `${JSON.stringify(path)} is not a file this hold writes, so it cannot be edited.`, { details: { approval_id: approvalId, path } });
    }
    const proposed = this.proposals.get(approvalId)?.find((f) => f.path === path)?.proposed;
    let edits = this.reviewedContent.get(approvalId);
    if (proposed !== undefined && bytesEqual(proposed, bytes)) {
      edits?.delete(path);
    } else {
      if (!edits) this.reviewedContent.set(approvalId, (edits = new Map()));
      edits.set(path, bytes.slice());
    }
    this.changes.emit(view(h));
  }

  async resolve(approvalId: string, decision: 'grant' | 'deny', options: { by: Decider; note?: string; caller?: Caller }): Promise<HoldView> {
    if (options.by === 'agent' && !this.policy().agentMayResolve) {
      throw new ToolError('PERMISSION_DENIED', 'Only the developer in VS Code can decide on a hold: the operator has not allowed agents to resolve approvals.', {
        hint: 'Call operation_resume with wait_ms to wait for the decision; the developer sees the hold in the CodeSpace panel.',
        details: { approval_id: approvalId },
      });
    }
    const h = this.stored(approvalId);
    // Not your own review: an agent never resolves a hold it (in any session) asked for.
    if (options.by === 'agent') assertNotOwn(options.caller ?? {}, h.authors ?? NO_AUTHORS, { kind: 'hold', id: approvalId, action: 'resolve' });
    if (h.state !== 'pending') throw this.notPending(h);
    const note = options.note?.slice(0, MAX_NOTE_CHARS);
    if (decision === 'grant') {
      const stale = await this.staleReason(h);
      const now = this.holds.get(approvalId) as StoredHold;
      if (now.state !== 'pending') throw this.notPending(now);
      if (stale) {
        await this.markStale(approvalId, stale);
        throw staleError(approvalId, stale);
      }
    }
    const now = this.holds.get(approvalId) as StoredHold;
    if (now.state !== 'pending') throw this.notPending(now);
    const next: StoredHold = {
      ...now,
      state: decision === 'grant' ? 'granted' : 'denied',
      decided_at: this.timestamp(),
      decided_by: options.by,
      ...(options.by === 'agent' && options.caller?.agent !== undefined ? { decided_by_agent: options.caller.agent.name } : {}),
      ...(note !== undefined && note !== '' ? { note } : {}),
    };
    await this.put(next);
    if (decision === 'deny') this.forgetContent(approvalId);
    return view(next);
  }

  async requestChanges(approvalId: string, comments: readonly ReviewComment[], options: { note?: string } = {}): Promise<HoldView> {
    const h = this.stored(approvalId);
    if (h.files === undefined) throw new ToolError('INVALID_ARGUMENTS', `Hold ${approvalId} is a command; line comments apply to a patch's files.`, { details: { approval_id: approvalId } });
    if (h.state !== 'pending') throw this.notPending(h);
    const paths = [...new Set(h.files.flatMap((f) => (f.move_to !== undefined ? [f.path, f.move_to] : [f.path])))];
    const checked = checkReviewComments(comments, paths);
    const note = options.note?.trim().slice(0, MAX_NOTE_CHARS);
    const next: StoredHold = {
      ...h,
      state: 'denied',
      decided_at: this.timestamp(),
      decided_by: 'reviewer',
      ...(note !== undefined && note !== '' ? { note } : {}),
      comments: checked,
    };
    await this.put(next);
    this.forgetContent(approvalId);
    return view(next);
  }

  /**
   * The caller takes back its own pending request (MCP tasks/cancel): the hold ends as denied by the agent, with a
   * note saying so, and nothing runs. Unlike `resolve`, this needs no permission: withdrawing grants nothing.
   */
  async withdraw(approvalId: string, note: string): Promise<HoldView> {
    const h = this.stored(approvalId);
    if (h.state !== 'pending') throw this.notPending(h);
    const next: StoredHold = { ...h, state: 'denied', decided_at: this.timestamp(), decided_by: 'agent', note: note.slice(0, MAX_NOTE_CHARS) };
    await this.put(next);
    this.forgetContent(approvalId);
    return view(next);
  }

  async revalidate(approvalId?: string): Promise<void> {
    const targets = approvalId !== undefined ? [this.stored(approvalId)] : [...this.holds.values()];
    for (const h of targets) {
      if (h.state !== 'pending' && h.state !== 'granted') continue;
      const reason = await this.staleReason(h);
      const now = this.holds.get(h.approval_id);
      if (reason && now && (now.state === 'pending' || now.state === 'granted')) await this.markStale(h.approval_id, reason);
    }
  }

  onDidChange(listener: (hold: HoldView) => void): Disposable {
    return this.changes.on(listener);
  }

  // ---- The runner's side ----

  /** Opens a hold, or returns the pending one of the same request (a retry must not make a second hold). */
  async create(req: CreateHoldRequest): Promise<HoldView> {
    let pending = 0;
    for (const h of this.holds.values()) {
      if (h.state === 'pending' && h.tool === req.tool && h.request_hash === req.request_hash) return this.addRequester(h, req.caller);
      if (h.state === 'pending') pending++;
    }
    if (pending >= MAX_PENDING) {
      throw new ToolError('APPROVAL_CONFLICT', `${pending} holds already wait for the developer; no more can be opened until some are decided.`, {
        hint: 'Wait for decisions with operation_resume (wait_ms) before proposing more.',
        details: { pending, max: MAX_PENDING },
      });
    }
    const hold: StoredHold = {
      approval_id: this.options.newId?.() ?? `ap_${randomBytes(8).toString('hex')}`,
      tool: req.tool,
      workspace_id: req.workspace_id,
      state: 'pending',
      reason: req.reason,
      created_at: this.timestamp(),
      ...(req.files ? { files: req.files } : {}),
      ...(req.command ? { command: req.command } : {}),
      sensitive_paths: req.sensitive_paths,
      ...(req.operation_key !== undefined ? { operation_key: req.operation_key } : {}),
      request: req.request,
      request_hash: req.request_hash,
      ...(req.caller !== undefined ? { authors: withAuthor(NO_AUTHORS, req.caller) } : {}),
      ...(req.caller?.agent !== undefined ? { requested_by_agent: req.caller.agent.name } : {}),
    };
    if (req.proposal) this.keepProposal(hold.approval_id, req.proposal);
    await this.put(hold);
    this.trim();
    return view(hold);
  }

  /**
   * The same request asked again (a retry, or another caller with the same request): the pending hold it already
   * has, with the caller added to its authors, so that no one who asked for it can resolve it.
   */
  private async addRequester(h: StoredHold, caller: Caller | undefined): Promise<HoldView> {
    if (caller === undefined) return view(h);
    const authors = withAuthor(h.authors ?? NO_AUTHORS, caller);
    if (authors === h.authors) return view(h);
    const next: StoredHold = { ...h, authors, ...(h.requested_by_agent === undefined && caller.agent !== undefined ? { requested_by_agent: caller.agent.name } : {}) };
    await this.put(next);
    return view(next);
  }

  /**
   * Waits until the hold is no longer pending, at most `ms`, or until `signal` aborts. Returns the hold as it
   * stands then (still pending when the wait ran out).
   */
  async waitForDecision(approvalId: string, ms: number, signal?: AbortSignal): Promise<StoredHold> {
    const h = this.stored(approvalId);
    if (h.state !== 'pending' || ms <= 0) return h;
    await new Promise<void>((resolve) => {
      let set = this.waiters.get(approvalId);
      if (!set) this.waiters.set(approvalId, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        set.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
    return this.stored(approvalId);
  }

  /** granted → resuming, durably, before anything runs. Any other state throws the error a resume gives for it. */
  async beginResume(approvalId: string): Promise<StoredHold> {
    const h = this.stored(approvalId);
    if (h.state !== 'granted') throw this.notGranted(h);
    const next: StoredHold = { ...h, state: 'resuming' };
    await this.put(next);
    return next;
  }

  /** A resume that could not start the operation (the workspace was busy, a permission changed): granted again. */
  async abandonResume(approvalId: string): Promise<void> {
    const h = this.stored(approvalId);
    if (h.state === 'resuming') await this.put({ ...h, state: 'granted' });
  }

  /** resuming → consumed with the terminal outcome; a repeated resume returns it. */
  async finishResume(approvalId: string, outcome: { result: unknown } | { error: ToolErrorBody }): Promise<StoredHold> {
    const h = this.stored(approvalId);
    const next: StoredHold = { ...h, state: 'consumed', ...outcome };
    await this.put(next);
    this.forgetContent(approvalId);
    return next;
  }

  async markStale(approvalId: string, reason: string): Promise<void> {
    const h = this.stored(approvalId);
    if (h.state !== 'pending' && h.state !== 'granted' && h.state !== 'resuming') return;
    await this.put({ ...h, state: 'stale', stale_reason: reason });
  }

  /** The error a resume answers for a hold that is not granted (or the stored outcome's error). */
  notGranted(h: StoredHold): ToolError {
    switch (h.state) {
      case 'pending':
        return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is still waiting for the developer's decision.`, {
          hint: 'Call operation_resume again with wait_ms (up to 55000) to keep waiting; do not resend the original request.',
          details: { approval_id: h.approval_id, state: h.state },
        });
      case 'denied':
        return new ToolError('APPROVAL_DENIED', `The developer denied hold ${h.approval_id}${h.note ? `: ${h.note}` : '.'}`, {
          hint: 'Nothing was written or started. Read the note, change the approach, and send a new request.',
          details: { approval_id: h.approval_id, ...(h.note !== undefined ? { note: h.note } : {}) },
        });
      case 'stale':
        return staleError(h.approval_id, h.stale_reason ?? 'a file it touches changed');
      case 'resuming':
        return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is being resumed by another call.`, {
          hint: 'Wait for that call; a repeat of operation_resume afterwards returns its result.',
          details: { approval_id: h.approval_id, state: h.state },
        });
      case 'ambiguous':
        return new ToolError('APPROVAL_AMBIGUOUS', `Resuming hold ${h.approval_id} was interrupted; whether it ran is not known.`, {
          hint:
            h.operation_key === undefined
              ? `Do not start the ${h.command ? 'command' : 'operation'} again blindly: check the workspace for its effects first.`
              : `Call operation_status with operation_key ${JSON.stringify(h.operation_key)} to learn whether the patch was applied.`,
          details: { approval_id: h.approval_id, state: h.state, ...(h.operation_key !== undefined ? { operation_key: h.operation_key } : {}) },
        });
      case 'granted':
      case 'consumed':
        return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is ${h.state}.`, { details: { approval_id: h.approval_id, state: h.state } });
    }
  }

  dispose(): void {
    this.changes.dispose();
    for (const set of this.waiters.values()) for (const w of [...set]) w();
    this.waiters.clear();
  }

  // ---- internals ----

  private notPending(h: StoredHold): ToolError {
    if (h.state === 'stale') return staleError(h.approval_id, h.stale_reason ?? 'a file it touches changed');
    return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is ${h.state}, not pending; it was already decided.`, {
      hint: 'A decision is final. Call operation_resume to learn the outcome.',
      details: { approval_id: h.approval_id, state: h.state },
    });
  }

  /** Which bound file no longer matches, or undefined when every one still does. */
  private async staleReason(h: StoredHold): Promise<string | undefined> {
    const named = (h.request as { work_id?: unknown }).work_id;
    const workId = typeof named === 'string' ? named : undefined;
    for (const f of h.files ?? []) {
      let now: string | undefined | 'directory';
      try {
        now = await this.options.probe(h.workspace_id, f.path, workId);
      } catch (err) {
        return `${f.path} could not be checked (${describeError(err)})`;
      }
      if (f.kind === 'add') {
        if (now !== undefined) return `${f.path} was created on disk after the proposal was made`;
      } else if (now !== f.before_version) {
        return now === undefined ? `${f.path} was deleted on disk` : `${f.path} changed on disk`;
      }
      if (f.kind === 'move' && f.move_to !== undefined) {
        const dest = await this.options.probe(h.workspace_id, f.move_to, workId).catch(() => 'unreadable');
        if (dest !== undefined) return `${f.move_to} appeared on disk after the proposal was made`;
      }
    }
    return undefined;
  }

  private keepProposal(approvalId: string, files: readonly ProposalFile[]): void {
    this.proposals.set(approvalId, files);
    let total = 0;
    for (const f of this.proposals.values()) total += proposalBytes(f);
    for (const id of this.proposals.keys()) {
      if (total <= MAX_PROPOSAL_BYTES || id === approvalId) break;
      total -= proposalBytes(this.proposals.get(id) ?? []);
      this.proposals.delete(id);
    }
  }

  private forgetContent(approvalId: string): void {
    this.proposals.delete(approvalId);
    this.reviewedContent.delete(approvalId);
  }

  private fits(h: StoredHold): boolean {
    return JSON.stringify(h).length <= MAX_RECORD_CHARS;
  }

  private async put(h: StoredHold): Promise<void> {
    this.holds.set(h.approval_id, h);
    if (this.opened && this.fits(h)) {
      await this.options.journal.append({ type: ENTRY_TYPE, v: ENTRY_VERSION, hold: h });
      if (++this.appends >= COMPACT_AFTER_APPENDS) {
        this.appends = 0;
        this.trim();
        await this.options.journal.rewrite([...this.holds.values()].filter((x) => this.fits(x)).map((hold) => ({ type: ENTRY_TYPE, v: ENTRY_VERSION, hold })));
      }
    } else if (this.opened) {
      this.options.logger.warn(`[approvals] hold ${h.approval_id} is too large to keep on disk; it lives until the window reloads`);
    }
    if (h.state !== 'pending') {
      for (const w of [...(this.waiters.get(h.approval_id) ?? [])]) w();
    }
    this.changes.emit(view(h));
  }

  private trim(): void {
    const max = this.options.maxFinished ?? 200;
    const finished = [...this.holds.values()].filter((h) => h.state === 'denied' || h.state === 'stale' || h.state === 'consumed' || h.state === 'ambiguous');
    for (const h of finished.slice(0, Math.max(0, finished.length - max))) {
      this.holds.delete(h.approval_id);
      this.forgetContent(h.approval_id);
    }
  }

  private timestamp(): string {
    return new Date(this.options.now?.() ?? Date.now()).toISOString();
  }
}

function staleError(approvalId: string, reason: string): ToolError {
  return new ToolError('VERSION_CONFLICT', `Hold ${approvalId} is stale: ${reason}. It can no longer be granted.`, {
    hint: 'Read the files again and send a new patch (with a new operation_key).',
    details: { approval_id: approvalId, state: 'stale', reason },
  });
}

export type { HoldState };
