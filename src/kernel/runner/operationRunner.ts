import { callerOf } from '../identity';
import type { Caller } from '../identity';
import type { ApprovalPolicy, ApprovalService, StoredHold } from '../approvals/approvalService';
import type { ReviewMode } from '../approvals/holdPolicy';
import type { HoldReason, HoldView, ProposalFile } from '../approvals/hold';
import type { Disposable } from '../../base/disposable';
import { ToolError } from '../../base/errors';
import type { Logger } from '../../base/logger';
import type { Workspace, WorkspaceRegistry } from '../workspaces';
import type { ToolKind } from '../toolKinds';
import { kindFlags } from '../toolKinds';
import type { Activity, RunnerEvent } from './events';
import type { IntentValue, OperationSpec, PrepareOutcome, RegisteredOperation, RunContext } from './operationSpec';
import { RunnerActivity } from './runnerActivity';
import type { ProcessEvents } from './runnerActivity';
import { RETRYABLE, STALE, approvalRequired, bindingDrift, changesRequested, checkOccupancy, storedOutcome, withNote } from './runnerPolicy';
import type { Occupant } from './runnerPolicy';
import { heldWork } from '../approvals/holdWork';

// The operation's contract lives in operationSpec.ts; callers import it from here.
export type { AfterCommitContext, HoldDescription, IntentValue, OperationSpec, PreparedOperation, PrepareOutcome, RegisteredOperation, Review, RunContext } from './operationSpec';

export interface OperationRunnerOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly approvals: ApprovalService;
  readonly logger: Logger;
  /** The process occupying a workspace folder, or (with workId) that work's worktree of it. */
  readonly occupant: Occupant;
  /** Process start and exit, for the event stream. */
  readonly processes?: ProcessEvents;
  readonly now?: () => number;
  /** `codespace.review.mode` of a workspace (default: `before` everywhere). */
  readonly reviewMode?: (workspaceId: string) => ReviewMode;
}

/** Longest operation_resume wait: below the 60 s a client (Codex's default) gives one tool call. */
export const MAX_RESUME_WAIT_MS = 55_000;

/**
 * The one place where a mutating request meets policy. For every mutating tool it: checks the profile the kind
 * requires (and so Restricted Mode); prepares the intent; holds it for the reviewer when the approval settings
 * say so; checks occupancy; commits; and reports each step on one event stream. `operation_resume` comes back
 * here to commit a granted hold exactly once.
 */
export class OperationRunner implements Activity, Disposable {
  private readonly activity: RunnerActivity;
  private readonly registry = new Map<string, RegisteredOperation>();

  constructor(private readonly options: OperationRunnerOptions) {
    this.activity = new RunnerActivity(options);
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
    return this.activity.onEvent(listener);
  }

  recent(): readonly RunnerEvent[] {
    return this.activity.recent();
  }

  preview(runId: string): readonly ProposalFile[] | undefined {
    return this.activity.preview(runId);
  }

  // ---- running ----

  /** Runs a call of a registered tool's operation: prepare, policy, maybe hold, commit, then its after-commit work. */
  async run(tool: string, args: object, signal: AbortSignal, context: RunContext = {}): Promise<unknown> {
    const { kind, spec } = this.entry(tool);
    const request = args as Record<string, unknown>;
    const ws = this.options.workspaces.get(spec.workspaceOf ? spec.workspaceOf(request) : String(request.workspace_id), heldWork(request));
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
    const op = this.activity.summary(spec.tool, prepared);
    // Keystrokes and resizes are not worth a line in the activity list each; everything that changes files,
    // starts or ends processes is.
    const quiet = !flags.destructive;
    try {
      if (!quiet) this.activity.emit({ type: 'operation.prepared', operation: op });
      const reason = flags.needsApproval && prepared.holdable ? spec.hold?.reason(prepared.intent, this.policy(), { review: this.options.reviewMode?.(ws.id) ?? 'before' }) : undefined;
      if (spec.hold && reason) {
        const hold = await this.hold(spec.tool, ws, args, prepared.intent, reason, callerOf(context));
        this.activity.emit({ type: 'operation.held', operation: op, hold });
        throw approvalRequired(hold, spec.hold.description);
      }
      checkOccupancy(this.options.occupant, prepared);
      // Cancellation is honoured up to here and never after: a commit, once begun, completes (or rolls back) as
      // one, so a cancelled call never leaves a patch half-applied.
      if (signal.aborted) throw new ToolError('CANCELLED', 'The call was cancelled before anything was written or started.');
      const result = await prepared.commit();
      if (!quiet) this.activity.committed(op, result, prepared);
      progress?.(2, 2, 'done');
      return result;
    } catch (err) {
      if (!quiet && !ToolError.is(err, 'APPROVAL_REQUIRED')) this.activity.failed(op, err);
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
    const ws = this.options.workspaces.get(String((args as { workspace_id?: unknown }).workspace_id), heldWork(args));
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
      const op = this.activity.summary(spec.tool, prepared);
      this.activity.emit({ type: 'operation.prepared', operation: op });
      const hold = await this.hold(spec.tool, ws, args, prepared.intent, 'explicit', callerOf(context));
      this.activity.emit({ type: 'operation.held', operation: op, hold });
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
      const ws = this.options.workspaces.get(started.workspace_id, heldWork(started.request));
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
      checkOccupancy(this.options.occupant, prepared);
      const op = this.activity.summary(entry.spec.tool, prepared);
      const reviewed = approvals.reviewed(approvalId);
      const result = await prepared.commit({ approval_id: approvalId, reviewed, ...(started.note !== undefined ? { note: started.note } : {}) });
      const final = withNote(result, started.note);
      await approvals.finishResume(approvalId, { result: final });
      this.activity.committed(op, final, prepared, approvalId);
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
    this.activity.dispose();
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
      return this.options.workspaces.get(workspaceId, heldWork(request)).work_id;
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
}

