// The panel's view model, built from the core's ports only (Approvals: pending() and list(); Activity: recent()).
// Pure and vscode-free, so the unit tests run it in plain Node.
import type { HoldView } from '../../kernel/approvals/hold';
import { hasReviewFiles } from '../../kernel/approvals/hold';
import type { RunnerEvent } from '../../kernel/runner/events';
import type { InstructionView, SteeringCounts, WorkView } from '../../features/works';
import type { PanelActivity, PanelDelivery, PanelHold, PanelInstruction, PanelProcess, PanelState, PanelWork } from '../../shared/panelProtocol';

/** Most activity lines sent to the page (the runner keeps 500 events). */
export const MAX_ACTIVITY_SHOWN = 200;
/** Most stale holds shown under the pending ones (newest first). */
export const MAX_STALE_SHOWN = 10;
/** Most exited processes shown (every running one is). */
export const MAX_EXITED_PROCESSES_SHOWN = 50;
/** Most finished works shown under the open ones (newest first). */
export const MAX_FINISHED_WORKS_SHOWN = 5;
/** Most instructions shown per work (the latest). */
export const MAX_INSTRUCTIONS_SHOWN = 50;

/** What the panel reads of the steering service (works and their instructions). */
export interface SteeringInput {
  readonly works: readonly WorkView[];
  instructions(workId: string): readonly InstructionView[];
  counts(workId: string): SteeringCounts;
  /** Whether a work's baseline is one a review can diff from. */
  reviewable(work: WorkView): boolean;
}

export interface PanelModelInput {
  /** `Approvals.pending()`: pending holds, newest first. */
  readonly pending: readonly HoldView[];
  /** `Approvals.list()`: every hold kept, newest first (the stale ones are shown). */
  readonly holds: readonly HoldView[];
  /** `Activity.recent()`: oldest first. */
  readonly events: readonly RunnerEvent[];
  /** Whether the content of a `check_only` preview is still kept (`Activity.preview(runId) !== undefined`). */
  readonly previewAvailable?: (runId: string) => boolean;
  /** Absent when the steering service is not there (then the state has no works). */
  readonly steering?: SteeringInput;
}

function holdTitle(hold: HoldView, titles: ReadonlyMap<string, string>): string {
  const known = titles.get(hold.approval_id);
  if (known) return known;
  if (hold.tool === 'exec_command') return `exec_command: ${hold.command?.argv.join(' ') ?? '(command unknown)'}`;
  const files = hold.files ?? [];
  const names = files.slice(0, 3).map((f) => f.path).join(', ');
  return `apply_patch: ${files.length} file${files.length === 1 ? '' : 's'}${names ? ` (${names}${files.length > 3 ? ', …' : ''})` : ''}`;
}

function toPanelHold(hold: HoldView, state: 'pending' | 'stale', titles: ReadonlyMap<string, string>): PanelHold {
  const pending = state === 'pending';
  return {
    approvalId: hold.approval_id,
    tool: hold.tool,
    workspaceId: hold.workspace_id,
    state,
    reason: hold.reason,
    createdAt: hold.created_at,
    title: holdTitle(hold, titles),
    ...(state === 'stale' ? { staleReason: hold.stale_reason ?? 'a file bound by the hold changed' } : {}),
    ...(hold.files
      ? {
          files: hold.files.map((f) => ({
            path: f.path,
            kind: f.kind,
            ...(f.move_to !== undefined ? { moveTo: f.move_to } : {}),
            added: f.added,
            removed: f.removed,
            sensitive: f.sensitive,
          })),
        }
      : {}),
    ...(hold.command
      ? {
          command: {
            argv: [...hold.command.argv],
            cwd: hold.command.cwd,
            tty: hold.command.tty,
            occupancy: hold.command.occupancy,
            env: Object.keys(hold.command.env_changes)
              .sort()
              .map((key) => ({ key, value: hold.command?.env_changes[key] ?? null })),
          },
        }
      : {}),
    sensitivePaths: [...hold.sensitive_paths],
    canApprove: pending,
    canDeny: pending,
    canReview: hasReviewFiles(hold),
  };
}

