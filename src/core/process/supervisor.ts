import type { Disposable } from '../../base/disposable';
import { InvalidArgumentsError, ToolError } from '../errors';
import type { Workspace } from '../policy/workspaces';
import type { Logger } from '../ports/logger';
import { silentLogger } from '../ports/logger';
import type { BackendOrigin, EndReason, ExitInfo, ProcessBackend, ProcessHandle, SpawnRecord } from '../ports/processBackend';
import { SpawnError } from '../ports/processBackend';
import type { Limits } from '../policy/limits';
import { SecretSet, scrubEnvironment } from './environment';
import { Listeners } from './listeners';
import type { LostRange } from './ringBuffer';
import { DEFAULT_RING_CAPACITY, RingBuffer } from './ringBuffer';
import { readRedacted } from './redactedRead';
import type { SecretRedactor } from '../secretRedactor';
import { describeError } from '../../base/describeError';

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

export interface SupervisorSettings {
  /** Exited processes kept queryable (oldest forgotten first). */
  readonly maxExited: number;
  /** How long an exited process stays queryable. */
  readonly exitedTtlMs: number;
  /** Longest long-poll of one read. */
  readonly maxWaitMs: number;
  /** Bytes one read returns when the caller does not say. */
  readonly defaultReadBytes: number;
  /** Most bytes one read returns. */
  readonly maxReadBytes: number;
  /** After a terminate, how long to wait for the exit report before recording the end anyway. */
  readonly exitReportMs: number;
  /**
   * When a long-poll was woken by new output, how long to let more gather before answering (never past the
   * caller's wait): a fast producer then arrives in a few large chunks instead of many 4 KiB ones.
   */
  readonly coalesceMs: number;
}

export const DEFAULT_SUPERVISOR_SETTINGS: SupervisorSettings = {
  maxExited: 100,
  exitedTtlMs: 30 * 60 * 1000,
  maxWaitMs: 30_000,
  defaultReadBytes: 64 * 1024,
  maxReadBytes: 1024 * 1024,
  exitReportMs: 2_000,
  coalesceMs: 10,
};

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

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

export interface ProcessSupervisorOptions {
  /** Backend factories, called on each spawn (so node-pty is only loaded when a PTY is asked for). */
  readonly backends: { readonly tty: () => ProcessBackend; readonly pipes: () => ProcessBackend };
  /** Read at each spawn: `retainedOutputBytes` sizes that process's output buffer. */
  readonly limits?: () => Pick<Limits, 'retainedOutputBytes'>;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly settings?: Partial<SupervisorSettings>;
  /** What workspace_info reports as the owner of a process's lifetime (read each time it is asked). */
  readonly lifetime?: string | (() => string);
  /** Redacts credentials from output an agent reads (read_process); none when absent. */
  readonly redactor?: SecretRedactor;
}

interface ProcessRecord {
  readonly id: string;
  readonly workspaceId: string;
  /** Set when it runs in a work's worktree: it occupies that worktree, not the folder. */
  readonly workId?: string;
  readonly command: readonly string[];
  readonly cwd: string;
  readonly tty: boolean;
  readonly occupancy: Occupancy;
  readonly startedAt: number;
  readonly buffer: RingBuffer;
  readonly waiters: Set<() => void>;
  readonly subscriptions: Disposable[];
  /** Resolves when the record reaches `exited`. */
  readonly exited: Promise<void>;
  markExited: () => void;
  phase: 'starting' | 'running' | 'exited';
  handle?: ProcessHandle;
  /** Resolves when spawn has settled (handle set, or the record dropped). */
  ready: Promise<void>;
  requested?: EndReason;
  termination?: Termination;
  exitCode?: number;
  signal?: string;
  endedAt?: number;
  /** False when the backend could not collect the output to its end. */
  outputComplete?: boolean;
  /** Pipes: write_stdin eof closed stdin. */
  inputClosed?: boolean;
  timer?: ReturnType<typeof setTimeout>;
  stopping?: Promise<void>;
}

const decoder = new TextDecoder('utf-8');

