import type { Disposable } from '../../../base/disposable';

/**
 * Starting and controlling OS processes. The core's supervisor owns policy (occupancy, timeouts, output
 * retention, environment scrubbing); a backend only spawns and signals. Adapters: `NodePtyBackend` (a
 * pseudo-terminal) and `ChildProcessBackend` (pipes), both in src/node.
 */
export interface SpawnOptions {
  /** Program to run: a name looked up on the child's PATH, or a path. Never interpreted by a shell. */
  readonly file: string;
  /** Arguments passed literally (argv[1..]). */
  readonly args: readonly string[];
  /**
   * Absolute working directory, confined to the workspace by path. The backend opens it once and checks that
   * what it opened lies inside `root` (a folder swapped for a symbolic link meanwhile is refused), then starts
   * the child in the directory it opened. The child's `PWD` is this logical path.
   */
  readonly cwd: string;
  /** The workspace root `cwd` must stay inside (resolved to its real path by the backend). Absent: not checked. */
  readonly root?: string;
  /** The complete environment of the child (nothing is inherited beyond it). */
  readonly env: Readonly<Record<string, string>>;
  /** Whether the backend is asked for a pseudo-terminal; a backend refuses a mode it does not provide. */
  readonly tty: boolean;
  /** Initial terminal size (tty only). Default 24 x 80. */
  readonly rows?: number;
  readonly cols?: number;
  /**
   * What the supervisor knows of the process, for a backend that keeps processes beyond the extension host's life
   * (the process host, src/features/processes/node/processHost): it hands this back on re-attach so the process keeps its id, cursor
   * and occupancy. Other backends ignore it.
   */
  readonly record?: SpawnRecord;
}

/** The supervisor's description of a process, kept by a backend that outlives the extension host. */
export interface SpawnRecord {
  readonly process_id: string;
  readonly workspace_id: string;
  /** The work whose worktree it runs in (it occupies that worktree, not the folder). */
  readonly work_id?: string;
  readonly command: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  readonly occupancy: 'exclusive' | 'shared';
  /** Milliseconds since the epoch. */
  readonly started_at: number;
  /** Bytes of output retained (the ring's capacity). */
  readonly capacity: number;
  /** When the operator timeout ends it (ms since the epoch); absent: no timeout. */
  readonly deadline?: number;
}

/**
 * Why a process was ended by CodeSpace rather than on its own: an agent's (or the window's) terminate, the operator
 * timeout, or (a process host only) no window attached for the host's grace period, so the host ended it and exited.
 */
export type EndReason = 'terminated' | 'timeout' | 'window_closed';

/** How the leading process ended: an exit code, or the signal that killed it. */
export interface ExitInfo {
  readonly exitCode?: number;
  /** Signal name (`SIGTERM`) where known, else its number. */
  readonly signal?: string | number;
  /**
   * False when the backend stopped collecting output before it could see the end of it (its bounded wait for
   * the output to drain ran out): output may be missing. Absent or true: everything the process wrote before
   * it exited was delivered through `onData`.
   */
  readonly outputComplete?: boolean;
  /**
   * Why the backend ended the process itself, when it did: a process host enforces the operator timeout (the
   * record's `deadline`) on its own, also while no extension is attached.
   */
  readonly requested?: EndReason;
}

/** One running process, which leads its own process group (and, for a PTY, its own session). */
export interface ProcessHandle {
  readonly pid: number;
  readonly tty: boolean;
  /**
   * Output bytes in arrival order (stdout and stderr together). Events before the first listener are kept. The
   * bytes are valid during the call only (a backend may reuse the memory for the next read): a listener that keeps
   * them copies them.
   */
  onData(listener: (bytes: Uint8Array) => void): Disposable;
  /** Fires once, after the output has been drained. A late listener still hears it. */
  onExit(listener: (info: ExitInfo) => void): Disposable;
  /**
   * Output the backend dropped before delivering it (a process host whose extension fell behind a flood): the
   * next `onData` bytes start `bytes` later in the process's output. In order with `onData`; subscribe before
   * it. Backends that deliver every byte never fire it.
   */
  onSkip?(listener: (bytes: number) => void): Disposable;
  /** Writes to the process's input (the terminal for a PTY, stdin for pipes). Throws when input is closed. */
  write(data: string | Uint8Array): void;
  /**
   * Ends the input. Pipes: closes stdin (after what was written), so the reader sees end of file; later writes
   * throw. PTY: sends the terminal's end-of-file character (Ctrl-D) — twice when the line typed so far is not
   * empty, since one only hands over that line; the terminal stays open for more input.
   */
  endInput(): void;
  /** Changes the terminal size. Throws for pipes. */
  resize(rows: number, cols: number): void;
  /** Sends `signal` (default SIGTERM) to the whole process group. Never throws for a process that is gone. */
  kill(signal?: string): void;
  /**
   * Ends the process and every descendant: SIGTERM to the group and to descendants that left it, then SIGKILL
   * after the backend's grace period. Resolves when nothing is left alive (or SIGKILL has been sent and given
   * a moment). `reason` says why: a backend that keeps processes beyond the extension host's life records it
   * and hands it back on re-attach (see SpawnOptions.record); others ignore it.
   */
  terminate(reason?: EndReason): Promise<void>;
}

/** Where a backend's native module came from (node-pty: VS Code's own copy or the bundled one), for workspace_info. */
export interface BackendOrigin {
  readonly source: 'vscode' | 'bundled' | 'none';
  readonly version?: string;
  /** Why nothing loaded (source `none`). */
  readonly reason?: string;
}

export interface ProcessBackend {
  /** `pty` for a pseudo-terminal backend, `pipes` for plain pipes. */
  readonly kind: 'pty' | 'pipes';
  /** Whether the backend can start processes here (for example, whether node-pty loads). Never throws. */
  available(): boolean;
  /** Where its native module came from; undefined when the backend has none or cannot tell. Never throws. */
  origin?(): BackendOrigin | undefined;
  /** Starts the process; rejects with `SpawnError` when nothing was started. */
  spawn(options: SpawnOptions): Promise<ProcessHandle>;
}

export type SpawnFailure =
  /** The program was not found on PATH or at the given path. */
  | 'not_found'
  /** The program exists but cannot be executed. */
  | 'not_executable'
  /** The working directory does not exist or is not a directory. */
  | 'bad_cwd'
  /** The working directory, once opened, turned out to lie outside the workspace root. */
  | 'outside'
  /** An argument, the environment or a path exceeds an OS limit (E2BIG, ENAMETOOLONG); checked before spawning. */
  | 'too_large'
  /** The backend cannot run here (for example, node-pty failed to load). */
  | 'unavailable'
  /** Command isolation is required (or on) and the sandbox cannot run this command; nothing was started. */
  | 'isolation'
  /** Anything else the OS refused. */
  | 'failed';

/** A spawn that started nothing. `reason` is for branching; `message` is for people. */
export class SpawnError extends Error {
  readonly reason: SpawnFailure;

  constructor(reason: SpawnFailure, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SpawnError';
    this.reason = reason;
  }

  static is(err: unknown, reason?: SpawnFailure): err is SpawnError {
    return err instanceof SpawnError && (reason === undefined || err.reason === reason);
  }
}
