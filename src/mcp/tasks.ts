import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { HoldView } from '../kernel/approvals/hold';
import type { ApprovalService } from '../kernel/approvals/approvalService';
import type { ToolErrorBody } from '../base/errors';
import type { ToolDispatcher } from '../kernel/dispatch';
import type { ExtraContent } from '../kernel/tool';

/** The MCP Tasks extension (2026-07-28): a tools/call may answer with a task, read with tasks/get. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How often a client should ask about a task waiting for review (ms): a person decides, not a machine. */
export const TASK_POLL_INTERVAL_MS = 2000;

/** JSON-RPC's invalid-params code: an unknown task, or cancelling one that has ended. */
const INVALID_PARAMS = -32602;

/** Whether a request's client capabilities (the per-request envelope) declare the tasks extension. */
export function declaresTasks(clientCapabilities: unknown): boolean {
  const extensions = (clientCapabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return extensions !== undefined && extensions !== null && typeof extensions[TASKS_EXTENSION] === 'object';
}

type TaskStatus = 'working' | 'completed' | 'cancelled' | 'failed';

export type TaskState = {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: null;
  readonly pollIntervalMs?: number;
  readonly result?: CallToolResult;
};

function taskError(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: INVALID_PARAMS });
}

/**
 * A held operation as a task. The task id is the hold's approval id and the task store is the approvals ledger
 * (holds survive a window reload), so there is no second record: `tasks/get` reads the hold, and once the
 * developer has decided it asks `operation_resume` for the outcome, exactly as a 2025-era client would — so the
 * operation runs once, and the result (with `reviewer_changes`, a patch's diagnostics) is the same in both eras.
 * A denial, a stale hold or a failed run is a completed task whose result is the tool error (`isError: true`), as
 * the extension asks for tool errors.
 */
export class HeldOperationTasks {
  constructor(
    private readonly dispatcher: ToolDispatcher,
    /** The approvals ledger: the task store. */
    private readonly holds: Pick<ApprovalService, 'get' | 'withdraw'>,
    private readonly errorResult: (body: ToolErrorBody) => CallToolResult,
    private readonly successResult: (value: Record<string, unknown>, extra?: readonly ExtraContent[]) => CallToolResult,
  ) {}

  private hold(taskId: string): HoldView {
    const hold = this.holds.get(taskId);
    if (!hold) throw taskError(`No task has id ${JSON.stringify(taskId.slice(0, 100))} (finished tasks roll off after a while).`);
    return hold;
  }

  /** The task a held call answers with (the hold exists: the runner made it before answering APPROVAL_REQUIRED). */
  created(approvalId: string): TaskState & { resultType: 'task' } {
    return { resultType: 'task', ...this.pending(this.hold(approvalId)) };
  }

  private pending(hold: HoldView): TaskState {
    const reviews = hold.reason === 'sensitive' ? `it touches ${hold.sensitive_paths.join(', ')}` : `the developer reviews ${hold.tool}`;
    return {
      taskId: hold.approval_id,
      status: 'working',
      statusMessage: `Waiting for review in the editor (${reviews}); nothing has run yet.`,
      createdAt: hold.created_at,
      lastUpdatedAt: hold.decided_at ?? hold.created_at,
      ttlMs: null,
      pollIntervalMs: TASK_POLL_INTERVAL_MS,
    };
  }

  async get(taskId: string, signal: AbortSignal): Promise<TaskState> {
    const hold = this.hold(taskId);
    if (hold.state === 'pending') return this.pending(hold);
    if (hold.state === 'denied' && hold.decided_by === 'agent') {
      // Withdrawn with tasks/cancel before anyone reviewed it: nothing ran, and the task says so.
      const at = hold.decided_at ?? hold.created_at;
      return { taskId, status: 'cancelled', statusMessage: hold.note ?? 'Withdrawn by the agent before review; nothing ran.', createdAt: hold.created_at, lastUpdatedAt: at, ttlMs: null };
    }
    // Decided: the outcome, through the same door as operation_resume (runs a granted hold once, then replays it).
    const outcome = await this.dispatcher.call('operation_resume', { approval_id: taskId, wait_ms: 0 }, signal);
    const now = this.hold(taskId);
    const base = { taskId, createdAt: now.created_at, lastUpdatedAt: now.decided_at ?? now.created_at, ttlMs: null } as const;
    if (outcome.kind === 'unknown_tool') throw Object.assign(new Error('Tasks are unavailable.'), { code: -32603 });
    if (outcome.kind === 'result') return { ...base, status: 'completed', result: this.successResult(outcome.value, outcome.extra) };
    // Another caller is running it right now: still working.
    if (outcome.body.code === 'APPROVAL_CONFLICT' && (now.state === 'resuming' || now.state === 'granted')) {
      return { ...base, status: 'working', statusMessage: 'Approved; the operation is running.', pollIntervalMs: TASK_POLL_INTERVAL_MS };
    }
    return { ...base, status: 'completed', statusMessage: outcome.body.message, result: this.errorResult(outcome.body) };
  }

  /**
   * Withdraws a hold still waiting for review (the task reads `cancelled`). Cancellation is cooperative in the
   * extension: a task the developer already decided is acknowledged all the same and ends as it would have (a
   * granted operation may already be running; it is never taken back half-way).
   */
  async cancel(taskId: string): Promise<Record<string, never>> {
    const hold = this.hold(taskId);
    if (hold.state !== 'pending') return {};
    await this.holds.withdraw(taskId, 'Withdrawn by the agent (tasks/cancel) before review; nothing ran.').catch((err: unknown) => {
      // Decided between the look and the withdrawal: acknowledged, as above.
      if (this.hold(taskId).state === 'pending') throw err;
    });
    return {};
  }
}