function activityLine(event: RunnerEvent, key: string, titles: ReadonlyMap<string, string>, previewAvailable: (runId: string) => boolean): PanelActivity | undefined {
  const approvalTitle = (id: string): string => titles.get(id) ?? `approval ${id}`;
  switch (event.type) {
    case 'operation.prepared':
      return { key, kind: 'prepared', at: event.operation.at, title: event.operation.title, tool: event.operation.tool, workspaceId: event.operation.workspace_id, runId: event.operation.run_id };
    case 'operation.held':
      return {
        key,
        kind: 'held',
        at: event.hold.created_at,
        title: event.operation.title,
        tool: event.operation.tool,
        workspaceId: event.operation.workspace_id,
        detail: `waiting for approval (${event.hold.reason})`,
        approvalId: event.hold.approval_id,
        runId: event.operation.run_id,
      };
    case 'operation.granted':
      return { key, kind: 'granted', at: event.at, title: approvalTitle(event.approval_id), detail: `granted by ${event.by}`, approvalId: event.approval_id };
    case 'operation.denied':
      return {
        key,
        kind: 'denied',
        at: event.at,
        title: approvalTitle(event.approval_id),
        detail: `denied by ${event.by}${event.note ? `: ${event.note}` : ''}`,
        approvalId: event.approval_id,
      };
    case 'operation.stale':
      return { key, kind: 'stale', at: event.at, title: approvalTitle(event.approval_id), detail: `stale: ${event.reason}`, approvalId: event.approval_id };
    case 'operation.committed': {
      const isPreview = event.operation.reviewable === true && event.status === 'checked';
      return {
        key,
        kind: 'committed',
        at: event.operation.at,
        title: event.operation.title,
        tool: event.operation.tool,
        workspaceId: event.operation.workspace_id,
        detail: event.process_id ? `${event.status} (process ${event.process_id})` : event.status,
        runId: event.operation.run_id,
        ...(event.approval_id ? { approvalId: event.approval_id } : {}),
        ...(isPreview && previewAvailable(event.operation.run_id) ? { previewRunId: event.operation.run_id } : {}),
        ...(event.operation.reviewable === true && event.status === 'applied' && event.operation.work_id !== undefined && event.operation_id !== undefined
          ? { checkpoint: { workId: event.operation.work_id, operationId: event.operation_id } }
          : {}),
      };
    }
    case 'operation.failed':
      return {
        key,
        kind: 'failed',
        at: event.operation.at,
        title: event.operation.title,
        tool: event.operation.tool,
        workspaceId: event.operation.workspace_id,
        detail: `${event.code}: ${event.message}`,
        runId: event.operation.run_id,
        ...(event.approval_id ? { approvalId: event.approval_id } : {}),
      };
    case 'process.started':
    case 'process.exited':
      return undefined;
    default: {
      const never: never = event;
      void never;
      return undefined;
    }
  }
}

function durationMs(startedAt: string | undefined, endedAt: string | undefined): number | undefined {
  if (startedAt === undefined || endedAt === undefined) return undefined;
  const d = Date.parse(endedAt) - Date.parse(startedAt);
  return Number.isFinite(d) && d >= 0 ? d : undefined;
}

function processes(events: readonly RunnerEvent[]): PanelProcess[] {
  const byId = new Map<string, PanelProcess>();
  for (const e of events) {
    if (e.type === 'process.started') {
      byId.set(e.process_id, { processId: e.process_id, workspaceId: e.workspace_id, command: [...e.command], tty: e.tty, state: 'running', startedAt: e.started_at });
    } else if (e.type === 'process.exited') {
      const started = byId.get(e.process_id);
      const d = durationMs(started?.startedAt, e.ended_at);
      byId.set(e.process_id, {
        processId: e.process_id,
        workspaceId: e.workspace_id,
        ...(started?.command ? { command: started.command } : {}),
        ...(started?.tty !== undefined ? { tty: started.tty } : {}),
        state: 'exited',
        termination: e.termination,
        ...(e.exit_code !== undefined ? { exitCode: e.exit_code } : {}),
        ...(e.signal !== undefined ? { signal: e.signal } : {}),
        ...(started?.startedAt !== undefined ? { startedAt: started.startedAt } : {}),
        endedAt: e.ended_at,
        ...(d !== undefined ? { durationMs: d } : {}),
      });
    }
  }
  // Map order is first-seen order (oldest first); newest first within each group.
  const all = [...byId.values()].reverse();
  const running = all.filter((p) => p.state === 'running');
  const exited = all.filter((p) => p.state === 'exited').sort((a, b) => (b.endedAt ?? '').localeCompare(a.endedAt ?? ''));
  return [...running, ...exited.slice(0, MAX_EXITED_PROCESSES_SHOWN)];
}

