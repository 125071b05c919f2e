// The host half of the panel protocol, without vscode: it validates what the page sends, acts through the
// Approvals and Steering ports and editor commands, and sends the page the authoritative state (debounced). panelView.ts
// attaches it to a real webview; the unit tests attach it to a recording sink.
import type { Approvals } from '../../kernel/approvals/hold';
import { hasReviewFiles } from '../../kernel/approvals/hold';
import type { Disposable } from '../../base/disposable';
import type { Logger } from '../../base/logger';
import type { Activity } from '../../kernel/runner/events';
import type { Steering, WorkView } from '../../features/works';
import type { HostMessage, PageRequest, PanelState } from '../../shared/panelProtocol';
import { parsePageMessage } from '../../shared/panelProtocol';
import { COMMANDS } from '../../kernel/vscode/commandIds';
import { buildPanelState, panelBadge } from './panelModel';

/** State changes closer together than this reach the page as one message. */
export const STATE_DEBOUNCE_MS = 50;

/** One live webview the controller talks to. */
export interface PanelSink {
  post(message: HostMessage): PromiseLike<boolean> | boolean | void;
  /** Shows what waits (pending holds and queued instructions) on the view (0: no badge); the tooltip says what the number counts. */
  setBadge(count: number, tooltip: string): void;
}

/** What the panel shows, from the core's ports: the same for the view and its controller. */
export interface PanelSources {
  readonly approvals: Approvals;
  readonly activity: Activity;
  /** Works and instructions (the composer); absent in hosts without it: the panel shows no steering section. */
  readonly steering?: Steering;
  /** Whether a work review can diff a work from its baseline. */
  readonly reviewable?: (work: WorkView) => boolean;
  /** The agents with a credential and what this window saw of them (absent: the panel shows no agents section). */
  readonly agents?: PanelAgents;
  readonly log: Logger;
}

export interface PanelControllerDeps extends PanelSources {
  /** `vscode.commands.executeCommand`. */
  readonly executeCommand: (command: string, ...args: unknown[]) => PromiseLike<unknown>;
  readonly debounceMs?: number;
}

/** The part of the agent directory the panel reads. */
export interface PanelAgents {
  list(): readonly { readonly id: string; readonly name: string; readonly sessions: number; readonly connected_at?: string; readonly last_activity?: string }[];
  onDidChange(listener: () => void): Disposable;
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

export class PanelController implements Disposable {
  private sink: PanelSink | undefined;
  /** Identifies the attached webview; messages carrying another token come from one that is gone. */
  private token = 0;
  private ready = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private posted: PanelState | undefined;
  private disposed = false;
  private readonly subs: Disposable[];

  constructor(private readonly deps: PanelControllerDeps) {
    this.subs = [deps.approvals.onDidChange(() => this.schedule()), deps.activity.onEvent(() => this.schedule())];
    if (deps.steering) this.subs.push(deps.steering.onDidChange(() => this.schedule()));
    if (deps.agents) this.subs.push(deps.agents.onDidChange(() => this.schedule()));
  }

  /** The view model now, from the ports. */
  state(): PanelState {
    const { approvals, activity, steering, agents } = this.deps;
    const reviewable = this.deps.reviewable ?? (() => false);
    const state = buildPanelState({
      pending: approvals.pending(),
      holds: approvals.list(),
      events: activity.recent(),
      previewAvailable: (runId) => activity.preview(runId) !== undefined,
      ...(steering
        ? { steering: { works: steering.works(), instructions: (id) => steering.instructions(id), counts: (id) => steering.counts(id), reviewable } }
        : {}),
    });
    if (!agents) return state;
    return {
      ...state,
      agents: agents.list().map((a) => ({ id: a.id, name: a.name, sessions: a.sessions, ...(a.connected_at !== undefined ? { connectedAt: a.connected_at } : {}), ...(a.last_activity !== undefined ? { lastActivity: a.last_activity } : {}) })),
    };
  }

  /** The last state posted to the page (undefined until the page said `ready`). */
  lastPosted(): PanelState | undefined {
    return this.posted;
  }

  isReady(): boolean {
    return this.sink !== undefined && this.ready;
  }

