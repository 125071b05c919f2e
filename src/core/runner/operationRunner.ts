import { randomBytes } from 'node:crypto';
import { callerOf } from '../identity';
import type { AgentRef, Caller } from '../identity';
import type { ApprovalPolicy, ApprovalService, StoredHold } from '../approvals/approvalService';
import type { HoldContext, ReviewMode } from '../approvals/holdPolicy';
import type { HoldCommand, HoldFile, HoldReason, HoldView, ProposalFile } from '../approvals/hold';
import type { Disposable } from '../../base/disposable';
import { ToolError } from '../errors';
import type { Logger } from '../ports/logger';
import type { Workspace, WorkspaceRegistry } from '../policy/workspaces';
import type { ToolKind } from '../toolKinds';
import { kindFlags } from '../toolKinds';
import type { Activity, OperationSummary, RunnerEvent } from './events';
import { Emitter } from '../../base/emitter';
import { describeErrorWithStack } from '../../base/describeError';

/** What a hold of this operation binds and shows: the intent as a value. */
export interface IntentValue {
  readonly request_hash: string;
  /** apply_patch: the files with their before-versions and the planned bytes. */
  readonly files?: readonly HoldFile[];
  readonly proposal?: readonly ProposalFile[];
  /** exec_command: argv, cwd, tty, occupancy, environment changes. */
  readonly command?: HoldCommand;
  readonly sensitive_paths: readonly string[];
  readonly operation_key?: string;
}

/** The reviewer's part in a commit: edited bytes by section path, and the note of the grant. */
export interface Review {
  readonly approval_id: string;
  readonly reviewed: ReadonlyMap<string, Uint8Array>;
  readonly note?: string;
}

/** A prepared operation: validated and planned, nothing written or started yet. */
export interface PreparedOperation<R> {
  readonly workspace: Workspace;
  readonly title: string;
  readonly intent: IntentValue;
  /** May be held for the reviewer (false for a preview: it writes nothing). */
  readonly holdable: boolean;
  /** Needs the workspace free of exclusive processes (WORKSPACE_BUSY otherwise). */
  readonly occupies: boolean;
  /** A preview's content, kept for the panel's "Open Preview". */
  readonly preview?: readonly ProposalFile[];
  /** The work (steering) the call belongs to, reported on its events and recorded with it. */
  readonly work_id?: string;
  commit(review?: Review): Promise<R>;
  /** Releases what prepare took (a patch holds its workspace's turn from prepare to commit). */
  release(): void;
}

/** `done`: the request needs no run (an idempotent replay of a stored result). */
export type PrepareOutcome<R> = { readonly done: R } | PreparedOperation<R>;

/** How a hold of an operation reads to the agent: what the developer reviews, and what did not happen yet. */
export interface HoldDescription {
  /** "every patch", "every command": the end of "the developer reviews …". */
  readonly reviews: string;
  /** "written", "started": the end of "nothing was …". */
  readonly nothing: string;
}

/** Where the after-commit work of an operation runs: the workspace of the call and the session it answers. */
export interface AfterCommitContext {
  readonly workspace_id: string;
  readonly session?: string;
  /** Set when the operation ran in that work's own worktree (not in the workspace folder). */
  readonly work_id?: string;
}

/**
 * The mutating half of a tool, declared with the tool (its definition's `operation`): the runner, not the tool,
 * applies policy between prepare and commit. Everything the runner does differently per operation is here, so it
 * never compares tool names: a tool whose spec has `hold` can be held, approved and resumed.
 */
export interface OperationSpec<A, R> {
  /** The tool's name: what events, holds and the ledger call it. */
  readonly tool: string;
  /** The workspace the call acts in, for the profile check before prepare (default: `args.workspace_id`). */
  workspaceOf?(args: A): string;
  prepare(args: A, signal: AbortSignal): Promise<PrepareOutcome<R>>;
  /** Present for an operation that can be held for the developer's approval. */
  readonly hold?: {
    /** Why the approval settings hold this prepared intent now, or undefined: it runs (see approvals/holdPolicy.ts). */
    reason(intent: IntentValue, policy: ApprovalPolicy, context: HoldContext): HoldReason | undefined;
    readonly description: HoldDescription;
    /** Plans a hold's content again for the diff editor (after a reload); absent: the hold has no content. */
    replan?(hold: StoredHold): Promise<readonly ProposalFile[]>;
  };
  /**
   * Work after a commit (and after an idempotent replay), for a direct call and a resumed hold alike, once the
   * operation has released what it took and its outcome is stored: its result never carries what this adds.
   */
  afterCommit?(result: R, context: AfterCommitContext): Promise<R>;
}

