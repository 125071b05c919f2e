import type { Disposable } from '../../../base/disposable';

/**
 * The editor's debugger as the debug tools see it, in plain types (no `vscode` here): the VS Code side
 * (src/features/debug/vscode/vscodeDebug.ts) implements it; unit tests stand in a fake. Paths are absolute, lines and
 * columns 1-based. A session id is the id of a session the port started (debug_start); the port routes requests to
 * the child session that runs the program (the JavaScript debugger starts one per process) and reports events under
 * the id it returned. Only sessions it started are reported: the developer's own sessions are not the agent's.
 */
export interface DebugPort {
  /** The names of the launch configurations of the folder at `root` (launch.json), in order. */
  configurations(root: string): readonly string[];
  start(request: DebugStartRequest): Promise<{ readonly session: string; readonly name: string }>;
  /** Stops the session and its children. */
  stop(session: string): Promise<void>;
  control(session: string, action: DebugAction, threadId: number): Promise<void>;
  stack(session: string, threadId: number, start: number, levels: number): Promise<{ readonly frames: readonly DebugFrame[]; readonly total?: number }>;
  scopes(session: string, frameId: number): Promise<readonly DebugScope[]>;
  variables(session: string, ref: number): Promise<readonly DebugVariable[]>;
  evaluate(session: string, frameId: number, expression: string): Promise<{ readonly result: string; readonly type?: string; readonly ref: number }>;
  /** Every source breakpoint in the editor (the developer's too). */
  breakpoints(): readonly DebugBreakpoint[];
  /** Adds an ordinary line breakpoint; returns its id. */
  addBreakpoint(bp: BreakpointSpec): string;
  removeBreakpoints(ids: readonly string[]): void;
  /** Breakpoints removed (by anyone): their ids. */
  onDidRemoveBreakpoints(listener: (ids: readonly string[]) => void): Disposable;
  /** What the sessions it started report. */
  onEvent(listener: (event: DebugEvent) => void): Disposable;
}

/** Why every debug start is held: said in the hold's message (APPROVAL_REQUIRED) and in workspace_info. */
export const DEBUGGEE_NOT_SANDBOXED = 'every debug start: the debuggee runs outside the command sandbox';

export type DebugAction = 'continue' | 'next' | 'stepIn' | 'stepOut' | 'pause';

export interface DebugStartRequest {
  /** The workspace folder's root. */
  readonly root: string;
  /** A launch configuration of the folder, by name. */
  readonly configuration?: string;
  /** Or a program for the built-in JavaScript debugger. */
  readonly program?: { readonly path: string; readonly args: readonly string[]; readonly stopOnEntry: boolean };
}

export interface BreakpointSpec {
  readonly path: string;
  readonly line: number;
  readonly condition?: string;
  readonly hitCondition?: string;
  readonly logMessage?: string;
}

export interface DebugBreakpoint extends BreakpointSpec {
  readonly id: string;
  readonly enabled: boolean;
}

export interface DebugFrame {
  readonly id: number;
  readonly name: string;
  /** Absolute path of the source, when it is a file. */
  readonly path?: string;
  /** The source's name (for a source that is no file, such as Node's internals). */
  readonly source?: string;
  readonly line: number;
  readonly column: number;
}

export interface DebugScope {
  readonly name: string;
  readonly ref: number;
  /** Costly to read (a global scope): its variables are not read unless asked by ref. */
  readonly expensive: boolean;
}

export interface DebugVariable {
  readonly name: string;
  readonly value: string;
  readonly type?: string;
  /** Non-zero when it has children (read them with this ref). */
  readonly ref: number;
}

export type DebugEvent =
  | { readonly session: string; readonly kind: 'stopped'; readonly reason: string; readonly threadId?: number; readonly text?: string }
  /** The program runs again (a continue or step, whoever asked). */
  | { readonly session: string; readonly kind: 'continued' }
  | { readonly session: string; readonly kind: 'output'; readonly category: string; readonly output: string }
  | { readonly session: string; readonly kind: 'exited'; readonly exitCode: number }
  | { readonly session: string; readonly kind: 'terminated' };
