// Small in-memory implementations of the two ports the panel reads (Approvals, Activity), for the panel's unit
// tests. They keep the rules the panel relies on: only a pending hold can be resolved, list() is newest first.
import type { Approvals, Decider, HoldView, ProposalFile } from '../../../src/kernel/approvals/hold';
import type { Disposable } from '../../../src/base/disposable';
import { ToolError } from '../../../src/base/errors';
import type { ReviewComment } from '../../../src/kernel/approvals/reviewComments';
import type { Activity, RunnerEvent } from '../../../src/kernel/runner/events';
import { Emitter } from '../../../src/base/emitter';

export function patchHold(id: string, over: Partial<HoldView> = {}): HoldView {
  return {
    approval_id: id,
    tool: 'apply_patch',
    workspace_id: 'ws',
    state: 'pending',
    reason: 'confirm',
    created_at: '2026-12-01T12:00:00.000Z',
    files: [{ path: 'src/a.ts', kind: 'update', added: 2, removed: 1, sensitive: false }],
    sensitive_paths: [],
    ...over,
  };
}

export function commandHold(id: string, over: Partial<HoldView> = {}): HoldView {
  return {
    approval_id: id,
    tool: 'exec_command',
    workspace_id: 'ws',
    state: 'pending',
    reason: 'confirm',
    created_at: '2026-12-01T12:00:00.000Z',
    command: { argv: ['npm', 'test'], cwd: '', tty: false, occupancy: 'exclusive', env_changes: {} },
    sensitive_paths: [],
    ...over,
  };
}

export interface Resolution {
  readonly approvalId: string;
  readonly decision: 'grant' | 'deny';
  readonly by: Decider;
  readonly note?: string;
}

export class FakeApprovals implements Approvals {
  /** Newest first. */
  holds: HoldView[] = [];
  readonly resolutions: Resolution[] = [];
  private readonly changes = new Emitter<HoldView>();

  add(hold: HoldView): void {
    this.holds.unshift(hold);
    this.changes.emit(hold);
  }

  set(hold: HoldView): void {
    this.holds = this.holds.map((h) => (h.approval_id === hold.approval_id ? hold : h));
    this.changes.emit(hold);
  }

  list(): readonly HoldView[] {
    return this.holds;
  }
  get(approvalId: string): HoldView | undefined {
    return this.holds.find((h) => h.approval_id === approvalId);
  }
  pending(): readonly HoldView[] {
    return this.holds.filter((h) => h.state === 'pending');
  }
  proposal(): Promise<readonly ProposalFile[]> {
    return Promise.resolve([]);
  }
  setReviewed(): void {}
  async resolve(approvalId: string, decision: 'grant' | 'deny', options: { by: Decider; note?: string }): Promise<HoldView> {
    const hold = this.get(approvalId);
    if (!hold || hold.state !== 'pending') throw new ToolError('APPROVAL_CONFLICT', `approval ${approvalId} is not pending`);
    this.resolutions.push({ approvalId, decision, by: options.by, ...(options.note !== undefined ? { note: options.note } : {}) });
    const next: HoldView = { ...hold, state: decision === 'grant' ? 'granted' : 'denied', decided_by: options.by, decided_at: new Date().toISOString(), ...(options.note ? { note: options.note } : {}) };
    this.set(next);
    return next;
  }
  readonly changeRequests: { approvalId: string; comments: readonly ReviewComment[]; note?: string }[] = [];
  async requestChanges(approvalId: string, comments: readonly ReviewComment[], options: { note?: string } = {}): Promise<HoldView> {
    const hold = this.get(approvalId);
    if (!hold || hold.state !== 'pending') throw new ToolError('APPROVAL_CONFLICT', `approval ${approvalId} is not pending`);
    this.changeRequests.push({ approvalId, comments, ...(options.note !== undefined ? { note: options.note } : {}) });
    const next: HoldView = { ...hold, state: 'denied', decided_by: 'reviewer', decided_at: new Date().toISOString(), comments, ...(options.note ? { note: options.note } : {}) };
    this.set(next);
    return next;
  }
  revalidate(): Promise<void> {
    return Promise.resolve();
  }
  onDidChange(listener: (hold: HoldView) => void): Disposable {
    return this.changes.on(listener);
  }
}

export class FakeActivity implements Activity {
  readonly events: RunnerEvent[] = [];
  readonly previews = new Set<string>();
  private readonly stream = new Emitter<RunnerEvent>();

  emit(event: RunnerEvent): void {
    this.events.push(event);
    this.stream.emit(event);
  }
  onEvent(listener: (event: RunnerEvent) => void): Disposable {
    return this.stream.on(listener);
  }
  recent(): readonly RunnerEvent[] {
    return this.events.slice(-500);
  }
  preview(runId: string): readonly ProposalFile[] | undefined {
    return this.previews.has(runId) ? [] : undefined;
  }
}