function toPanelInstruction(i: InstructionView): PanelInstruction {
  return {
    id: i.id,
    workId: i.work_id,
    text: i.text,
    status: i.status,
    createdAt: i.created_at,
    ...(i.queued_at !== undefined ? { queuedAt: i.queued_at } : {}),
    ...(i.claimed_at !== undefined ? { claimedAt: i.claimed_at } : {}),
    ...(i.completed_at !== undefined ? { completedAt: i.completed_at } : {}),
    ...(i.note !== undefined ? { note: i.note } : {}),
    revision: i.revision,
    editable: i.status === 'draft',
    requeueable: i.status === 'blocked',
  };
}

function byNewest(a: string | undefined, b: string | undefined): number {
  return (b ?? '').localeCompare(a ?? '');
}

/** Hex digits of a checkpoint digest the panel shows (`sha256:` left out). */
export const SHORT_DIGEST_CHARS = 12;

/** Only web links are offered as links; anything else a remote answered is not shown. */
function webUrl(url: string | undefined): string | undefined {
  return url !== undefined && /^https?:\/\/[^\s]+$/i.test(url) ? url : undefined;
}

/**
 * Where a work's review and delivery stand. While frozen: its checkpoint, and what became of that checkpoint (the
 * latest review of it, its reviewed commit, that commit's delivery). Once reopened, only a delivery already made
 * is shown; a review or commit of an earlier checkpoint is not.
 */
export function deliveryOf(w: WorkView): { delivery: PanelDelivery } | undefined {
  const digest = w.frozen?.digest;
  const delivered = w.delivered !== undefined && w.delivered.length > 0 ? w.delivered : undefined;
  const committedNow = digest !== undefined && w.committed?.digest === digest ? w.committed : undefined;
  const shipped = delivered !== undefined && (digest === undefined || (committedNow !== undefined && delivered.every((d) => committedNow.commits.some((c) => c.commit === d.commit))));
  const short = (digest ?? w.committed?.digest)?.replace(/^sha256:/, '').slice(0, SHORT_DIGEST_CHARS);
  const withDigest = short !== undefined ? { digest: short } : {};
  if (shipped) {
    const links = delivered.flatMap((d) => {
      const pr = webUrl(d.pr_url);
      const url = pr ?? webUrl(d.compare_url);
      return url === undefined ? [] : [{ workspaceId: d.workspace_id, branch: d.branch, url, kind: pr !== undefined ? ('pull_request' as const) : ('compare' as const) }];
    });
    return { delivery: { state: 'delivered', ...withDigest, links } };
  }
  if (digest === undefined) return undefined;
  if (committedNow !== undefined) return { delivery: { state: 'committed', ...withDigest } };
  if (w.review?.digest === digest) return { delivery: { state: w.review.approved ? 'approved' : 'rejected', ...withDigest } };
  return { delivery: { state: 'frozen', ...withDigest } };
}