  /** A webview was resolved: it is the one the controller talks to now. Returns its token. */
  attach(sink: PanelSink): number {
    this.sink = sink;
    this.ready = false;
    this.token++;
    try {
      const b = panelBadge(this.state());
      sink.setBadge(b.value, b.tooltip);
    } catch (err) {
      this.deps.log.error('[panel] building the panel state failed', err);
    }
    return this.token;
  }

  /** The webview is gone (disposed): its messages and pending replies are dropped. */
  detach(token: number): void {
    if (token !== this.token) return;
    this.sink = undefined;
    this.ready = false;
    this.token++;
  }

  /** The webview's page was torn down (hidden view): state is queued until it says `ready` again. */
  unready(token: number): void {
    if (token === this.token) this.ready = false;
  }

  /** Handles one message from the webview with `token`; returns the reply it posted, if any. */
  async handleMessage(raw: unknown, token: number): Promise<HostMessage | undefined> {
    if (this.disposed || token !== this.token || !this.sink) {
      this.deps.log.debug('[panel] a message from a disposed view was ignored');
      return undefined;
    }
    const parsed = parsePageMessage(raw);
    if (!parsed.ok) {
      this.deps.log.debug(`[panel] a malformed message was ignored: ${parsed.error}`);
      return parsed.requestId === undefined ? undefined : this.reply(token, parsed.requestId, parsed.error);
    }
    const message = parsed.message;
    if (message.type === 'ready') {
      this.ready = true;
      this.flush();
      return undefined;
    }
    let error: string | undefined;
    try {
      error = await this.perform(message);
    } catch (err) {
      error = describe(err);
    }
    if (error !== undefined) this.deps.log.debug(`[panel] ${message.type} refused: ${error}`);
    return this.reply(token, message.requestId, error);
  }

  private reply(token: number, requestId: string, error: string | undefined): HostMessage | undefined {
    const reply: HostMessage = error === undefined ? { type: 'reply', requestId, ok: true } : { type: 'reply', requestId, ok: false, error };
    if (this.disposed || token !== this.token || !this.sink) {
      this.deps.log.debug('[panel] the view went away before the reply');
      return undefined;
    }
    this.post(reply);
    return reply;
  }

