import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Disposable } from '../../../base/disposable';
import { DisposableStore } from '../../../base/disposable';
import type { DebugEvent, DebugPort } from './debugPort';

/** Bounds of what the debug tools keep and answer. */
export const DEBUG_LIMITS = {
  /** Unread output kept per session; older output is dropped (and counted). */
  maxOutputChars: 16 * 1024,
  /** Frames a debug_wait answer carries. */
  waitFrames: 5,
  /** Frames one debug_stack answer carries. */
  maxFrames: 100,
  /** Variables one debug_variables answer carries (all scopes and levels together). */
  maxVariables: 300,
  /** Characters of one variable's value. */
  maxValueChars: 200,
  /** Characters of an evaluate result. */
  maxResultChars: 8000,
  /** Longest debug_wait. */
  maxWaitMs: 55_000,
  /** Ended sessions remembered (so a call on one says it ended). */
  maxEnded: 20,
  /** References remembered per session (older ones read as never given). */
  maxRefs: 20_000,
} as const;

export type SessionState = 'running' | 'stopped' | 'terminated';

/** What the tools know of one session the agent started. */
export interface DebugSessionView {
  readonly id: string;
  readonly workspace_id: string;
  readonly state: SessionState;
  /** Counts the stops: a frame or variable reference is valid only during the stop that gave it. */
  readonly epoch: number;
  readonly stop?: { readonly reason: string; readonly threadId?: number; readonly text?: string };
  readonly exitCode?: number;
  /** The agent stopped it (debug_control stop). */
  readonly stoppedByAgent: boolean;
}

interface Session {
  id: string;
  workspace_id: string;
  state: SessionState;
  epoch: number;
  stop?: { reason: string; threadId?: number; text?: string };
  exitCode?: number;
  stoppedByAgent: boolean;
  output: string;
  droppedChars: number;
  /** Reference (frame or variable) → the epoch that gave it. */
  refs: Map<string, number>;
  waiters: Set<() => void>;
}

/** Truncates to `max` characters, saying by how much. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max} chars)`;
}

/**
 * The sessions the agent started and its breakpoints, kept from the port's events: each session's state and stop
 * epoch (a continue, a step or any resume ends the stop, and with it every reference it gave), its unread output
 * (bounded), and which of the agent's breakpoints someone else removed since the agent last looked.
 */
export class DebugSessions implements Disposable {
  private readonly sessions = new Map<string, Session>();
  private readonly ownBreakpoints = new Set<string>();
  private removedByOthers: string[] = [];
  private readonly store = new DisposableStore();

  constructor(port: DebugPort) {
    this.store.add(port.onEvent((e) => this.onEvent(e)));
    this.store.add(
      port.onDidRemoveBreakpoints((ids) => {
        for (const id of ids) {
          if (this.ownBreakpoints.delete(id)) this.removedByOthers.push(id);
        }
      }),
    );
  }

  /** A session debug_start just started (events may have come first). */
  started(id: string, workspaceId: string): void {
    const s = this.session(id);
    s.workspace_id = workspaceId;
  }

  private session(id: string): Session {
    let s = this.sessions.get(id);
    if (!s) {
      s = { id, workspace_id: '', state: 'running', epoch: 0, stoppedByAgent: false, output: '', droppedChars: 0, refs: new Map(), waiters: new Set() };
      this.sessions.set(id, s);
      this.forgetOldEnded();
    }
    return s;
  }

  private forgetOldEnded(): void {
    const ended = [...this.sessions.values()].filter((s) => s.state === 'terminated');
    for (const s of ended.slice(0, Math.max(0, ended.length - DEBUG_LIMITS.maxEnded))) this.sessions.delete(s.id);
  }

  private onEvent(e: DebugEvent): void {
    const s = this.session(e.session);
    if (s.state === 'terminated' && e.kind !== 'output') return;
    switch (e.kind) {
      case 'stopped':
        s.state = 'stopped';
        s.epoch++;
        s.stop = { reason: e.reason, ...(e.threadId !== undefined ? { threadId: e.threadId } : {}), ...(e.text !== undefined ? { text: e.text } : {}) };
        break;
      case 'continued':
        this.resumed(s);
        break;
      case 'output':
        if (e.category === 'telemetry') return;
        this.append(s, e.output);
        break;
      case 'exited':
        s.exitCode = e.exitCode;
        break;
      case 'terminated':
        s.state = 'terminated';
        delete s.stop;
        this.forgetOldEnded();
        break;
    }
    for (const w of [...s.waiters]) w();
  }

  private resumed(s: Session): void {
    if (s.state !== 'stopped') return;
    s.state = 'running';
    delete s.stop;
  }

  private append(s: Session, text: string): void {
    s.output += text;
    const over = s.output.length - DEBUG_LIMITS.maxOutputChars;
    if (over > 0) {
      s.output = s.output.slice(over);
      s.droppedChars += over;
    }
  }

  /** The session, or WORKSPACE-like errors: unknown id (INVALID_ARGUMENTS), ended (DEBUG_SESSION_ENDED) unless `ended` is allowed. */
  get(id: string, options: { ended?: boolean } = {}): DebugSessionView {
    const s = this.sessions.get(id);
    if (!s || s.workspace_id === '') {
      const known = [...this.sessions.values()].filter((x) => x.workspace_id !== '' && x.state !== 'terminated').map((x) => x.id);
      throw new InvalidArgumentsError(`No debug session ${id} was started by debug_start.`, { field: 'session_id', details: { sessions: known } });
    }
    if (s.state === 'terminated' && !options.ended) throw ended(s);
    return view(s);
  }

