import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Disposable } from '../../base/disposable';
import { ToolError } from '../../base/errors';
import type { ToolErrorBody } from '../../base/errors';
import type { Journal } from '../../base/journal';
import type { Logger } from '../../base/logger';
import { holdRecordSchema, LINE_TYPES } from '../ledger/schemas';
import { Emitter } from '../../base/emitter';
import { JournalStore } from '../../base/journalStore';
import { checkReviewComments } from './reviewComments';
import { assertNotOwn, withAuthor } from '../identity';
import type { Authors, Caller } from '../identity';
import type { ReviewComment } from './reviewComments';
import type { Approvals, Decider, HoldCommand, HoldFile, HoldReason, HoldState, HoldView, ProposalFile } from './hold';
import { describeErrorWithStack } from '../../base/describeError';
import { HoldContent } from './holdContent';
import { holdNotFound, notGranted, notPending, staleError } from './holdErrors';
import { staleReason } from './staleness';
import type { DiskProbe } from './staleness';

export type { DiskProbe } from './staleness';

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
  /** Who asked: one of the hold's authors, who may not resolve it (src/kernel/identity.ts). */
  readonly caller?: Caller;
}

const NO_AUTHORS: Authors = { sessions: [], agents: [] };

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
/** Holds waiting for a decision at once: an agent cannot bury the reviewer (or the extension's memory). */
export const MAX_PENDING = 64;
/** Longest reviewer note. */
export const MAX_NOTE_CHARS = 4000;

const entrySchema = z.object({ type: z.literal(ENTRY_TYPE), v: z.literal(ENTRY_VERSION), hold: holdRecordSchema });

function view(h: StoredHold): HoldView {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { request, request_hash, result, error, authors, ...rest } = h;
  return rest;
}

/** Whether a hold's journal line stays within MAX_RECORD_CHARS (a larger one lives in memory only). */
function fits(h: StoredHold): boolean {
  return JSON.stringify(h).length <= MAX_RECORD_CHARS;
}

/**
 * The hold state machine, durable in its own journal. Decisions come from the person in VS Code (panel, diff
 * editor) or, only when the operator allows it, from the MCP caller. A hold is bound to the request (its hash)
 * and to the versions of the files it touches: a bound file that changes while the hold is pending makes it
 * stale, and a stale hold can never be granted. Resuming is at most once: `resuming` is durable before the
 * operation runs, so a crash in between leaves `ambiguous`, never a second run.
 */
export class ApprovalService implements Approvals, Disposable {
  /** Every hold by approval_id, oldest first; durable in the journal (those that fit). */
  private readonly holds: JournalStore<StoredHold>;
  private readonly content = new HoldContent();
  private readonly changes: Emitter<HoldView>;
  /** The id of a hold that was decided (no longer pending); undefined: every wait ends (dispose). */
  private readonly decided = new Emitter<string | undefined>();
  private opened = false;