/** An operation as the runner keeps it: its spec, the kind of its tool, and the tool's input shape. */
export interface RegisteredOperation {
  readonly kind: ToolKind;
  /** The tool's input (a zod shape): approval_create checks a request against it. */
  readonly input: Readonly<Record<string, unknown>>;
  readonly spec: OperationSpec<Record<string, unknown>, unknown>;
}

/** What a call brings besides its arguments. */
export interface RunContext {
  readonly progress?: (done: number, total?: number, message?: string) => void;
  /** The protocol session that called, handed to the after-commit work. */
  readonly session?: string;
  /** The agent that called (with its own credential): a hold it causes counts it among the hold's authors. */
  readonly agent?: AgentRef;
}

export interface OperationRunnerOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly approvals: ApprovalService;
  readonly logger: Logger;
  /** The process occupying a workspace exclusively, if any. */
  /** The process occupying a workspace folder, or (with workId) that work's worktree of it. */
  readonly occupant: (workspaceId: string, workId?: string) => { process_id: string; command: readonly string[] } | undefined;
  /** Process start and exit, for the event stream. */
  readonly processes?: {
    onDidStart(listener: (p: { process_id: string; workspace_id: string; command: readonly string[]; tty: boolean; started_at: string }) => void): Disposable;
    onDidExit(listener: (id: string, s: { workspace_id: string; termination?: string; exit_code?: number; signal?: string; ended_at?: string }) => void): Disposable;
  };
  readonly now?: () => number;
  /** `codespace.review.mode` of a workspace (default: `before` everywhere). */
  readonly reviewMode?: (workspaceId: string) => ReviewMode;
}

/** Longest operation_resume wait: below the 60 s a client (Codex's default) gives one tool call. */
export const MAX_RESUME_WAIT_MS = 55_000;
const MAX_RECENT = 500;
const MAX_PREVIEWS = 16;

/** Errors after which a granted hold may be resumed again later: nothing ran, and the cause may pass. */
const RETRYABLE: ReadonlySet<string> = new Set(['WORKSPACE_BUSY', 'READ_ONLY', 'EXEC_DISABLED', 'WORKSPACE_NOT_FOUND', 'TIMEOUT', 'FILE_DIRTY_IN_EDITOR']);
/** Errors of a fresh prepare that mean the files moved on since the proposal: the hold is stale. */
const STALE: ReadonlySet<string> = new Set(['VERSION_CONFLICT', 'FILE_EXISTS', 'NOT_FOUND', 'IS_DIRECTORY', 'PATCH_CONTEXT_NOT_FOUND', 'PATCH_AMBIGUOUS']);

/**
 * The one place where a mutating request meets policy. For every mutating tool it: checks the profile the kind
 * requires (and so Restricted Mode); prepares the intent; holds it for the reviewer when the approval settings
 * say so; checks occupancy; commits; and reports each step on one event stream. `operation_resume` comes back
 * here to commit a granted hold exactly once.
 */
export class OperationRunner implements Activity, Disposable {
  private readonly events: Emitter<RunnerEvent>;
  private readonly history: RunnerEvent[] = [];
  private readonly previews = new Map<string, readonly ProposalFile[]>();
  private readonly registry = new Map<string, RegisteredOperation>();
  private readonly subscriptions: Disposable[] = [];
  private readonly lastState = new Map<string, string>();

  constructor(private readonly options: OperationRunnerOptions) {
    this.events = new Emitter<RunnerEvent>((err) => options.logger.error('[runner] an event listener failed', describeErrorWithStack(err)));
    this.subscriptions.push(options.approvals.onDidChange((h) => this.onHoldChange(h)));
    if (options.processes) {
      this.subscriptions.push(
        options.processes.onDidStart((p) =>
          this.emit({ type: 'process.started', process_id: p.process_id, workspace_id: p.workspace_id, command: p.command, tty: p.tty, started_at: p.started_at }),
        ),
        options.processes.onDidExit((id, s) =>
          this.emit({
            type: 'process.exited',
            process_id: id,
            workspace_id: s.workspace_id,
            termination: s.termination ?? 'unknown',
            ...(s.exit_code !== undefined ? { exit_code: s.exit_code } : {}),
            ...(s.signal !== undefined ? { signal: s.signal } : {}),
            ended_at: s.ended_at ?? this.timestamp(),
          }),
        ),
      );
    }
  }