  /** The agent resumes the thread (continue, step): the stop and its references end now, before the request is sent. */
  resuming(id: string): void {
    const s = this.sessions.get(id);
    if (s) this.resumed(s);
  }

  /** The agent stopped the session. */
  stoppedByAgent(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    s.stoppedByAgent = true;
    s.state = 'terminated';
    delete s.stop;
    for (const w of [...s.waiters]) w();
  }

  /** Records references a stop gave, with the stop's epoch. */
  issued(id: string, kind: 'frame' | 'ref', refs: readonly number[]): void {
    const s = this.sessions.get(id);
    if (!s) return;
    for (const r of refs) {
      const key = `${kind}:${r}`;
      s.refs.delete(key);
      s.refs.set(key, s.epoch);
    }
    while (s.refs.size > DEBUG_LIMITS.maxRefs) s.refs.delete(s.refs.keys().next().value as string);
  }

  /**
   * A frame id or variable reference the agent passes back: valid only during the stop that gave it. Never given
   * → INVALID_ARGUMENTS; given by an earlier stop, or the session runs → STALE_REFERENCE.
   */
  checkRef(id: string, kind: 'frame' | 'ref', value: number, field: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    const at = s.refs.get(`${kind}:${value}`);
    if (at === undefined) {
      throw new InvalidArgumentsError(`${field} ${value} was not given by this session; take ids from debug_wait, debug_stack or debug_variables.`, { field });
    }
    if (s.state !== 'stopped' || at !== s.epoch) {
      const now = s.state === 'stopped' ? `it is now at stop ${s.epoch}` : 'it is running now';
      throw new ToolError('STALE_REFERENCE', `${field} ${value} is from stop ${at} of session ${id}, and ${now}: references last only as long as the stop that gave them.`, {
        hint: s.state === 'stopped' ? 'Call debug_stack (or debug_wait) for the current frames, then debug_variables.' : 'Call debug_wait until the session stops again, then read it afresh.',
        details: { [field]: value, issued_at_stop: at, stop: s.epoch, state: s.state },
      });
    }
  }

  /** Throws NOT_STOPPED unless the session is stopped; returns the stopped thread. */
  requireStopped(id: string, what: string): { view: DebugSessionView; threadId: number } {
    const v = this.get(id);
    if (v.state !== 'stopped' || !v.stop) {
      throw new ToolError('NOT_STOPPED', `${what} needs a stopped thread, and session ${id} is running.`, {
        hint: 'Call debug_wait until it stops (at a breakpoint), or debug_control pause.',
        details: { session_id: id, state: v.state },
      });
    }
    return { view: v, threadId: v.stop.threadId ?? 1 };
  }

  /** Waits until the session is stopped or ended, or `ms` pass; resolves with its view then. */
  async wait(id: string, ms: number, signal: AbortSignal): Promise<DebugSessionView> {
    const s = this.sessions.get(id);
    if (!s) return this.get(id);
    if (s.state !== 'running' || ms <= 0 || signal.aborted) return view(s);
    await new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        s.waiters.delete(changed);
        signal.removeEventListener('abort', finish);
        resolve();
      };
      const changed = (): void => {
        if (s.state !== 'running') finish();
      };
      const timer = setTimeout(finish, ms);
      s.waiters.add(changed);
      signal.addEventListener('abort', finish);
    });
    return view(s);
  }

  /** The unread output (then read), and how many older characters were dropped unread. */
  takeOutput(id: string): { output: string; dropped: number } {
    const s = this.sessions.get(id);
    if (!s) return { output: '', dropped: 0 };
    const r = { output: s.output, dropped: s.droppedChars };
    s.output = '';
    s.droppedChars = 0;
    return r;
  }

  // ---- breakpoints ----

  addOwn(id: string): void {
    this.ownBreakpoints.add(id);
  }

  isOwn(id: string): boolean {
    return this.ownBreakpoints.has(id);
  }

  /** The agent removes its own: not reported back as removed by someone else. */
  forgetOwn(id: string): void {
    this.ownBreakpoints.delete(id);
  }

  ownIds(): ReadonlySet<string> {
    return this.ownBreakpoints;
  }

  /** The agent's breakpoints someone else removed since the last call (then forgotten). */
  takeRemovedByOthers(): string[] {
    const r = this.removedByOthers;
    this.removedByOthers = [];
    return r;
  }

  dispose(): void {
    this.store.dispose();
    for (const s of this.sessions.values()) for (const w of [...s.waiters]) w();
  }
}

function view(s: Session): DebugSessionView {
  return {
    id: s.id,
    workspace_id: s.workspace_id,
    state: s.state,
    epoch: s.epoch,
    ...(s.stop ? { stop: { ...s.stop } } : {}),
    ...(s.exitCode !== undefined ? { exitCode: s.exitCode } : {}),
    stoppedByAgent: s.stoppedByAgent,
  };
}

function ended(s: Session): ToolError {
  const how = s.stoppedByAgent ? 'debug_control stop ended it' : s.exitCode !== undefined ? `its program exited with code ${s.exitCode}` : 'it was stopped outside your calls (by the developer, or its debugger ended)';
  return new ToolError('DEBUG_SESSION_ENDED', `Debug session ${s.id} has ended: ${how}.`, {
    hint: 'Start a new one with debug_start.',
    details: { session_id: s.id, ...(s.exitCode !== undefined ? { exit_code: s.exitCode } : {}), stopped_by_agent: s.stoppedByAgent },
  });
}
