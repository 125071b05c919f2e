import type { Disposable } from '../../../base/disposable';
import { disposeAll } from '../../../base/disposable';
import { asError } from '../../../base/describeError';
import { Emitter } from '../../../base/emitter';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Workspace } from '../../../kernel/workspaces';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import type { ExitInfo, ProcessHandle } from './processBackend';
import { SecretSet } from './environment';
import { OutputReader } from './outputReader';
import { capabilitiesOf } from './processCapabilities';
import { busyError, execRefusal, exitedError } from './processErrors';
import type { ProcessRecord } from './processRecord';
import { infoOf, markEnded, statusOf, unfollow, wake } from './processRecord';
import { ProcessRecords } from './processRecords';
import type { AdoptedProcess, ExecOptions, ExecResult, Occupant, OutputStats, ProcessCapabilities, ProcessInfo, ProcessRead, ProcessStatus } from './processTypes';
import { MAX_TERMINAL_DIMENSION } from './processTypes';
import { ProcessSpawner } from './spawner';
import type { Clock, ProcessSupervisorOptions, SupervisorSettings } from './supervisorSettings';
import { DEFAULT_SUPERVISOR_SETTINGS, systemClock } from './supervisorSettings';

// The shapes of the process service, where its callers have always found them.
export * from './processTypes';
export * from './supervisorSettings';

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
  private readonly records: ProcessRecords;
  private readonly spawner: ProcessSpawner;
  private readonly secrets = new SecretSet();
  /** Set by awaitSecrets until its secrets are registered. */
  private secretsPending: Promise<void> | undefined;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly settings: SupervisorSettings;
  private readonly reader: OutputReader;
  private readonly didStart: Emitter<ProcessInfo>;
  private readonly didOutput: Emitter<readonly [string, Uint8Array]>;
  private readonly didSkip: Emitter<readonly [string, number]>;
  private readonly didExit: Emitter<readonly [string, ProcessStatus]>;
  private shuttingDown = false;

  constructor(private readonly options: ProcessSupervisorOptions) {
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.settings = { ...DEFAULT_SUPERVISOR_SETTINGS, ...options.settings };
    this.reader = new OutputReader(this.settings, options.redactor);
    this.records = new ProcessRecords(this.settings, this.clock);
    this.spawner = new ProcessSpawner(options, this.records, this.secrets, this.logger, this.clock);
    const onError = (err: unknown): void => this.logger.error(asError(err));
    this.didStart = new Emitter(onError);
    this.didOutput = new Emitter(onError);
    this.didSkip = new Emitter(onError);
    this.didExit = new Emitter(onError);
  }

  // ---- events -------------------------------------------------------------------------------------------

  onDidStart(listener: (info: ProcessInfo) => void): Disposable {
    return this.didStart.on((info) => listener(info));
  }

  /**
   * Raw output bytes as they arrive (a terminal mirror writes them through). The bytes are valid during the call
   * only (see ProcessHandle.onData): a listener that keeps them copies them.
   */
  onDidOutput(listener: (processId: string, bytes: Uint8Array) => void): Disposable {
    return this.didOutput.on(([id, bytes]) => listener(id, bytes));
  }

  /**
   * Output the backend did not deliver (a process host sending a flood at its rate, or behind a congested socket):
   * `bytes` bytes between the output before and after, which the buffer counts as lost.
   */
  onDidSkip(listener: (processId: string, bytes: number) => void): Disposable {
    return this.didSkip.on(([id, bytes]) => listener(id, bytes));
  }

  onDidExit(listener: (processId: string, status: ProcessStatus) => void): Disposable {
    return this.didExit.on(([id, status]) => listener(id, status));
  }

  // ---- secrets ------------------------------------------------------------------------------------------

  /** The secrets registered with addSecret (this extension's tokens), for the output redactor. */
  secretValues(): Iterable<string> {
    return this.secrets.values();
  }

  /** Registers a value (a token) that no child may receive in its environment. Dispose to unregister. */
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
    const refusal = execRefusal(workspace, command, this.shuttingDown);
    if (refusal) throw refusal;
    this.records.prune();
    if ((options.occupancy ?? 'exclusive') === 'exclusive') {
      const occupant = this.records.occupant(workspace.id, workspace.work_id);
      if (occupant) throw busyError(workspace.id, occupant);
    }
    const { rec, timeoutMs } = await this.spawner.spawn(workspace, command, options);
    this.start(rec, timeoutMs);
    if (this.shuttingDown && rec.phase === 'running') {
      rec.requested ??= 'terminated';
      void this.stop(rec);
    }
    return { process_id: rec.id, dispatch_status: 'confirmed' };
  }

  /**
   * Takes over a process an earlier extension host started (a backend that outlived it hands it back, see
   * SpawnOptions.record): same id, occupancy, start time and operator deadline, and its output at the same
   * absolute offsets, so an agent's cursor stays valid. Announced through onDidStart like a new process.
   */
  adopt(p: AdoptedProcess): void {
    const { rec, timeoutMs } = this.spawner.adopt(p);
    this.start(rec, timeoutMs);
  }

  /** Announces a running record, follows its handle, and arms its operator timeout (`timeoutMs`) when it has one. */
  private start(rec: ProcessRecord, timeoutMs: number | undefined): void {
    this.didStart.emit(infoOf(rec));
    if (rec.handle) this.follow(rec, rec.handle);
    if (rec.phase === 'running' && timeoutMs !== undefined) {
      rec.timer = setTimeout(() => this.expire(rec), timeoutMs);
      rec.timer.unref?.();
    }
  }

  // ---- queries ------------------------------------------------------------------------------------------

  /**
   * The live exclusive process occupying `workspaceId` (with `workId`: that work's worktree of it), if any. A work's
   * worktree and the folder itself, and two works' worktrees, occupy apart.
   */
  occupant(workspaceId: string, workId?: string): Occupant | undefined {
    return this.records.occupant(workspaceId, workId);
  }

  status(processId: string): ProcessStatus {
    return statusOf(this.records.lookup(processId));
  }

  info(processId: string): ProcessInfo {
    return infoOf(this.records.lookup(processId));
  }

  /** Every process still known (running, or exited and not yet forgotten), oldest first. */
  list(): ProcessStatus[] {
    return this.records.listed().map(statusOf);
  }

  outputStats(processId: string): OutputStats {
    const b = this.records.lookup(processId).buffer;
    return { end: b.end, retained_from: b.retainedFrom, retained: b.size, allocated: b.allocated, capacity: b.capacity };
  }

  /** The retained output as bytes with the cursor just past it: what a terminal opened late replays. */
  retainedOutput(processId: string): { bytes: Uint8Array; cursor: number } {
    const b = this.records.lookup(processId).buffer;
    const r = b.read(b.retainedFrom, b.capacity, { final: true });
    return { bytes: r.chunk, cursor: r.cursor };
  }

  capabilities(): ProcessCapabilities {
    return capabilitiesOf(this.options, this.shuttingDown);
  }

  /**
   * Output from `cursor`. Returns at once when there is output past the cursor, when the process has ended,
   * or when the cursor fell out of the retained window; otherwise waits up to `waitMs` (capped) for either.
   * `eof` is true only once the process has exited and the cursor is at the end of its output.
   */
  async read(processId: string, cursor: number, maxBytes?: number, waitMs?: number, signal?: AbortSignal): Promise<ProcessRead> {
    const rec = this.records.lookup(processId);
    if (this.secretsPending) await this.secretsPending;
    return this.reader.read(rec, cursor, maxBytes, waitMs, signal);
  }

  // ---- control ------------------------------------------------------------------------------------------

  /**
   * Sends `data` to the process's input, then, with `eof`, ends the input (see ProcessHandle.endInput): on pipes
   * stdin is closed and later writes fail with InvalidArgumentsError ("stdin is closed"); on a PTY the
   * end-of-file character is sent and the terminal stays writable. Returns the number of data bytes written.
   */
  async write(processId: string, data: string, options: { eof?: boolean } = {}): Promise<number> {
    const rec = this.records.lookup(processId);
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
      if (rec.phase === 'exited') throw exitedError(rec, what);
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
    const rec = this.records.lookup(processId);
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
    const rec = this.records.lookup(processId);
    if (rec.phase !== 'exited') {
      rec.requested ??= 'terminated';
      await this.stop(rec);
    }
    return statusOf(rec);
  }

  /**
   * Terminates every live process (deactivation); no new process starts afterwards. Processes `keep` names are
   * let go instead (their backend outlives the extension host and hands them back later, see `adopt`): no
   * signal, no exit recorded, only this supervisor stops following them.
   */
  async disposeAll(options: { keep?: (processId: string) => boolean } = {}): Promise<void> {
    this.shuttingDown = true;
    for (const rec of this.records.live()) {
      if (!options.keep?.(rec.id)) continue;
      if (rec.timer) clearTimeout(rec.timer);
      unfollow(rec);
      this.records.delete(rec.id);
    }
    const live = this.records.live();
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
    for (const rec of this.records.live()) {
      rec.requested ??= 'terminated';
      if (rec.timer) clearTimeout(rec.timer);
      try {
        rec.handle?.kill('SIGKILL');
      } catch (err) {
        this.logger.warn(`process ${rec.id}: kill failed: ${String(err)}`);
      }
    }
    disposeAll([this.didStart, this.didOutput, this.didSkip, this.didExit]);
  }

  // ---- internals ----------------------------------------------------------------------------------------

  private liveHandle(rec: ProcessRecord, what: string): ProcessHandle {
    if (rec.phase === 'exited' || !rec.handle) throw exitedError(rec, what);
    return rec.handle;
  }

  /** Follows a process's output (with the skips of a backend that had to drop some, first) and its exit. */
  private follow(rec: ProcessRecord, handle: ProcessHandle): void {
    const skips = handle.onSkip?.((bytes) => {
      rec.buffer.skip(bytes);
      wake(rec);
      this.didSkip.emit([rec.id, bytes]);
    });
    if (skips) rec.subscriptions.push(skips);
    rec.subscriptions.push(handle.onData((bytes) => this.received(rec, bytes)));
    rec.subscriptions.push(handle.onExit((info) => this.ended(rec, info)));
  }

  private received(rec: ProcessRecord, bytes: Uint8Array): void {
    rec.buffer.write(bytes);
    wake(rec);
    this.didOutput.emit([rec.id, bytes]);
  }

  private ended(rec: ProcessRecord, info: ExitInfo): void {
    if (rec.phase === 'exited') return;
    this.finish(rec, info);
  }

  private finish(rec: ProcessRecord, info: ExitInfo): void {
    markEnded(rec, info, this.clock.now());
    const status = statusOf(rec);
    this.logger.info(`process ${rec.id} ended: ${status.termination}${status.exit_code !== undefined ? ` (exit code ${status.exit_code})` : ''}${status.signal ? ` (${status.signal})` : ''}`);
    this.didExit.emit([rec.id, status]);
    this.records.prune();
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
}