function newProcessId(): string {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return 'p_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const v = value === undefined || !Number.isFinite(value) ? fallback : Math.floor(value);
  return Math.min(max, Math.max(min, v));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
  });
}

/**
 * Runs agents' commands. Owns every process of the window: spawning through a backend (PTY or pipes), output
 * retention in a bounded ring buffer per process, long-poll reads, status, input, resize, termination,
 * operator timeouts, workspace occupancy, and the scrubbing of our secrets from children's environments.
 * No vscode here: the UI mirrors processes through the `onDid*` events.
 */
export class ProcessSupervisor implements Disposable {
  private readonly records = new Map<string, ProcessRecord>();
  private readonly secrets = new SecretSet();
  /** Set by awaitSecrets until its secrets are registered. */
  private secretsPending: Promise<void> | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly settings: SupervisorSettings;
  private readonly didStart: Listeners<[ProcessInfo]>;
  private readonly didOutput: Listeners<[string, Uint8Array]>;
  private readonly didSkip: Listeners<[string, number]>;
  private readonly didExit: Listeners<[string, ProcessStatus]>;
  private shuttingDown = false;

  constructor(private readonly options: ProcessSupervisorOptions) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.settings = { ...DEFAULT_SUPERVISOR_SETTINGS, ...options.settings };
    const onError = (err: unknown): void => this.logger.error(err instanceof Error ? err : String(err));
    this.didStart = new Listeners(onError);
    this.didOutput = new Listeners(onError);
    this.didSkip = new Listeners(onError);
    this.didExit = new Listeners(onError);
  }

  // ---- events -------------------------------------------------------------------------------------------

  onDidStart(listener: (info: ProcessInfo) => void): Disposable {
    return this.didStart.add(listener);
  }

  /**
   * Raw output bytes as they arrive (a terminal mirror writes them through). The bytes are valid during the call
   * only (see ProcessHandle.onData): a listener that keeps them copies them.
   */
  onDidOutput(listener: (processId: string, bytes: Uint8Array) => void): Disposable {
    return this.didOutput.add(listener);
  }

  /**
   * Output the backend did not deliver (a process host sending a flood at its rate, or behind a congested socket):
   * `bytes` bytes between the output before and after, which the buffer counts as lost.
   */
  onDidSkip(listener: (processId: string, bytes: number) => void): Disposable {
    return this.didSkip.add(listener);
  }

  onDidExit(listener: (processId: string, status: ProcessStatus) => void): Disposable {
    return this.didExit.add(listener);
  }

  // ---- secrets ------------------------------------------------------------------------------------------

  /** Registers a value (a token) that no child may receive in its environment. Dispose to unregister. */
  /** The secrets registered with addSecret (this extension's tokens), for the output redactor. */
  secretValues(): Iterable<string> {
    return this.secrets.values();
  }

  addSecret(value: string): Disposable {
    return this.secrets.add(value);
  }

  /**
   * Makes `exec` and `read` wait until `known` settles: the secrets (addSecret) are still being loaded, and no child
   * may get one in its environment, nor an agent read one in output, before it is known to scrub or redact.
   */
  awaitSecrets(known: Promise<unknown>): void {
    const settled = known.then(
      () => undefined,
      () => undefined,
    );
    this.secretsPending = settled;
    void settled.then(() => {
      if (this.secretsPending === settled) this.secretsPending = undefined;
    });
  }

  // ---- spawning -----------------------------------------------------------------------------------------

  /**
   * Starts `command` (argv; no shell) in `workspace`. Exclusive processes (the default) occupy the workspace
   * while they run: a second exclusive exec there gets WORKSPACE_BUSY. Shared ones neither block nor wait.
   */
  async exec(workspace: Workspace, command: readonly string[], options: ExecOptions): Promise<ExecResult> {
    if (this.secretsPending) await this.secretsPending;
    if (this.shuttingDown) {
      throw new ToolError('EXEC_DISABLED', 'CodeSpace is shutting down: no process may start.', {
        hint: 'Retry once VS Code has reloaded the window.',
      });
    }
    if (!workspace.canExec) {
      throw new ToolError('EXEC_DISABLED', `Workspace ${workspace.id} does not allow commands (profile ${workspace.profile}${workspace.trusted ? '' : ', Restricted Mode'}).`, {
        hint: workspace.trusted ? 'Ask the developer to set codespace.profile to "exec".' : 'Ask the developer to trust the workspace.',
        details: { workspace_id: workspace.id, profile: workspace.profile, trusted: workspace.trusted },
      });
    }
    if (command.length === 0 || command.some((a) => typeof a !== 'string' || a.includes('\0')) || command[0] === '') {
      throw new RangeError('command must be a non-empty array of strings without NUL bytes, with a non-empty program name.');
    }
    this.prune();
    const occupancy = options.occupancy ?? 'exclusive';
    if (occupancy === 'exclusive') {
      const occupant = this.occupant(workspace.id, workspace.work_id);
      if (occupant) throw this.busy(workspace.id, occupant);
    }
    const tty = options.tty ?? false;

    let backend: ProcessBackend;
    try {
      backend = tty ? this.options.backends.tty() : this.options.backends.pipes();
    } catch (err) {
      throw this.spawnFailure(err, command, tty);
    }

    let id = newProcessId();
    while (this.records.has(id)) id = newProcessId();
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const capacity = this.options.limits?.().retainedOutputBytes ?? DEFAULT_RING_CAPACITY;
    const rec: ProcessRecord = {
      id,
      workspaceId: workspace.id,
      ...(workspace.work_id !== undefined ? { workId: workspace.work_id } : {}),
      command: [...command],
      cwd: options.cwd,
      tty,
      occupancy,
      startedAt: this.clock.now(),
      buffer: new RingBuffer(capacity),
      waiters: new Set(),
      subscriptions: [],
      exited,
      markExited,
      phase: 'starting',
      ready,
    };
    // Registered before the first await so that a concurrent exclusive exec sees the workspace occupied.
    this.records.set(id, rec);

    const { env, removed } = scrubEnvironment(options.env, this.secrets);
    if (removed.length > 0) this.logger.debug(`process ${id}: ${removed.length} environment variable(s) withheld: ${removed.join(', ')}`);

    const timeoutMs = options.timeoutMs ?? 0;
    const timed = timeoutMs > 0 && Number.isFinite(timeoutMs);
    const record: SpawnRecord = {
      process_id: id,
      workspace_id: workspace.id,
      ...(workspace.work_id !== undefined ? { work_id: workspace.work_id } : {}),
      command: rec.command,
      cwd: options.cwd,
      occupancy,
      started_at: rec.startedAt,
      capacity,
      ...(timed ? { deadline: rec.startedAt + timeoutMs } : {}),
    };
    let handle: ProcessHandle;
    try {
      handle = await backend.spawn({
        file: command[0] as string,
        args: command.slice(1),
        cwd: options.cwd,
        ...(options.root !== undefined ? { root: options.root } : {}),
        env,
        tty,
        rows: PTY_ROWS,
        cols: PTY_COLS,
        record,
      });
    } catch (err) {
      this.records.delete(id);
      markReady();
      throw this.spawnFailure(err, command, tty, options.cwd);
    }
    rec.handle = handle;
    rec.phase = 'running';
    markReady();
    this.logger.info(`process ${id} started (pid ${handle.pid}, ${tty ? 'pty' : 'pipes'}, ${occupancy}) in ${workspace.id}: ${JSON.stringify(command)}`);

    this.didStart.fire(this.infoOf(rec));
    this.follow(rec, handle);

    if (rec.phase === 'running' && timed) {
      rec.timer = setTimeout(() => this.expire(rec), timeoutMs);
      rec.timer.unref?.();
    }
    if (this.shuttingDown && rec.phase === 'running') {
      rec.requested ??= 'terminated';
      void this.stop(rec);
    }
    return { process_id: id, dispatch_status: 'confirmed' };
  }

  /**
   * Takes over a process an earlier extension host started (a backend that outlived it hands it back, see
   * SpawnOptions.record): same id, occupancy, start time and operator deadline, and its output at the same
   * absolute offsets, so an agent's cursor stays valid. Announced through onDidStart like a new process.
   */
  adopt(p: AdoptedProcess): void {
    const r = p.record;
    if (this.records.has(r.process_id)) throw new Error(`Process ${r.process_id} is already supervised.`);
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const buffer = new RingBuffer(r.capacity);
    buffer.resumeAt(p.retainedFrom);
    const rec: ProcessRecord = {
      id: r.process_id,
      workspaceId: r.workspace_id,
      ...(r.work_id !== undefined ? { workId: r.work_id } : {}),
      command: [...r.command],
      cwd: r.cwd,
      tty: p.handle.tty,
      occupancy: r.occupancy,
      startedAt: r.started_at,
      buffer,
      waiters: new Set(),
      subscriptions: [],
      exited,
      markExited,
      phase: 'running',
      ready: Promise.resolve(),
      handle: p.handle,
      ...(p.requested ? { requested: p.requested } : {}),
      ...(p.inputClosed ? { inputClosed: true } : {}),
    };
    this.records.set(rec.id, rec);
    this.logger.info(`process ${rec.id} taken over (pid ${p.handle.pid}, ${rec.tty ? 'pty' : 'pipes'}, ${rec.occupancy}) in ${rec.workspaceId}: ${JSON.stringify(rec.command)}`);
    this.didStart.fire(this.infoOf(rec));
    this.follow(rec, p.handle);
    if (rec.phase === 'running' && r.deadline !== undefined) {
      rec.timer = setTimeout(() => this.expire(rec), Math.max(0, r.deadline - this.clock.now()));
      rec.timer.unref?.();
    }
  }

  // ---- queries ------------------------------------------------------------------------------------------

  /**
   * The live exclusive process occupying `workspaceId` (with `workId`: that work's worktree of it), if any. A work's
   * worktree and the folder itself, and two works' worktrees, occupy apart.
   */
  occupant(workspaceId: string, workId?: string): Occupant | undefined {
    for (const rec of this.records.values()) {
      if (rec.workspaceId === workspaceId && rec.workId === workId && rec.occupancy === 'exclusive' && rec.phase !== 'exited') {
        return { process_id: rec.id, command: rec.command };
      }
    }
    return undefined;
  }

  status(processId: string): ProcessStatus {
    return this.statusOf(this.lookup(processId));
  }

  info(processId: string): ProcessInfo {
    return this.infoOf(this.lookup(processId));
  }

  /** Every process still known (running, or exited and not yet forgotten), oldest first. */
  list(): ProcessStatus[] {
    this.prune();
    return [...this.records.values()].filter((r) => r.phase !== 'starting').map((r) => this.statusOf(r));
  }

  outputStats(processId: string): OutputStats {
    const b = this.lookup(processId).buffer;
    return { end: b.end, retained_from: b.retainedFrom, retained: b.size, allocated: b.allocated, capacity: b.capacity };
  }

  /** The retained output as bytes with the cursor just past it: what a terminal opened late replays. */
  retainedOutput(processId: string): { bytes: Uint8Array; cursor: number } {
    const b = this.lookup(processId).buffer;
    const r = b.read(b.retainedFrom, b.capacity, { final: true });
    return { bytes: r.chunk, cursor: r.cursor };
  }

  capabilities(): ProcessCapabilities {
    const probe = (factory: () => ProcessBackend): boolean => {
      try {
        return factory().available();
      } catch {
        return false;
      }
    };
    const pty = probe(this.options.backends.tty);
    const pipes = probe(this.options.backends.pipes);
    let ptyOrigin: BackendOrigin | undefined;
    try {
      ptyOrigin = this.options.backends.tty().origin?.();
    } catch {
      ptyOrigin = undefined;
    }
    return { available: !this.shuttingDown && (pty || pipes), pty, resize: pty, lifetime: (typeof this.options.lifetime === 'function' ? this.options.lifetime() : this.options.lifetime) ?? 'vscode-window', ...(ptyOrigin ? { ptyOrigin } : {}) };
  }

  /**
   * Output from `cursor`. Returns at once when there is output past the cursor, when the process has ended,
   * or when the cursor fell out of the retained window; otherwise waits up to `waitMs` (capped) for either.
   * `eof` is true only once the process has exited and the cursor is at the end of its output.
   */
  async read(processId: string, cursor: number, maxBytes?: number, waitMs?: number, signal?: AbortSignal): Promise<ProcessRead> {
    const rec = this.lookup(processId);
    if (this.secretsPending) await this.secretsPending;
    const max = clampInt(maxBytes, this.settings.defaultReadBytes, 1, this.settings.maxReadBytes);
    const wait = clampInt(waitMs, 0, 0, this.settings.maxWaitMs);
    const deadline = performance.now() + wait;
    let waited = false;
    for (;;) {
      const result = this.readNow(rec, cursor, max);
      if (result.chunk !== '' || result.eof || result.output_lost) {
        return waited && !result.eof && !result.output_lost ? this.gather(rec, cursor, max, deadline, signal, result) : result;
      }
      const left = deadline - performance.now();
      if (left <= 0 || signal?.aborted) return result;
      await this.changed(rec, left, signal);
      waited = true;
    }
  }

  /**
   * A long-poll woken by new output lets a little more arrive before answering, so a fast producer reaches the
   * agent in large chunks rather than one 4 KiB read per call. It stops at a quarter of the ring (well before
   * older output would be dropped), at `max`, at the exit, after `coalesceMs`, or at the caller's deadline.
   */
  private async gather(rec: ProcessRecord, cursor: number, max: number, deadline: number, signal: AbortSignal | undefined, first: ProcessRead): Promise<ProcessRead> {
    const enough = Math.min(max, Math.floor(rec.buffer.capacity / 4));
    const until = Math.min(deadline, performance.now() + this.settings.coalesceMs);
    let gathered = false;
    while (rec.buffer.end - cursor < enough && rec.phase !== 'exited' && !signal?.aborted) {
      const left = until - performance.now();
      if (left <= 0) break;
      await this.changed(rec, left, signal);
      gathered = true;
    }
    return gathered ? this.readNow(rec, cursor, max) : first;
  }

  // ---- control ------------------------------------------------------------------------------------------

  /**
   * Sends `data` to the process's input, then, with `eof`, ends the input (see ProcessHandle.endInput): on pipes
   * stdin is closed and later writes fail with InvalidArgumentsError ("stdin is closed"); on a PTY the
   * end-of-file character is sent and the terminal stays writable. Returns the number of data bytes written.
   */
  async write(processId: string, data: string, options: { eof?: boolean } = {}): Promise<number> {
    const rec = this.lookup(processId);
    await rec.ready;
    const what = options.eof ? 'close its input' : 'write to its input';
    const handle = this.liveHandle(rec, what);
    if (rec.inputClosed) {
      throw new InvalidArgumentsError(`The stdin of process ${rec.id} is closed (write_stdin with eof: true closed it): nothing more can be written.`);
    }
    try {
      if (data !== '') handle.write(data);
      if (options.eof) {
        handle.endInput();
        if (!rec.tty) rec.inputClosed = true;
      }
    } catch (err) {
      if (rec.phase === 'exited') throw this.exitedError(rec, what);
      throw new ToolError('PROCESS_EXITED', `Process ${rec.id} no longer accepts input (its input is closed).`, {
        hint: 'Check process_status; the program may have closed its standard input or be exiting.',
        details: { process_id: rec.id },
        cause: err,
      });
    }
    return new TextEncoder().encode(data).length;
  }

  async resize(processId: string, rows: number, cols: number): Promise<void> {
    for (const [name, v] of [['rows', rows], ['cols', cols]] as const) {
      if (!Number.isInteger(v) || v < 1 || v > MAX_TERMINAL_DIMENSION) throw new RangeError(`${name} must be an integer from 1 to ${MAX_TERMINAL_DIMENSION}, got ${v}.`);
    }
    const rec = this.lookup(processId);
    if (!rec.tty) {
      throw new ToolError('NOT_A_TTY', `Process ${rec.id} runs on pipes, not a terminal: it has no size.`, {
        hint: 'Only processes started with "tty": true can be resized.',
        details: { process_id: rec.id },
      });
    }
    await rec.ready;
    const handle = this.liveHandle(rec, 'resize its terminal');
    handle.resize(rows, cols);
  }

  /**
   * Ends the process and all its descendants (SIGTERM, then SIGKILL after the backend's grace period) and
   * resolves with its final status. Terminating an exited process just returns its status.
   */
  async terminate(processId: string): Promise<ProcessStatus> {
    const rec = this.lookup(processId);
    if (rec.phase !== 'exited') {
      rec.requested ??= 'terminated';
      await this.stop(rec);
    }
    return this.statusOf(rec);
  }

  /**
   * Terminates every live process (deactivation); no new process starts afterwards. Processes `keep` names are
   * let go instead (their backend outlives the extension host and hands them back later, see `adopt`): no
   * signal, no exit recorded, only this supervisor stops following them.
   */
  async disposeAll(options: { keep?: (processId: string) => boolean } = {}): Promise<void> {
    this.shuttingDown = true;
    for (const rec of this.records.values()) {
      if (rec.phase === 'exited' || !options.keep?.(rec.id)) continue;
      if (rec.timer) clearTimeout(rec.timer);
      for (const sub of rec.subscriptions.splice(0)) sub.dispose();
      this.records.delete(rec.id);
    }
    const live = [...this.records.values()].filter((r) => r.phase !== 'exited');
    await Promise.all(
      live.map((rec) => {
        rec.requested ??= 'terminated';
        return this.stop(rec);
      }),
    );
  }

  /**
   * Synchronous last resort (extension host going away): SIGKILL to every live process group, no grace.
   * Prefer `disposeAll()` when there is time to wait.
   */
  dispose(): void {
    this.shuttingDown = true;
    for (const rec of this.records.values()) {
      if (rec.phase === 'exited') continue;
      rec.requested ??= 'terminated';
      if (rec.timer) clearTimeout(rec.timer);
      try {
        rec.handle?.kill('SIGKILL');
      } catch (err) {
        this.logger.warn(`process ${rec.id}: kill failed: ${String(err)}`);
      }
    }
    this.didStart.clear();
    this.didOutput.clear();
    this.didSkip.clear();
    this.didExit.clear();
  }

  // ---- internals ----------------------------------------------------------------------------------------

  private lookup(processId: string): ProcessRecord {
    this.prune();
    const rec = this.records.get(processId);
    if (!rec) {
      const minutes = Math.round(this.settings.exitedTtlMs / 60_000);
      throw new ToolError('PROCESS_NOT_FOUND', `No process with id ${JSON.stringify(processId)}.`, {
        hint: `Use the process_id returned by exec_command. Exited processes are forgotten after ${minutes} minute(s) or once ${this.settings.maxExited} newer ones have exited, and one that ended before a window reload is forgotten (process_status still answers from the command log). Do not start a duplicate command without checking the workspace first.`,
        details: { process_id: processId },
      });
    }
    return rec;
  }

  private liveHandle(rec: ProcessRecord, what: string): ProcessHandle {
    if (rec.phase === 'exited' || !rec.handle) throw this.exitedError(rec, what);
    return rec.handle;
  }

  private exitedError(rec: ProcessRecord, what: string): ToolError {
    return new ToolError('PROCESS_EXITED', `Process ${rec.id} has exited: cannot ${what}.`, {
      hint: 'Read its remaining output with read_process and its end with process_status.',
      details: { process_id: rec.id, termination: rec.termination ?? 'unknown' },
    });
  }

  private busy(workspaceId: string, occupant: Occupant): ToolError {
    return new ToolError('WORKSPACE_BUSY', `Workspace ${workspaceId} is occupied by process ${occupant.process_id} (${JSON.stringify(occupant.command)}).`, {
      hint: 'Wait for it to finish (read_process with wait_ms, then process_status) or stop it with terminate_process; avoid a tight retry loop. A long-lived server or watcher can be started with occupancy "shared".',
      details: { workspace_id: workspaceId, occupant: { process_id: occupant.process_id, command: [...occupant.command] } },
    });
  }

  private spawnFailure(err: unknown, command: readonly string[], tty: boolean, cwd?: string): ToolError | InvalidArgumentsError {
    if (ToolError.is(err) || err instanceof InvalidArgumentsError) return err;
    const program = command[0] ?? '';
    if (SpawnError.is(err)) {
      switch (err.reason) {
        case 'not_found':
          return new ToolError('NOT_FOUND', `Command not found: ${JSON.stringify(program)}.`, {
            hint: 'The command runs without a shell: give a program on PATH or a path relative to cwd. For shell syntax, run ["sh", "-c", "..."] explicitly.',
            details: { command: [...command] },
          });
        case 'not_executable':
          return new ToolError('NOT_FOUND', `${JSON.stringify(program)} exists but is not an executable program.`, {
            hint: 'Run it through its interpreter (for example ["sh", "script.sh"] or ["node", "script.js"]), or make it executable.',
            details: { command: [...command] },
          });
        case 'too_large':
          return new InvalidArgumentsError(err.message);
        case 'outside':
          return new ToolError('PATH_OUTSIDE_WORKSPACE', 'The working directory lies outside the workspace (it was replaced by a symbolic link to somewhere else).', {
            hint: 'Pass cwd as a folder inside the workspace.',
            details: cwd === undefined ? {} : { cwd },
          });
        case 'bad_cwd':
          return new ToolError('NOT_FOUND', 'The working directory does not exist or is not a folder.', {
            hint: 'Pass cwd as an existing folder relative to the workspace root, or omit it for the root.',
            details: cwd === undefined ? {} : { cwd },
          });
        case 'unavailable':
          return new ToolError('EXEC_DISABLED', tty ? 'Terminal (PTY) processes are unavailable in this VS Code: the terminal backend could not be loaded.' : 'Processes are unavailable in this VS Code.', {
            hint: tty ? 'Run the command without "tty": true.' : 'Ask the developer to check the CodeSpace log.',
            details: { tty },
          });
        case 'isolation':
          return new ToolError('EXEC_DISABLED', err.message, {
            hint: 'Ask the developer: the command sandbox (codespace.exec.isolation) cannot run commands here; the CodeSpace log and workspace_info say why.',
            details: { command: [...command], isolation: true },
          });
        case 'failed':
          break;
      }
    }
    this.logger.error(err instanceof Error ? err : String(err));
    return new ToolError('INTERNAL', `The process could not be started: ${describeError(err)}`, {
      hint: 'Check the command and arguments; the CodeSpace log has details.',
      details: { command: [...command] },
    });
  }

  private readNow(rec: ProcessRecord, cursor: number, maxBytes: number): ProcessRead {
    const final = rec.phase === 'exited';
    const r = readRedacted(rec.buffer, cursor, maxBytes, final, this.options.redactor);
    return {
      chunk: decoder.decode(r.chunk),
      cursor: r.cursor,
      eof: final && r.cursor >= rec.buffer.end,
      output_lost: r.output_lost,
      retained_from: r.retained_from,
      ...(r.lost ? { lost: r.lost } : {}),
      ...(final && rec.outputComplete === false ? { output_complete: false as const } : {}),
    };
  }

  private changed(rec: ProcessRecord, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        rec.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      rec.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(rec: ProcessRecord): void {
    for (const waiter of [...rec.waiters]) waiter();
  }

  /** Follows a process's output (with the skips of a backend that had to drop some, first) and its exit. */
  private follow(rec: ProcessRecord, handle: ProcessHandle): void {
    const skips = handle.onSkip?.((bytes) => {
      rec.buffer.skip(bytes);
      this.wake(rec);
      this.didSkip.fire(rec.id, bytes);
    });
    if (skips) rec.subscriptions.push(skips);
    rec.subscriptions.push(handle.onData((bytes) => this.received(rec, bytes)));
    rec.subscriptions.push(handle.onExit((info) => this.ended(rec, info)));
  }

  private received(rec: ProcessRecord, bytes: Uint8Array): void {
    rec.buffer.write(bytes);
    this.wake(rec);
    this.didOutput.fire(rec.id, bytes);
  }

  private ended(rec: ProcessRecord, info: ExitInfo): void {
    if (rec.phase === 'exited') return;
    this.finish(rec, info);
  }

  private finish(rec: ProcessRecord, info: ExitInfo): void {
    if (rec.timer) clearTimeout(rec.timer);
    rec.phase = 'exited';
    rec.endedAt = this.clock.now();
    // The backend's reason counts too: a process host's deadline may fire before this supervisor's timer.
    rec.requested ??= info.requested;
    const end = endOutcome(info, rec.requested);
    if (end.signal !== undefined) rec.signal = end.signal;
    rec.termination = end.termination;
    if (end.exit_code !== undefined) rec.exitCode = end.exit_code;
    rec.outputComplete = info.outputComplete !== false;
    for (const sub of rec.subscriptions.splice(0)) sub.dispose();
    rec.markExited();
    this.wake(rec);
    const status = this.statusOf(rec);
    this.logger.info(`process ${rec.id} ended: ${status.termination}${status.exit_code !== undefined ? ` (exit code ${status.exit_code})` : ''}${status.signal ? ` (${status.signal})` : ''}`);
    this.didExit.fire(rec.id, status);
    this.prune();
  }

  private expire(rec: ProcessRecord): void {
    if (rec.phase === 'exited') return;
    rec.requested ??= 'timeout';
    this.logger.info(`process ${rec.id} reached the operator timeout; terminating`);
    void this.stop(rec);
  }

  /** Terminates once, however many callers ask; resolves when the record has ended. */
  private stop(rec: ProcessRecord): Promise<void> {
    rec.stopping ??= (async () => {
      await rec.ready;
      if (rec.timer) clearTimeout(rec.timer);
      if (rec.phase === 'exited' || !rec.handle) return;
      try {
        await rec.handle.terminate(rec.requested);
      } catch (err) {
        this.logger.warn(`process ${rec.id}: terminate failed: ${String(err)}`);
      }
      await Promise.race([rec.exited, sleep(this.settings.exitReportMs)]);
      // The exit listener may have run meanwhile: re-read the phase.
      if ((rec.phase as ProcessRecord['phase']) !== 'exited') {
        this.logger.warn(`process ${rec.id}: no exit report after terminate; recording it as ended`);
        this.finish(rec, { outputComplete: false });
      }
    })();
    return rec.stopping;
  }

  /** Forgets exited processes past the time or count bound. */
  private prune(): void {
    const now = this.clock.now();
    const done: ProcessRecord[] = [];
    for (const rec of this.records.values()) {
      if (rec.phase !== 'exited') continue;
      if (now - (rec.endedAt ?? now) > this.settings.exitedTtlMs) this.records.delete(rec.id);
      else done.push(rec);
    }
    if (done.length > this.settings.maxExited) {
      done.sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
      for (const rec of done.slice(0, done.length - this.settings.maxExited)) this.records.delete(rec.id);
    }
  }

  private infoOf(rec: ProcessRecord): ProcessInfo {
    return {
      process_id: rec.id,
      workspace_id: rec.workspaceId,
      command: [...rec.command],
      cwd: rec.cwd,
      tty: rec.tty,
      occupancy: rec.occupancy,
      started_at: new Date(rec.startedAt).toISOString(),
      pid: rec.handle?.pid ?? 0,
    };
  }

  private statusOf(rec: ProcessRecord): ProcessStatus {
    const exited = rec.phase === 'exited';
    return {
      process_id: rec.id,
      workspace_id: rec.workspaceId,
      state: exited ? 'exited' : 'running',
      ...(exited ? { termination: rec.termination ?? 'unknown' } : {}),
      ...(exited && rec.exitCode !== undefined ? { exit_code: rec.exitCode } : {}),
      ...(rec.signal !== undefined ? { signal: rec.signal } : {}),
      started_at: new Date(rec.startedAt).toISOString(),
      ...(rec.endedAt !== undefined ? { ended_at: new Date(rec.endedAt).toISOString() } : {}),
      command: [...rec.command],
      tty: rec.tty,
      occupancy: rec.occupancy,
      ...(exited ? { output_complete: rec.outputComplete !== false } : {}),
    };
  }
}
