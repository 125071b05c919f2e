import { randomBytes } from 'node:crypto';
import type { ApprovalService } from '../approvals/approvalService';
import type { HoldView, ProposalFile } from '../approvals/hold';
import { DisposableStore } from '../../base/disposable';
import type { Disposable } from '../../base/disposable';
import { describeErrorWithStack } from '../../base/describeError';
import { Emitter } from '../../base/emitter';
import { ToolError } from '../../base/errors';
import type { Logger } from '../../base/logger';
import type { Activity, OperationSummary, RunnerEvent } from './events';
import type { PreparedOperation } from './operationSpec';

/** Process start and exit, as the runner's event stream reports them. */
export interface ProcessEvents {
  onDidStart(listener: (p: { process_id: string; workspace_id: string; command: readonly string[]; tty: boolean; started_at: string }) => void): Disposable;
  onDidExit(listener: (id: string, s: { workspace_id: string; termination?: string; exit_code?: number; signal?: string; ended_at?: string }) => void): Disposable;
}

export interface RunnerActivityOptions {
  readonly approvals: Pick<ApprovalService, 'onDidChange'>;
  readonly logger: Logger;
  readonly processes?: ProcessEvents;
  readonly now?: () => number;
}

const MAX_RECENT = 500;
const MAX_PREVIEWS = 16;
/** Hold states remembered to report each change once. */
const MAX_HOLD_STATES = 1000;

/**
 * The runner's one event stream and what the editor reads of it: each step of an operation, each decision on a hold
 * and each process start and exit, with the recent history (bounded) and the content of recent previews.
 */
export class RunnerActivity implements Activity, Disposable {
  private readonly events: Emitter<RunnerEvent>;
  private readonly history: RunnerEvent[] = [];
  private readonly previews = new Map<string, readonly ProposalFile[]>();
  private readonly subscriptions = new DisposableStore();
  private readonly lastState = new Map<string, string>();

  constructor(private readonly options: RunnerActivityOptions) {
    this.events = new Emitter<RunnerEvent>((err) => options.logger.error('[runner] an event listener failed', describeErrorWithStack(err)));
    this.subscriptions.add(options.approvals.onDidChange((h) => this.onHoldChange(h)));
    const processes = options.processes;
    if (processes) {
      this.subscriptions.add(
        processes.onDidStart((p) =>
          this.emit({ type: 'process.started', process_id: p.process_id, workspace_id: p.workspace_id, command: p.command, tty: p.tty, started_at: p.started_at }),
        ),
      );
      this.subscriptions.add(
        processes.onDidExit((id, s) =>
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

  onEvent(listener: (event: RunnerEvent) => void): Disposable {
    return this.events.on(listener);
  }

  recent(): readonly RunnerEvent[] {
    return [...this.history];
  }

  preview(runId: string): readonly ProposalFile[] | undefined {
    return this.previews.get(runId);
  }

  /** A new run of an operation, as its events name it. */
  summary(tool: string, prepared: PreparedOperation<unknown>): OperationSummary {
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

  /** operation.committed, keeping a preview's content for the panel's "Open Preview". */
  committed(op: OperationSummary, result: unknown, prepared: PreparedOperation<unknown>, approvalId?: string): void {
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

  failed(op: OperationSummary, err: unknown): void {
    const code = ToolError.is(err) ? err.code : 'INTERNAL';
    const message = ToolError.is(err) ? err.message : 'failed unexpectedly';
    this.emit({ type: 'operation.failed', operation: op, code, message });
  }

  emit(event: RunnerEvent): void {
    this.history.push(event);
    if (this.history.length > MAX_RECENT) this.history.splice(0, this.history.length - MAX_RECENT);
    this.events.emit(event);
  }

  dispose(): void {
    this.subscriptions.dispose();
    this.events.dispose();
  }

  private onHoldChange(h: HoldView): void {
    const before = this.lastState.get(h.approval_id);
    if (before === h.state) return;
    this.lastState.set(h.approval_id, h.state);
    if (this.lastState.size > MAX_HOLD_STATES) this.lastState.delete(this.lastState.keys().next().value as string);
    const at = h.decided_at ?? this.timestamp();
    if (h.state === 'granted') this.emit({ type: 'operation.granted', approval_id: h.approval_id, by: h.decided_by ?? 'reviewer', at });
    else if (h.state === 'denied') this.emit({ type: 'operation.denied', approval_id: h.approval_id, by: h.decided_by ?? 'reviewer', ...(h.note !== undefined ? { note: h.note } : {}), at });
    else if (h.state === 'stale') this.emit({ type: 'operation.stale', approval_id: h.approval_id, reason: h.stale_reason ?? 'a file changed', at: this.timestamp() });
  }

  private timestamp(): string {
    return new Date(this.options.now?.() ?? Date.now()).toISOString();
  }
}