  /** Does what a request asks; returns why not, or undefined when done. */
  private async perform(m: PageRequest): Promise<string | undefined> {
    switch (m.type) {
      case 'approve':
      case 'deny': {
        const why = this.notPending(m.approvalId);
        if (why) return why;
        const note = m.type === 'deny' ? m.note.trim() : '';
        await this.deps.approvals.resolve(m.approvalId, m.type === 'approve' ? 'grant' : 'deny', { by: 'reviewer', ...(note ? { note } : {}) });
        return undefined;
      }
      case 'requestChanges': {
        const why = this.notPending(m.approvalId);
        if (why) return why;
        const sent = (await this.deps.executeCommand(COMMANDS.requestChanges, m.approvalId, m.note)) as { ok?: boolean; code?: string; message?: string } | undefined;
        if (sent?.ok) return undefined;
        return sent?.code === 'NO_COMMENTS' ? 'no line comments yet: open the review, select lines of the proposal and add comments first' : (sent?.message ?? 'the changes could not be requested');
      }
      case 'openReview': {
        const hold = this.deps.approvals.list().find((h) => h.approval_id === m.approvalId);
        if (!hold) return `no approval ${m.approvalId}`;
        if (!hasReviewFiles(hold)) return `approval ${m.approvalId} is a command: there is nothing to review in a diff`;
        if (hold.state !== 'pending' && hold.state !== 'stale') return `approval ${m.approvalId} is ${hold.state}: there is nothing left to review`;
        await this.deps.executeCommand(COMMANDS.openReview, m.approvalId);
        return undefined;
      }
      case 'openTerminal': {
        if (!this.state().processes.some((p) => p.processId === m.processId)) return `no agent process ${m.processId}`;
        await this.deps.executeCommand(COMMANDS.showProcessTerminal, m.processId);
        return undefined;
      }
      case 'openPreview': {
        if (!this.state().activity.some((a) => a.previewRunId === m.runId)) return `no preview ${m.runId} (previews roll off after a while)`;
        await this.deps.executeCommand(COMMANDS.openPreview, m.runId);
        return undefined;
      }
      case 'saveDraft':
      case 'queueInstruction': {
        const steering = this.deps.steering;
        if (!steering) return 'steering is not available in this window';
        const work = steering.work(m.workId);
        if (!work) return `no work ${m.workId}`;
        if (work.status !== 'open') return `work ${m.workId} is finished: instructions go to an open work`;
        await steering.createDraft(m.workId, m.text, m.type === 'queueInstruction' ? { queue: true } : {});
        return undefined;
      }
      case 'editDraft': {
        if (!this.deps.steering) return 'steering is not available in this window';
        await this.deps.steering.editDraft(m.instructionId, m.text, m.revision);
        return undefined;
      }
      case 'deleteDraft': {
        if (!this.deps.steering) return 'steering is not available in this window';
        await this.deps.steering.deleteDraft(m.instructionId);
        return undefined;
      }
      case 'queueDraft': {
        if (!this.deps.steering) return 'steering is not available in this window';
        await this.deps.steering.queue(m.instructionId);
        return undefined;
      }
      case 'requeueInstruction': {
        if (!this.deps.steering) return 'steering is not available in this window';
        await this.deps.steering.requeue(m.instructionId);
        return undefined;
      }
      case 'reviewWork': {
        if (!this.deps.steering?.work(m.workId)) return `no work ${m.workId}`;
        await this.deps.executeCommand(COMMANDS.reviewWork, m.workId);
        return undefined;
      }
      case 'revokeAgent': {
        if (!this.deps.agents?.list().some((a) => a.id === m.agentId)) return `no agent ${m.agentId} has a credential`;
        await this.deps.executeCommand(COMMANDS.revokeAgent, { id: m.agentId });
        return undefined;
      }
      case 'discardWork': {
        if (!this.deps.steering?.work(m.workId)) return `no work ${m.workId}`;
        // The command asks the developer to confirm (a modal dialog) and says what it kept.
        const r = (await this.deps.executeCommand(COMMANDS.discardWork, m.workId)) as { ok?: boolean; code?: string; message?: string } | undefined;
        return r?.ok || r?.code === 'CANCELLED' ? undefined : (r?.message ?? 'the work was not discarded');
      }
      case 'rewindWork': {
        if (!this.deps.steering?.work(m.workId)) return `no work ${m.workId}`;
        const r = (await this.deps.executeCommand(COMMANDS.rewindWork, m.workId, m.operationId)) as { ok?: boolean; code?: string; message?: string } | undefined;
        return r?.ok || r?.code === 'CURRENT' ? undefined : (r?.message ?? 'the work could not be rewound');
      }
      default: {
        const never: never = m;
        return `unhandled message ${JSON.stringify(never)}`;
      }
    }
  }

  /** Why `approvalId` cannot be decided now, or undefined when it is pending. */
  private notPending(approvalId: string): string | undefined {
    if (this.deps.approvals.pending().some((h) => h.approval_id === approvalId)) return undefined;
    const hold = this.deps.approvals.list().find((h) => h.approval_id === approvalId);
    if (!hold) return `no approval ${approvalId}`;
    if (hold.state === 'stale') return `approval ${approvalId} is stale${hold.stale_reason ? `: ${hold.stale_reason}` : ''}`;
    return `approval ${approvalId} is ${hold.state}, not pending`;
  }

  private schedule(): void {
    if (this.disposed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.deps.debounceMs ?? STATE_DEBOUNCE_MS);
  }

  /** Sends the current state now (and the badge), when a ready page is there to take it. */
  private flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.disposed || !this.sink) return;
    let state: PanelState;
    try {
      state = this.state();
    } catch (err) {
      this.deps.log.error('[panel] building the panel state failed', err);
      return;
    }
    const badge = panelBadge(state);
    this.sink.setBadge(badge.value, badge.tooltip);
    if (!this.ready) return;
    this.posted = state;
    this.post({ type: 'state', state });
  }

  private post(message: HostMessage): void {
    const sink = this.sink;
    if (!sink) return;
    try {
      const r = sink.post(message);
      if (r && typeof r === 'object') {
        r.then(undefined, (err: unknown) => this.deps.log.debug(`[panel] posting ${message.type} failed: ${describe(err)}`));
      }
    } catch (err) {
      this.deps.log.debug(`[panel] posting ${message.type} failed: ${describe(err)}`);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.sink = undefined;
    for (const s of this.subs) s.dispose();
  }
}
