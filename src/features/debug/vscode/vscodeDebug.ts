import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Disposable } from '../../../base/disposable';
import { Emitter } from '../../../base/emitter';
import { describeError } from '../../../base/describeError';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { BreakpointSpec, DebugAction, DebugBreakpoint, DebugEvent, DebugFrame, DebugPort, DebugScope, DebugStartRequest, DebugVariable } from '../common/debugPort';

/** Marks a configuration debug_start launched, so the session it makes is known for the agent's. */
const MARKER = '__codespaceDebugStart';
/** Requests to an adapter after which the program runs again (whoever sends them: the agent or the debug toolbar). */
const RESUMING = new Set(['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue', 'restartFrame', 'goto']);
/** How long start() waits for the session VS Code reports after startDebugging resolved. */
const SESSION_WAIT_MS = 10_000;

/**
 * A source path a debug adapter reports, as a path of this extension host: a plain absolute path, or a URI of a file
 * here (in a remote window the editor hands the adapter's paths over as `vscode-remote://` URIs of this machine).
 */
function localPath(p: string | undefined): string | undefined {
  if (p === undefined) return undefined;
  if (path.isAbsolute(p)) return p;
  if (!/^[a-z][\w+.-]*:\/\//i.test(p)) return undefined;
  try {
    const uri = vscode.Uri.parse(p, true);
    return uri.scheme === 'file' || uri.scheme === 'vscode-remote' ? uri.fsPath : undefined;
  } catch {
    return undefined;
  }
}

interface DapMessage {
  readonly type?: string;
  readonly event?: string;
  readonly command?: string;
  readonly body?: Record<string, unknown>;
}

/**
 * The DebugPort on VS Code's debug API: sessions started with `vscode.debug.startDebugging`, stops and output seen
 * by a debug adapter tracker, requests sent with `customRequest`, breakpoints as ordinary source breakpoints. A
 * session the agent started is known by its id; its child sessions (the JavaScript debugger runs the program in a
 * child) report under that id, and requests go to the child that stopped last.
 */
export class VsCodeDebug implements DebugPort, vscode.Disposable {
  private readonly events = new Emitter<DebugEvent>();
  private readonly removed = new Emitter<readonly string[]>();
  /** Markers of starts under way. */
  private readonly markers = new Map<string, (s: vscode.DebugSession) => void>();
  /** A session of ours (a root or a descendant) → its root's id. */
  private readonly rootOf = new Map<string, string>();
  private readonly sessions = new Map<string, vscode.DebugSession>();
  /** Root → the descendant that stopped last (requests go there). */
  private readonly active = new Map<string, string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor() {
    this.subscriptions = [
      vscode.debug.registerDebugAdapterTrackerFactory('*', { createDebugAdapterTracker: (s) => this.tracker(s) }),
      vscode.debug.onDidStartDebugSession((s) => void this.adopt(s)),
      vscode.debug.onDidTerminateDebugSession((s) => this.ended(s)),
      vscode.debug.onDidChangeBreakpoints((e) => {
        if (e.removed.length > 0) this.removed.emit(e.removed.map((b) => b.id));
      }),
    ];
  }

  /** The root id of a session of ours (registering it the first time it is seen), or undefined. */
  private adopt(s: vscode.DebugSession): string | undefined {
    const known = this.rootOf.get(s.id);
    if (known) return known;
    const parentRoot = s.parentSession ? this.adopt(s.parentSession) : undefined;
    let root = parentRoot;
    if (!root) {
      const marker = (s.configuration as Record<string, unknown>)[MARKER];
      const waiting = typeof marker === 'string' ? this.markers.get(marker) : undefined;
      if (!waiting) return undefined;
      root = s.id;
      this.markers.delete(marker as string);
      waiting(s);
    }
    this.rootOf.set(s.id, root);
    this.sessions.set(s.id, s);
    return root;
  }

  private tracker(s: vscode.DebugSession): vscode.DebugAdapterTracker | undefined {
    if (!this.adopt(s)) return undefined;
    return {
      onWillReceiveMessage: (m: DapMessage) => {
        const root = this.rootOf.get(s.id);
        if (root && m.type === 'request' && m.command && RESUMING.has(m.command)) this.events.emit({ session: root, kind: 'continued' });
      },
      onDidSendMessage: (m: DapMessage) => {
        const root = this.rootOf.get(s.id);
        if (!root || m.type !== 'event') return;
        const body = m.body ?? {};
        if (m.event === 'stopped') {
          this.active.set(root, s.id);
          // `text` is what the stop is about (an exception's name and message); `description` only restates the reason.
          const text = typeof body.text === 'string' && body.text !== '' ? body.text : undefined;
          this.events.emit({ session: root, kind: 'stopped', reason: String(body.reason ?? 'unknown'), ...(typeof body.threadId === 'number' ? { threadId: body.threadId } : {}), ...(text !== undefined ? { text } : {}) });
        } else if (m.event === 'continued') {
          this.events.emit({ session: root, kind: 'continued' });
        } else if (m.event === 'output' && typeof body.output === 'string') {
          this.events.emit({ session: root, kind: 'output', category: typeof body.category === 'string' ? body.category : 'console', output: body.output });
        } else if (m.event === 'exited' && typeof body.exitCode === 'number') {
          this.events.emit({ session: root, kind: 'exited', exitCode: body.exitCode });
        }
      },
    };
  }

  private ended(s: vscode.DebugSession): void {
    const root = this.rootOf.get(s.id);
    if (!root) return;
    this.sessions.delete(s.id);
    this.rootOf.delete(s.id);
    if (this.active.get(root) === s.id) this.active.delete(root);
    if (root === s.id) {
      this.active.delete(root);
      this.events.emit({ session: root, kind: 'terminated' });
    }
  }

  /** The session requests of `root` go to: the one that stopped last, else its newest live descendant, else itself. */
  private target(root: string): vscode.DebugSession {
    const active = this.active.get(root);
    const s = (active && this.sessions.get(active)) || [...this.sessions.values()].reverse().find((x) => x.id !== root && this.rootOf.get(x.id) === root) || this.sessions.get(root);
    if (!s) throw new ToolError('DEBUG_SESSION_ENDED', `Debug session ${root} has ended.`, { hint: 'Start a new one with debug_start.', details: { session_id: root } });
    return s;
  }

  private async request<T>(root: string, command: string, args: Record<string, unknown>, field?: string): Promise<T> {
    const s = this.target(root);
    try {
      return (await s.customRequest(command, args)) as T;
    } catch (err) {
      throw new InvalidArgumentsError(`The debugger refused ${command}: ${describeError(err).slice(0, 500)}`, { ...(field ? { field } : {}), details: { request: command } });
    }
  }

  configurations(root: string): readonly string[] {
    return this.launchConfigurations(root).map((c) => c.name);
  }

  private folder(root: string): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file' && f.uri.fsPath === root);
  }

  private launchConfigurations(root: string): vscode.DebugConfiguration[] {
    const folder = this.folder(root);
    const all = vscode.workspace.getConfiguration('launch', folder?.uri).get<unknown[]>('configurations') ?? [];
    return all.filter((c): c is vscode.DebugConfiguration => typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string');
  }

  async start(request: DebugStartRequest): Promise<{ session: string; name: string }> {
    const folder = this.folder(request.root);
    const marker = randomUUID();
    let config: vscode.DebugConfiguration;
    if (request.configuration !== undefined) {
      const found = this.launchConfigurations(request.root).find((c) => c.name === request.configuration);
      if (!found) throw new ToolError('NOT_FOUND', `No launch configuration "${request.configuration}" any more.`, { details: { field: 'configuration' } });
      config = { ...found };
    } else {
      const program = request.program as NonNullable<DebugStartRequest['program']>;
      config = {
        type: 'pwa-node',
        request: 'launch',
        name: `CodeSpace: ${path.basename(program.path)}`,
        program: program.path,
        args: [...program.args],
        cwd: request.root,
        stopOnEntry: program.stopOnEntry,
        console: 'internalConsole',
      };
    }
    config[MARKER] = marker;
    const session = new Promise<vscode.DebugSession>((resolve) => this.markers.set(marker, resolve));
    let started: boolean;
    try {
      started = await vscode.debug.startDebugging(folder, config, { suppressSaveBeforeStart: true });
    } catch (err) {
      this.markers.delete(marker);
      throw new ToolError('UNAVAILABLE', `VS Code could not start the debug session: ${describeError(err)}`);
    }
    if (!started) {
      this.markers.delete(marker);
      throw new ToolError('UNAVAILABLE', 'VS Code did not start the debug session (its debugger refused the configuration, or a pre-launch task failed).', {
        hint: 'The developer\'s Debug Console and notifications say why.',
      });
    }
    let timer: NodeJS.Timeout | undefined;
    const s = await Promise.race([session, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), SESSION_WAIT_MS)))]);
    clearTimeout(timer);
    if (!s) {
      this.markers.delete(marker);
      throw new ToolError('UNAVAILABLE', 'VS Code reported the debug session started, but no session of it was seen.');
    }
    return { session: s.id, name: s.name };
  }

  async stop(session: string): Promise<void> {
    const s = this.sessions.get(session);
    if (s) await vscode.debug.stopDebugging(s);
  }

  async control(session: string, action: DebugAction, threadId: number): Promise<void> {
    await this.request(session, action, { threadId });
  }

  async stack(session: string, threadId: number, start: number, levels: number): Promise<{ frames: DebugFrame[]; total?: number }> {
    const body = await this.request<{ stackFrames?: { id: number; name: string; line: number; column: number; source?: { path?: string; name?: string } }[]; totalFrames?: number }>(session, 'stackTrace', { threadId, startFrame: start, levels });
    const frames = (body.stackFrames ?? []).map((f) => {
      const file = localPath(f.source?.path);
      return { id: f.id, name: f.name, ...(file ? { path: file } : {}), ...(f.source?.name !== undefined ? { source: f.source.name } : {}), line: f.line, column: f.column };
    });
    return { frames, ...(typeof body.totalFrames === 'number' ? { total: body.totalFrames } : {}) };
  }

  async scopes(session: string, frameId: number): Promise<DebugScope[]> {
    const body = await this.request<{ scopes?: { name: string; variablesReference: number; expensive?: boolean }[] }>(session, 'scopes', { frameId }, 'frame_id');
    return (body.scopes ?? []).map((s) => ({ name: s.name, ref: s.variablesReference, expensive: s.expensive === true }));
  }

  async variables(session: string, ref: number): Promise<DebugVariable[]> {
    const body = await this.request<{ variables?: { name: string; value: string; type?: string; variablesReference: number }[] }>(session, 'variables', { variablesReference: ref }, 'ref');
    return (body.variables ?? []).map((v) => ({ name: v.name, value: v.value, ...(v.type ? { type: v.type } : {}), ref: v.variablesReference }));
  }

  async evaluate(session: string, frameId: number, expression: string): Promise<{ result: string; type?: string; ref: number }> {
    const body = await this.request<{ result: string; type?: string; variablesReference: number }>(session, 'evaluate', { expression, frameId, context: 'watch' }, 'expression');
    return { result: body.result, ...(body.type ? { type: body.type } : {}), ref: body.variablesReference };
  }

  breakpoints(): DebugBreakpoint[] {
    return vscode.debug.breakpoints.flatMap((b) => {
      if (!(b instanceof vscode.SourceBreakpoint) || b.location.uri.scheme !== 'file') return [];
      return [
        {
          id: b.id,
          path: b.location.uri.fsPath,
          line: b.location.range.start.line + 1,
          enabled: b.enabled,
          ...(b.condition ? { condition: b.condition } : {}),
          ...(b.hitCondition ? { hitCondition: b.hitCondition } : {}),
          ...(b.logMessage ? { logMessage: b.logMessage } : {}),
        },
      ];
    });
  }

  addBreakpoint(bp: BreakpointSpec): string {
    const created = new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.file(bp.path), new vscode.Position(bp.line - 1, 0)), true, bp.condition, bp.hitCondition, bp.logMessage);
    vscode.debug.addBreakpoints([created]);
    return created.id;
  }

  removeBreakpoints(ids: readonly string[]): void {
    const wanted = new Set(ids);
    const found = vscode.debug.breakpoints.filter((b) => wanted.has(b.id));
    if (found.length > 0) vscode.debug.removeBreakpoints(found);
  }

  onDidRemoveBreakpoints(listener: (ids: readonly string[]) => void): Disposable {
    return this.removed.on(listener);
  }

  onEvent(listener: (event: DebugEvent) => void): Disposable {
    return this.events.on(listener);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.events.dispose();
    this.removed.dispose();
  }
}