  get approvals(): ApprovalService {
    return this.options.approvals;
  }

  /** Makes tools' operations known (the dispatcher registers its catalogue's), so calls route and holds resume. */
  register(operations: readonly RegisteredOperation[]): void {
    for (const op of operations) this.registry.set(op.spec.tool, op);
  }

  /** The registered operation of a tool; undefined when the tool has none. */
  operation(tool: string): RegisteredOperation | undefined {
    return this.registry.get(tool);
  }

  /** The operations that can be held, in registration order. */
  holdable(): RegisteredOperation[] {
    return [...this.registry.values()].filter((op) => op.spec.hold !== undefined);
  }

  /** Plans a hold's content again, through the operation it holds (for the diff editor after a reload). */
  async replan(hold: StoredHold): Promise<readonly ProposalFile[]> {
    const replan = this.registry.get(hold.tool)?.spec.hold?.replan;
    if (!replan) throw new ToolError('APPROVAL_CONFLICT', `Hold ${hold.approval_id} (${hold.tool}) has no file content.`, { details: { approval_id: hold.approval_id } });
    return replan(hold);
  }

  // ---- Activity ----

  onEvent(listener: (event: RunnerEvent) => void): Disposable {
    return this.events.on(listener);
  }

  recent(): readonly RunnerEvent[] {
    return [...this.history];
  }

  preview(runId: string): readonly ProposalFile[] | undefined {
    return this.previews.get(runId);
  }

  // ---- running ----

  /** Runs a call of a registered tool's operation: prepare, policy, maybe hold, commit, then its after-commit work. */
  async run(tool: string, args: object, signal: AbortSignal, context: RunContext = {}): Promise<unknown> {
    const { kind, spec } = this.entry(tool);
    const request = args as Record<string, unknown>;
    const ws = this.options.workspaces.get(spec.workspaceOf ? spec.workspaceOf(request) : String(request.workspace_id), workOf(request));
    const result = await this.runPrepared(kind, spec, ws, request, signal, context);
    return this.afterCommit(spec, result, ws.id, context.session, ws.work_id);
  }

  private async runPrepared(kind: ToolKind, spec: OperationSpec<Record<string, unknown>, unknown>, ws: Workspace, args: Record<string, unknown>, signal: AbortSignal, context: RunContext): Promise<unknown> {
    const { progress } = context;
    const flags = kindFlags(kind);
    this.options.workspaces.require(ws, flags.requires);
    progress?.(0, 2, 'preparing');
    const prepared = await spec.prepare(args, signal);
    if ('done' in prepared) return prepared.done;
    progress?.(1, 2, 'prepared');
    const op = this.summary(spec.tool, prepared);
    // Keystrokes and resizes are not worth a line in the activity list each; everything that changes files,
    // starts or ends processes is.
    const quiet = !flags.destructive;
    try {
      if (!quiet) this.emit({ type: 'operation.prepared', operation: op });
      const reason = flags.needsApproval && prepared.holdable ? spec.hold?.reason(prepared.intent, this.policy(), { review: this.options.reviewMode?.(ws.id) ?? 'before' }) : undefined;
      if (spec.hold && reason) {
        const hold = await this.hold(spec.tool, ws, args, prepared.intent, reason, callerOf(context));
        this.emit({ type: 'operation.held', operation: op, hold });
        throw approvalRequired(hold, spec.hold.description);
      }
      this.checkOccupancy(prepared);
      // Cancellation is honoured up to here and never after: a commit, once begun, completes (or rolls back) as
      // one, so a cancelled call never leaves a patch half-applied.
      if (signal.aborted) throw new ToolError('CANCELLED', 'The call was cancelled before anything was written or started.');
      const result = await prepared.commit();
      if (!quiet) this.committed(op, result, prepared);
      progress?.(2, 2, 'done');
      return result;
    } catch (err) {
      if (!quiet && !ToolError.is(err, 'APPROVAL_REQUIRED')) this.failed(op, err);
      throw err;
    } finally {
      prepared.release();
    }
  }

