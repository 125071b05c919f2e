import type { BackendOrigin, EndReason, ExitInfo, ProcessHandle, SpawnRecord } from './processBackend';
import type { LostRange } from './ringBuffer';

/** The public shapes of the process service: what its tools, the UI and the backends exchange with it. */

export type Occupancy = 'exclusive' | 'shared';
export type ProcessState = 'running' | 'exited';
/**
 * How a process ended: on its own (`exited`, with an exit code), by the operator timeout, by a terminate, by the
 * process host because no window came back for it (`window_closed`), or otherwise.
 */
export type Termination = 'exited' | 'timeout' | 'terminated' | 'window_closed' | 'unknown';

/** What an end reports (process_status): the termination, with the exit code only when it ended on its own. */
export interface EndOutcome {
  readonly termination: Termination;
  readonly exit_code?: number;
  readonly signal?: string;
}

/**
 * How an exit reads: the reason CodeSpace ended it wins; else an exit code with no signal is `exited`; else
 * `unknown` (with the signal, when one ended it). One rule for the supervisor and for ends recorded elsewhere
 * (a process host that ended its processes with no window attached).
 */
export function endOutcome(info: ExitInfo, requested: EndReason | undefined = info.requested): EndOutcome {
  const signal = info.signal === undefined || info.signal === 0 || info.signal === '' ? undefined : String(info.signal);
  const termination: Termination = requested ?? (signal === undefined && typeof info.exitCode === 'number' ? 'exited' : 'unknown');
  return {
    termination,
    ...(termination === 'exited' && info.exitCode !== undefined ? { exit_code: info.exitCode } : {}),
    ...(signal !== undefined ? { signal } : {}),
  };
}

/** PTY spawn size fixed by the contract (TOOLS.md: "PTY spawn size 24×80"). */
export const PTY_ROWS = 24;
export const PTY_COLS = 80;
/** Bounds for process_resize. */
export const MAX_TERMINAL_DIMENSION = 1000;

/** What the UI needs to show a process (for example, to name its VS Code terminal). */
export interface ProcessInfo {
  readonly process_id: string;
  readonly workspace_id: string;
  readonly command: readonly string[];
  /** Absolute working directory. */
  readonly cwd: string;
  readonly tty: boolean;
  readonly occupancy: Occupancy;
  readonly started_at: string;
  readonly pid: number;
}

export interface ProcessStatus {
  readonly process_id: string;
  readonly workspace_id: string;
  readonly state: ProcessState;
  readonly termination?: Termination;
  /** Only when termination is `exited`. */
  readonly exit_code?: number;
  /** The signal that ended the leading process, when one did (e.g. `SIGTERM`). */
  readonly signal?: string;
  readonly started_at: string;
  readonly ended_at?: string;
  readonly command: readonly string[];
  readonly tty: boolean;
  readonly occupancy: Occupancy;
  /**
   * Once exited: whether all of the output was collected. False only when the drain after the exit gave up
   * (see ExitInfo.outputComplete): output may be missing, and the agent should not judge the run by its tail.
   */
  readonly output_complete?: boolean;
}

export interface ProcessRead {
  /** Output decoded as UTF-8, never cut inside a character (see RingBuffer). */
  readonly chunk: string;
  readonly cursor: number;
  /** The process has exited and `cursor` is at the end of its output. Not a success signal. */
  readonly eof: boolean;
  readonly output_lost: boolean;
  readonly retained_from: number;
  /** With `output_lost`: exactly which bytes the reader missed (from its cursor to where `chunk` starts). */
  readonly lost?: LostRange;
  /** Present (false) only once the process has exited with output known to be incomplete. */
  readonly output_complete?: false;
}

export interface ExecOptions {
  /** Absolute working directory, already confined to the workspace by path. */
  readonly cwd: string;
  /** The workspace root: the backend verifies that the directory it opens as `cwd` lies inside it. */
  readonly root?: string;
  readonly tty?: boolean;
  /** Default `exclusive`: the process occupies its workspace while it runs. */
  readonly occupancy?: Occupancy;
  /** The base environment (operator settings); scrubbed of our variables and secrets before use. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Operator timeout; 0 or absent: none. */
  readonly timeoutMs?: number;
}

export interface ExecResult {
  readonly process_id: string;
  readonly dispatch_status: 'confirmed' | 'unknown';
}

export interface Occupant {
  readonly process_id: string;
  readonly command: readonly string[];
}

export interface OutputStats {
  /** Bytes the process has written in total (the end cursor). */
  readonly end: number;
  readonly retained_from: number;
  /** Bytes currently retained. */
  readonly retained: number;
  /** Bytes allocated for retention (never above the capacity). */
  readonly allocated: number;
  readonly capacity: number;
}

/** What workspace_info reports of the processes: it must match what the supervisor enforces. */
export interface ProcessCapabilities {
  /** A backend could be loaded (node-pty and/or pipes). */
  readonly available: boolean;
  readonly pty: boolean;
  readonly resize: boolean;
  /** What owns a process and so ends it. */
  readonly lifetime: string;
  /** Which node-pty the terminal backend loaded: VS Code's own copy or the bundled one (when it can tell). */
  readonly ptyOrigin?: BackendOrigin;
}

/** A process an earlier extension host started, handed back by a backend that outlived it (see `adopt`). */
export interface AdoptedProcess {
  readonly record: SpawnRecord;
  /** Its output from `retainedFrom` on (what was retained, then what follows), and its exit. */
  readonly handle: ProcessHandle;
  readonly retainedFrom: number;
  /** Why it was asked to end, when it was. */
  readonly requested?: EndReason;
  /** Pipes: its stdin was closed by write_stdin eof. */
  readonly inputClosed?: boolean;
}