/** Open works (newest first), then the latest finished ones, each with its latest instructions. */
export function buildWorks(steering: SteeringInput): { works: PanelWork[]; waiting: number; open: number } {
  const open = steering.works.filter((w) => w.status === 'open').sort((a, b) => byNewest(a.opened_at, b.opened_at));
  const finished = steering.works
    .filter((w) => w.status === 'finished')
    .sort((a, b) => byNewest(a.finished_at ?? a.opened_at, b.finished_at ?? b.opened_at))
    .slice(0, MAX_FINISHED_WORKS_SHOWN);
  let waiting = 0;
  const works = [...open, ...finished].map((w): PanelWork => {
    const counts = steering.counts(w.id);
    if (w.status === 'open') waiting += counts.queued;
    const all = steering.instructions(w.id);
    return {
      id: w.id,
      workspaceId: w.workspace_id,
      title: w.title,
      status: w.status,
      openedAt: w.opened_at,
      ...(w.finished_at !== undefined ? { finishedAt: w.finished_at } : {}),
      counts: { draft: counts.draft, queued: counts.queued, claimed: counts.claimed, done: counts.done, blocked: counts.blocked },
      instructions: all.slice(Math.max(0, all.length - MAX_INSTRUCTIONS_SHOWN)).map(toPanelInstruction),
      baseline: steering.reviewable(w) ? 'git' : 'none',
      ...(w.worktrees?.[0] !== undefined ? { branch: w.worktrees[0].branch } : {}),
      ...(w.worktrees?.some((t) => t.removed_at === undefined) ? { holdsWorktree: true } : {}),
      ...(deliveryOf(w) ?? {}),
    };
  });
  return { works, waiting, open: open.length };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The view's badge: what waits — holds for the reviewer's decision and instructions queued for an agent that has
 * not claimed them yet. The tooltip says which, and how many works are open (open works alone draw no number:
 * nothing in them waits).
 */
export function panelBadge(state: Pick<PanelState, 'pendingCount' | 'waitingInstructionCount' | 'openWorkCount'>): { value: number; tooltip: string } {
  const pending = state.pendingCount;
  const waiting = state.waitingInstructionCount ?? 0;
  const open = state.openWorkCount ?? 0;
  const parts: string[] = [];
  if (pending > 0) parts.push(`${plural(pending, 'agent request', 'agent requests')} waiting for approval`);
  if (waiting > 0) parts.push(`${plural(waiting, 'instruction', 'instructions')} waiting for the agent`);
  const value = pending + waiting;
  if (value > 0 && open > 0) parts.push(`${plural(open, 'open work', 'open works')}`);
  return { value, tooltip: value > 0 ? parts.join(' · ') : '' };
}

/** Turns the holds and the runner's recent events into what the panel page renders. */
export function buildPanelState(input: PanelModelInput): PanelState {
  const titles = new Map<string, string>();
  for (const e of input.events) if (e.type === 'operation.held') titles.set(e.hold.approval_id, e.operation.title);

  const pendingIds = new Set(input.pending.map((h) => h.approval_id));
  const stale = input.holds.filter((h) => h.state === 'stale' && !pendingIds.has(h.approval_id)).slice(0, MAX_STALE_SHOWN);
  const holds = [
    ...input.pending.filter((h) => h.state === 'pending').map((h) => toPanelHold(h, 'pending', titles)),
    ...stale.map((h) => toPanelHold(h, 'stale', titles)),
  ];

  // A prepared operation is shown while nothing else is known of it; once held, committed or failed, that line says it.
  const progressed = new Set<string>();
  for (const e of input.events) {
    if (e.type === 'operation.held' || e.type === 'operation.committed' || e.type === 'operation.failed') progressed.add(e.operation.run_id);
  }
  const previewAvailable = input.previewAvailable ?? (() => true);
  const activity: PanelActivity[] = [];
  for (let i = input.events.length - 1; i >= 0 && activity.length < MAX_ACTIVITY_SHOWN; i--) {
    const event = input.events[i] as RunnerEvent;
    if (event.type === 'operation.prepared' && progressed.has(event.operation.run_id)) continue;
    const line = activityLine(event, `e${i}`, titles, previewAvailable);
    if (line) activity.push(line);
  }

  const base = { holds, activity, processes: processes(input.events), pendingCount: holds.filter((h) => h.state === 'pending').length };
  if (!input.steering) return base;
  const steering = buildWorks(input.steering);
  return { ...base, works: steering.works, waitingInstructionCount: steering.waiting, openWorkCount: steering.open };
}