  /** approval_create: prepares the request and opens a hold for it, whatever the settings say. */
  async createHold(tool: string, args: object, signal: AbortSignal, context: Pick<RunContext, 'session' | 'agent'> = {}): Promise<HoldView> {
    const { kind, spec } = this.entry(tool);
    if (!spec.hold) throw new ToolError('INVALID_ARGUMENTS', `${tool} cannot be held.`, { details: { field: 'tool' } });
    const flags = kindFlags(kind);
    const ws = this.options.workspaces.get(String((args as { workspace_id?: unknown }).workspace_id), workOf(args));
    // A hold never raises a permission: read-only stays read-only.
    this.options.workspaces.require(ws, flags.requires);
    const prepared = await spec.prepare(args as Record<string, unknown>, signal);
    if ('done' in prepared) {
      throw new ToolError('OPERATION_KEY_CONFLICT', 'This request was already run under its operation_key; there is nothing to hold.', {
        hint: 'Call operation_status with the operation_key for its result, or use a new key.',
      });
    }
    try {
      if (!prepared.holdable) throw new ToolError('INVALID_ARGUMENTS', 'A check_only preview writes nothing, so it cannot be held.', { details: { field: 'request.check_only' } });
      const op = this.summary(spec.tool, prepared);
      this.emit({ type: 'operation.prepared', operation: op });
      const hold = await this.hold(spec.tool, ws, args, prepared.intent, 'explicit', callerOf(context));
      this.emit({ type: 'operation.held', operation: op, hold });
      return hold;
    } finally {
      prepared.release();
    }
  }

  /**
   * operation_resume: waits (bounded) for the decision, then commits a granted hold exactly once and stores the
   * terminal result; a repeat returns it. Re-checks policy and the bound versions first.
   */
  async resume(approvalId: string, waitMs: number, signal: AbortSignal, context: Pick<RunContext, 'session'> = {}): Promise<unknown> {
    const { approvals } = this.options;
    const h: StoredHold = await approvals.waitForDecision(approvalId, Math.min(Math.max(0, waitMs), MAX_RESUME_WAIT_MS), signal);
    if (h.state === 'denied' && h.comments !== undefined) return changesRequested(h);
    if (h.state !== 'consumed' && h.state !== 'granted') throw approvals.notGranted(h);
    const { spec } = this.entry(h.tool);
    const result = h.state === 'consumed' ? storedOutcome(h) : await this.commitGranted(approvalId, signal);
    return this.afterCommit(spec, result, h.workspace_id, context.session, this.worktreeWork(h.workspace_id, h.request));
  }

  /** Commits a granted hold exactly once, storing its terminal outcome. */
  private async commitGranted(approvalId: string, signal: AbortSignal): Promise<unknown> {
    const { approvals } = this.options;
    const started = await approvals.beginResume(approvalId);
    const entry = this.entry(started.tool);
    let prepared: PrepareOutcome<unknown> | undefined;
    try {
      const ws = this.options.workspaces.get(started.workspace_id, workOf(started.request));
      this.options.workspaces.require(ws, kindFlags(entry.kind).requires);
      try {
        prepared = await entry.spec.prepare(started.request, signal);
      } catch (err) {
        if (ToolError.is(err) && STALE.has(err.code)) {
          await approvals.markStale(approvalId, err.message);
          const stale = approvals.notGranted(approvals.stored(approvalId));
          // A stale version says which file and what it is now (path, expected, current), as apply_patch does.
          if (err.code !== 'VERSION_CONFLICT') throw stale;
          throw new ToolError(stale.code, stale.message, { ...(stale.hint !== undefined ? { hint: stale.hint } : {}), details: { ...err.details, ...stale.details } });
        }
        throw err;
      }
      if ('done' in prepared) {
        await approvals.finishResume(approvalId, { result: prepared.done });
        return prepared.done;
      }
      const drift = bindingDrift(started, prepared.intent);
      if (drift) {
        await approvals.markStale(approvalId, drift);
        throw approvals.notGranted(approvals.stored(approvalId));
      }
      this.checkOccupancy(prepared);
      const op = this.summary(entry.spec.tool, prepared);
      const reviewed = approvals.reviewed(approvalId);
      const result = await prepared.commit({ approval_id: approvalId, reviewed, ...(started.note !== undefined ? { note: started.note } : {}) });
      const final = withNote(result, started.note);
      await approvals.finishResume(approvalId, { result: final });
      this.committed(op, final, prepared, approvalId);
      return final;
    } catch (err) {
      const now = approvals.stored(approvalId);
      if (now.state === 'resuming') {
        if (ToolError.is(err) && RETRYABLE.has(err.code)) {
          await approvals.abandonResume(approvalId);
        } else {
          const body = ToolError.is(err) ? err.toBody() : { code: 'INTERNAL' as const, message: 'The resumed operation failed unexpectedly inside the extension.' };
          await approvals.finishResume(approvalId, { error: body });
          if (!ToolError.is(err)) throw new ToolError('INTERNAL', body.message, { hint: 'The developer can see details in the CodeSpace log.', cause: err });
        }
      }
      throw err;
    } finally {
      if (prepared && !('done' in prepared)) prepared.release();
    }
  }