  constructor(private readonly options: ApprovalServiceOptions) {
    const { logger } = options;
    this.changes = new Emitter<HoldView>((err) => logger.error('[approvals] a listener failed', describeErrorWithStack(err)));
    this.holds = new JournalStore<StoredHold>({
      journal: options.journal,
      codec: {
        decode: (line) => {
          const parsed = entrySchema.safeParse(line);
          if (parsed.success) return parsed.data.hold as StoredHold;
          logger.warn(`[approvals] skipped a journal record that is not a hold: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
          return undefined;
        },
        encode: (hold) => ({ type: ENTRY_TYPE, v: ENTRY_VERSION, hold }),
        id: (hold) => hold.approval_id,
        durable: fits,
      },
      unrecognized: 'drop',
      beforeCompact: () => this.trim(),
      warn: (message) => logger.warn(`[approvals] ${message}`),
    });
  }

  /** Loads the journal; a hold cut off while resuming becomes `ambiguous`. Compacts the journal. */
  async open(): Promise<{ loaded: number; pending: number; ambiguous: number }> {
    let ambiguous = 0;
    await this.holds.open();
    for (const h of [...this.holds.values()]) {
      if (h.state === 'resuming') {
        this.holds.set({ ...h, state: 'ambiguous' });
        ambiguous++;
      }
    }
    this.trim();
    await this.holds.compact();
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
    if (!h) throw holdNotFound(approvalId);
    return h;
  }

  async proposal(approvalId: string): Promise<readonly ProposalFile[]> {
    const h = this.stored(approvalId);
    if (h.files === undefined) throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} ${h.command ? 'is a command; it has' : 'has'} no file content.`);
    if (h.state !== 'pending' && h.state !== 'stale' && h.state !== 'granted') {
      throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} is ${h.state}; its proposal is no longer shown.`, { details: { approval_id: approvalId, state: h.state } });
    }
    let files = this.content.proposal(approvalId);
    if (!files) {
      files = await this.options.replan(h);
      this.content.keepProposal(approvalId, files);
    }
    return this.content.withEdits(approvalId, files);
  }

  /** The reviewer's edits of a hold, by section path (empty when unedited). */
  reviewed(approvalId: string): ReadonlyMap<string, Uint8Array> {
    return this.content.reviewed(approvalId);
  }

  setReviewed(approvalId: string, path: string, bytes: Uint8Array): void {
    const h = this.stored(approvalId);
    if (h.state !== 'pending') throw new ToolError('APPROVAL_CONFLICT', `Hold ${approvalId} is ${h.state}; its proposal can no longer be edited.`, { details: { approval_id: approvalId, state: h.state } });
    const file = h.files?.find((f) => f.path === path);
    if (!file || file.kind === 'delete') {
      throw new ToolError('INVALID_ARGUMENTS', `${JSON.stringify(path)} is not a file this hold writes, so it cannot be edited.`, { details: { approval_id: approvalId, path } });
    }
    this.content.setReviewed(approvalId, path, bytes);
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
    if (h.state !== 'pending') throw notPending(h);
    const note = options.note?.slice(0, MAX_NOTE_CHARS);
    if (decision === 'grant') {
      const stale = await staleReason(h, this.options.probe);
      const now = this.stored(approvalId);
      if (now.state !== 'pending') throw notPending(now);
      if (stale) {
        await this.markStale(approvalId, stale);
        throw staleError(approvalId, stale);
      }
    }
    const now = this.stored(approvalId);
    if (now.state !== 'pending') throw notPending(now);
    const next: StoredHold = {
      ...now,
      state: decision === 'grant' ? 'granted' : 'denied',
      decided_at: this.timestamp(),
      decided_by: options.by,
      ...(options.by === 'agent' && options.caller?.agent !== undefined ? { decided_by_agent: options.caller.agent.name } : {}),
      ...(note !== undefined && note !== '' ? { note } : {}),
    };
    await this.put(next);
    if (decision === 'deny') this.content.forget(approvalId);
    return view(next);
  }

  async requestChanges(approvalId: string, comments: readonly ReviewComment[], options: { note?: string } = {}): Promise<HoldView> {
    const h = this.stored(approvalId);
    if (h.files === undefined) throw new ToolError('INVALID_ARGUMENTS', `Hold ${approvalId} is a command; line comments apply to a patch's files.`, { details: { approval_id: approvalId } });
    if (h.state !== 'pending') throw notPending(h);
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
    this.content.forget(approvalId);
    return view(next);
  }

  /**
   * The caller takes back its own pending request (MCP tasks/cancel): the hold ends as denied by the agent, with a
   * note saying so, and nothing runs. Unlike `resolve`, this needs no permission: withdrawing grants nothing.
   */
  async withdraw(approvalId: string, note: string): Promise<HoldView> {
    const h = this.stored(approvalId);
    if (h.state !== 'pending') throw notPending(h);
    const next: StoredHold = { ...h, state: 'denied', decided_at: this.timestamp(), decided_by: 'agent', note: note.slice(0, MAX_NOTE_CHARS) };
    await this.put(next);
    this.content.forget(approvalId);
    return view(next);
  }

  async revalidate(approvalId?: string): Promise<void> {
    const targets = approvalId !== undefined ? [this.stored(approvalId)] : [...this.holds.values()];
    for (const h of targets) {
      if (h.state !== 'pending' && h.state !== 'granted') continue;
      const reason = await staleReason(h, this.options.probe);
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
    if (req.proposal) this.content.keepProposal(hold.approval_id, req.proposal);
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
      const done = (): void => {
        clearTimeout(timer);
        decided.dispose();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      const decided = this.decided.on((id) => {
        if (id === undefined || id === approvalId) done();
      });
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
    this.content.forget(approvalId);
    return next;
  }

  async markStale(approvalId: string, reason: string): Promise<void> {
    const h = this.stored(approvalId);
    if (h.state !== 'pending' && h.state !== 'granted' && h.state !== 'resuming') return;
    await this.put({ ...h, state: 'stale', stale_reason: reason });
  }

  /** The error a resume answers for a hold that is not granted (or the stored outcome's error). */
  notGranted(h: StoredHold): ToolError {
    return notGranted(h);
  }

  dispose(): void {
    this.changes.dispose();
    this.decided.emit(undefined);
    this.decided.dispose();
  }

  // ---- internals ----

  private async put(h: StoredHold): Promise<void> {
    if (!this.opened) {
      this.holds.set(h);
    } else {
      if (!fits(h)) this.options.logger.warn(`[approvals] hold ${h.approval_id} is too large to keep on disk; it lives until the window reloads`);
      await this.holds.put(h);
    }
    if (h.state !== 'pending') this.decided.emit(h.approval_id);
    this.changes.emit(view(h));
  }

  private trim(): void {
    const max = this.options.maxFinished ?? 200;
    const finished = [...this.holds.values()].filter((h) => h.state === 'denied' || h.state === 'stale' || h.state === 'consumed' || h.state === 'ambiguous');
    for (const h of finished.slice(0, Math.max(0, finished.length - max))) {
      this.holds.forget(h.approval_id);
      this.content.forget(h.approval_id);
    }
  }

  private timestamp(): string {
    return new Date(this.options.now?.() ?? Date.now()).toISOString();
  }
}

export type { HoldState };