  policy(): ApprovalPolicy {
    return this.options.approvals.policy();
  }

  dispose(): void {
    for (const s of this.subscriptions.splice(0)) s.dispose();
    this.events.dispose();
  }

  // ---- internals ----

  private entry(tool: string): RegisteredOperation {
    const entry = this.registry.get(tool);
    if (!entry) throw new ToolError('INTERNAL', `No operation is registered for ${tool}.`);
    return entry;
  }

  private async afterCommit(spec: OperationSpec<Record<string, unknown>, unknown>, result: unknown, workspaceId: string, session: string | undefined, workId: string | undefined): Promise<unknown> {
    if (!spec.afterCommit) return result;
    return spec.afterCommit(result, { workspace_id: workspaceId, ...(session !== undefined ? { session } : {}), ...(workId !== undefined ? { work_id: workId } : {}) });
  }

  /** The work whose worktree a stored request ran in, if any (a work gone since: none). */
  private worktreeWork(workspaceId: string, request: object): string | undefined {
    try {
      return this.options.workspaces.get(workspaceId, workOf(request)).work_id;
    } catch {
      return undefined;
    }
  }

  private async hold(tool: string, ws: Workspace, args: object, intent: IntentValue, reason: HoldReason, caller: Caller): Promise<HoldView> {
    return this.options.approvals.create({
      caller,
      tool,
      workspace_id: ws.id,
      request: args as Record<string, unknown>,
      request_hash: intent.request_hash,
      reason,
      ...(intent.files ? { files: intent.files } : {}),
      ...(intent.command ? { command: intent.command } : {}),
      ...(intent.proposal ? { proposal: intent.proposal } : {}),
      sensitive_paths: intent.sensitive_paths,
      ...(intent.operation_key !== undefined ? { operation_key: intent.operation_key } : {}),
    });
  }

  private checkOccupancy(prepared: PreparedOperation<unknown>): void {
    if (!prepared.occupies) return;
    const occupant = this.options.occupant(prepared.workspace.id, prepared.workspace.work_id);
    if (!occupant) return;
    const ws = prepared.workspace.id;
    throw new ToolError('WORKSPACE_BUSY', `Workspace ${ws} is busy: process ${occupant.process_id} (${occupant.command.join(' ')}) is running.`, {
      hint: 'Wait for it to exit (process_status / read_process with wait_ms) or terminate it, then try again. Previews (check_only) still work.',
      details: { workspace_id: ws, process_id: occupant.process_id, command: [...occupant.command], occupant: { process_id: occupant.process_id, command: [...occupant.command] } },
    });
  }

  private committed(op: OperationSummary, result: unknown, prepared: PreparedOperation<unknown>, approvalId?: string): void {
    const r = (result ?? {}) as { status?: string; process_id?: string; operation_id?: string; dispatch_status?: string };
    const status = r.status ?? r.dispatch_status ?? 'done';
    if (status === 'checked' && prepared.preview) {
      this.previews.set(op.run_id, prepared.preview);
      for (const id of this.previews.keys()) {
        if (this.previews.size <= MAX_PREVIEWS) break;
        this.previews.delete(id);
      }
    }
    this.emit({
      type: 'operation.committed',
      operation: op,
      status,
      ...(approvalId !== undefined ? { approval_id: approvalId } : {}),
      ...(r.process_id !== undefined ? { process_id: r.process_id } : {}),
      ...(r.operation_id !== undefined ? { operation_id: r.operation_id } : {}),
      ...(prepared.intent.command ? { command: prepared.intent.command } : {}),
    });
  }

  private failed(op: OperationSummary, err: unknown): void {
    const code = ToolError.is(err) ? err.code : 'INTERNAL';
    const message = ToolError.is(err) ? err.message : 'failed unexpectedly';
    this.emit({ type: 'operation.failed', operation: op, code, message });
  }

  private onHoldChange(h: HoldView): void {
    const before = this.lastState.get(h.approval_id);
    if (before === h.state) return;
    this.lastState.set(h.approval_id, h.state);
    if (this.lastState.size > 1000) this.lastState.delete(this.lastState.keys().next().value as string);
    const at = h.decided_at ?? this.timestamp();
    if (h.state === 'granted') this.emit({ type: 'operation.granted', approval_id: h.approval_id, by: h.decided_by ?? 'reviewer', at });
    else if (h.state === 'denied') this.emit({ type: 'operation.denied', approval_id: h.approval_id, by: h.decided_by ?? 'reviewer', ...(h.note !== undefined ? { note: h.note } : {}), at });
    else if (h.state === 'stale') this.emit({ type: 'operation.stale', approval_id: h.approval_id, reason: h.stale_reason ?? 'a file changed', at: this.timestamp() });
  }

  private summary(tool: string, prepared: PreparedOperation<unknown>): OperationSummary {
    return {
      run_id: `run_${randomBytes(6).toString('hex')}`,
      tool,
      workspace_id: prepared.workspace.id,
      title: prepared.title,
      at: this.timestamp(),
      ...(prepared.work_id !== undefined ? { work_id: prepared.work_id } : {}),
      ...(prepared.intent.files !== undefined ? { reviewable: true as const } : {}),
    };
  }

  private emit(event: RunnerEvent): void {
    this.history.push(event);
    if (this.history.length > MAX_RECENT) this.history.splice(0, this.history.length - MAX_RECENT);
    this.events.emit(event);
  }

  private timestamp(): string {
    return new Date(this.options.now?.() ?? Date.now()).toISOString();
  }
}

function approvalRequired(hold: HoldView, description: HoldDescription): ToolError {
  const why = hold.reason === 'sensitive' ? `it touches ${hold.sensitive_paths.join(', ')}, which the developer reviews` : `the developer reviews ${description.reviews}`;
  return new ToolError('APPROVAL_REQUIRED', `${hold.tool} is held for the developer's approval (${why}); nothing was ${description.nothing}.`, {
    hint: `Call operation_resume { "approval_id": "${hold.approval_id}", "wait_ms": 55000 } to wait for the decision (repeat while it answers APPROVAL_CONFLICT). Extra arguments never grant anything.`,
    details: { approval_id: hold.approval_id, reason: hold.reason, sensitive_paths: hold.sensitive_paths },
  });
}

function storedOutcome(h: StoredHold): unknown {
  if (h.error) throw new ToolError(h.error.code as never, h.error.message, { ...(h.error.hint !== undefined ? { hint: h.error.hint } : {}), ...(h.error.details ? { details: h.error.details } : {}) });
  return h.result;
}

/** How a fresh plan differs from what the hold bound, or undefined when it matches. */
function bindingDrift(h: StoredHold, intent: IntentValue): string | undefined {
  if (intent.request_hash !== h.request_hash) return 'the request no longer plans to the same operation';
  for (const f of h.files ?? []) {
    const now = intent.files?.find((x) => x.path === f.path);
    if (!now || now.before_version !== f.before_version) return `${f.path} changed on disk`;
    if (now.proposed_version !== f.proposed_version) return `${f.path} would now be patched differently`;
  }
  return undefined;
}

/** Adds the grant's note to a resumed operation's result. */
function withNote(result: unknown, note: string | undefined): unknown {
  if (note === undefined || result === null || typeof result !== 'object') return result;
  return { ...(result as Record<string, unknown>), reviewer_note: note };
}

/**
 * A hold the reviewer answered with Request Changes: a result, not an error (the review is the answer the agent
 * waited for), stable on every repeat since the hold is finished and keeps its comments. Nothing was written.
 */
function changesRequested(h: StoredHold): Record<string, unknown> {
  return {
    status: 'changes_requested',
    comments: h.comments ?? [],
    ...(h.note !== undefined ? { reviewer_note: h.note } : {}),
  };
}

/** The work a request names (work_id), whose worktree the workspace resolves to (WorkspaceRegistry.get). */
function workOf(request: object): string | undefined {
  const id = (request as { work_id?: unknown }).work_id;
  return typeof id === 'string' ? id : undefined;
}
