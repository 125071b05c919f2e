import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as NodePty from 'node-pty';
import type { Disposable } from '../../../base/disposable';
import type { ExitInfo, ProcessBackend, ProcessHandle, SpawnOptions } from '../common/processBackend';
import { SpawnError } from '../common/processBackend';
import { HandleEvents } from '../common/handleEvents';
import type { CommandSandbox } from './sandbox/commandSandbox';
import type { BackendOrigin } from '../common/processBackend';
import type { Logger } from '../../../base/logger';
import { describeNodePtyLoad, loadNodePty } from './nodePtyLoader';
import type { NodePtyCandidate, NodePtyLoad, NodePtyModule } from './nodePtyLoader';
import { checkPathLength, checkSpawnLimits, openWorkingDirectory, resolveExecutable, sendSignal, terminateTree } from './processTable';
import { describeError } from '../../../base/describeError';


export interface NodePtyBackendOptions {
  /** Time between SIGTERM and SIGKILL when terminating. Default 3 s. */
  readonly graceMs?: number;
  /**
   * When the leading process exits on its own, end what it left behind in its process group (background
   * jobs), so no orphan outlives its command. Default true.
   */
  readonly sweepOnExit?: boolean;
  /** Loads node-pty; for tests. Default: the first of `candidates` that loads, on first use. */
  readonly load?: () => NodePtyModule;
  /**
   * Folders that may hold node-pty, tried in order on first use (see nodePtyLoader.ts): VS Code's own copy first,
   * then the bundled one. Default: the node-pty this module resolves (a development checkout).
   */
  readonly candidates?: readonly NodePtyCandidate[];
  /** Told once which node-pty loaded, or why none did. */
  readonly logger?: Logger;
  /**
   * After the leading process exits, how long the output may stay silent before the drain gives up and the exit
   * is reported with `outputComplete: false`. Default 2 s.
   */
  readonly drainMs?: number;
  /** Runs each command in this sandbox when its settings say so (default: none). */
  readonly sandbox?: CommandSandbox;
}

export const DEFAULT_GRACE_MS = 3000;
export const DEFAULT_PTY_DRAIN_MS = 2000;

/** node-pty resolved from this module (a development checkout's node_modules); none when it is not there. */
function defaultCandidates(): NodePtyCandidate[] {
  try {
    return [{ source: 'bundled', dir: path.dirname(require.resolve('node-pty/package.json')) }];
  } catch {
    return [];
  }
}

const signalNames = new Map<number, string>(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));

/** Signal number to name (`15` → `SIGTERM`), for reports. */
export function signalName(signal: number): string | number {
  return signalNames.get(signal) ?? signal;
}

/** Processes on a pseudo-terminal through node-pty. The child leads its own session and process group. */
export class NodePtyBackend implements ProcessBackend {
  readonly kind = 'pty';
  private readonly graceMs: number;
  private readonly sweepOnExit: boolean;
  private readonly load: () => NodePtyModule;
  private readonly drainMs: number;
  private readonly sandbox: CommandSandbox | undefined;
  private readonly candidates: readonly NodePtyCandidate[] | undefined;
  private readonly logger: Logger | undefined;
  private loaded: NodePtyLoad | undefined;

  constructor(options: NodePtyBackendOptions = {}) {
    this.sandbox = options.sandbox;
    this.candidates = options.candidates;
    this.logger = options.logger;
    this.drainMs = options.drainMs ?? DEFAULT_PTY_DRAIN_MS;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.sweepOnExit = options.sweepOnExit ?? true;
    this.load = options.load ?? (() => this.loadCandidates());
  }

  /** Which node-pty this backend uses (loading it now if need be), for workspace_info; unknown with a test's `load`. */
  origin(): BackendOrigin | undefined {
    if (this.available() && !this.loaded) return undefined;
    const l = this.loaded;
    if (!l) return undefined;
    if (!l.module) return { source: 'none', reason: describeNodePtyLoad(l) };
    return { source: l.source ?? 'bundled', ...(l.version ? { version: l.version } : {}) };
  }

  private loadCandidates(): NodePtyModule {
    if (!this.loaded) {
      this.loaded = loadNodePty(this.candidates ?? defaultCandidates());
      const line = `[pty] ${describeNodePtyLoad(this.loaded)}`;
      if (this.loaded.module) this.logger?.info(line);
      else this.logger?.warn(line);
    }
    if (this.loaded.module) return this.loaded.module;
    throw new SpawnError('unavailable', describeNodePtyLoad(this.loaded));
  }

  available(): boolean {
    try {
      this.module();
      return true;
    } catch {
      return false;
    }
  }

  /** node-pty, or SpawnError('unavailable') saying why it cannot be used. */
  private module(): NodePtyModule {
    try {
      return this.load();
    } catch (err) {
      if (SpawnError.is(err)) throw err;
      const why = describeError(err);
      throw new SpawnError('unavailable', `node-pty could not be loaded, so terminal (PTY) processes are unavailable: ${why}`, { cause: err });
    }
  }

  async spawn(options: SpawnOptions): Promise<ProcessHandle> {
    if (!options.tty) throw new SpawnError('failed', 'NodePtyBackend only starts terminal (tty) processes.');
    const pty = this.module();
    checkPathLength('The program name', options.file);
    const file = resolveExecutable(options.file, options.cwd, options.env);
    checkSpawnLimits(file, options.args, options.env, options.cwd);
    // Decided before anything is opened: a sandbox that cannot be set up refuses the command (never runs it bare).
    const launch = await this.sandbox?.launch({ file, argv0: options.file, args: options.args, cwd: options.cwd, root: options.root, env: options.env, tty: true });
    let dir: Awaited<ReturnType<typeof openWorkingDirectory>>;
    try {
      if (launch) checkSpawnLimits(launch.file, launch.args, options.env, options.cwd);
      dir = await openWorkingDirectory(options.cwd, options.root);
    } catch (err) {
      launch?.release();
      throw err;
    }
    // node-pty sets the child's PWD to the cwd it was given, here /proc/self/fd/<n>. A shell in between puts
    // the logical path back before it execs the program, when there is one to do it (in the sandbox, bwrap's
    // --chdir sets PWD to the logical path).
    const shim = !launch && dir.spawnPath !== options.cwd && fs.existsSync(SHELL);
    const [spawnFile, spawnArgs] = launch ? [launch.file, launch.args] : shim ? [SHELL, ['-c', PWD_SHIM, 'sh', options.cwd, file, ...options.args]] : [file, [...options.args]];
    let handle: PtyHandle;
    try {
      const term = pty.spawn(spawnFile, spawnArgs, {
        name: options.env.TERM ?? 'xterm-256color',
        cols: options.cols ?? 80,
        rows: options.rows ?? 24,
        cwd: dir.spawnPath,
        env: { ...options.env, PWD: options.cwd },
        encoding: null,
      });
      // In the same tick as the spawn: the handle takes hold of the terminal before the event loop reads it.
      handle = new PtyHandle(term, this.graceMs, this.sweepOnExit, this.drainMs);
      // The sandbox's placeholders are given back once the command tree has ended.
      if (launch) handle.onExit(() => launch.release());
    } catch (err) {
      launch?.release();
      throw new SpawnError('failed', `The terminal process could not be started: ${describeError(err)}`, { cause: err });
    } finally {
      // The forked child holds its own copy of the descriptor until it execs (chdir happens before).
      await dir.close();
    }
    return handle;
  }
}

/** Runs "$2..." with PWD set to "$1" (node-pty overrides PWD with the cwd it was given). */
const SHELL = '/bin/sh';
const PWD_SHIM = 'PWD=$1; export PWD; shift; exec "$@"';

/** The parts of node-pty's UnixTerminal (1.1) the drain below relies on; not in its typings. */
interface UnixTerminalInternals {
  readonly ptsName?: string;
  _emittedClose?: boolean;
  readonly _socket?: NodeJS.ReadableStream & { destroy(): void; on(event: string, listener: (...args: unknown[]) => void): unknown };
  on?(event: 'error', listener: (err: unknown) => void): unknown;
}

/**
 * Output of a PTY, delivered completely before the exit is reported.
 *
 * On Linux, node-pty loses the tail of a fast-exiting command's output (microsoft/node-pty#85, #726): when the
 * child closes its side, the master reports POLLHUP while the kernel still holds output, and libuv, seeing
 * POLLHUP after a short read, takes it for end of file and closes the stream (a PTY hands out at most a few KiB
 * per read, so a short read does not mean the buffer is empty). node-pty also destroys the stream 200 ms after
 * the exit if it has not closed by then, dropping whatever is still unread when the event loop was busy.
 *
 * So this layer (1) opens the terminal's slave side itself right after the spawn, so the master never sees the
 * hang-up and never reports a false end of file, (2) tells node-pty its stream has already closed, so it reports
 * the exit at once and never destroys the stream itself, and (3) once the process has exited, writes a random
 * marker into the slave side: it travels behind everything the process wrote, so when the marker comes out of
 * the master, all of the process's output has been read. The marker is removed from the output. Only then is
 * the exit reported. If the marker does not arrive within the drain bound (the terminal's output was stopped
 * with Ctrl-S, say) the exit is reported with `outputComplete: false`; likewise when the slave could not be
 * opened (no way to prove the end).
 */
class PtyDrain {
  private slave: number | undefined;
  private marker: Buffer | undefined;
  private pendingMarker: Buffer | undefined;
  private held: Buffer | undefined;
  private finished = false;
  private progress = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** Whether the slave could be held and node-pty's own end-of-stream handling switched off. */
  readonly active: boolean;

  constructor(
    private readonly term: NodePty.IPty & UnixTerminalInternals,
    private readonly forward: (bytes: Uint8Array) => void,
    private readonly done: (complete: boolean) => void,
    private readonly drainMs: number,
  ) {
    const socket = term._socket;
    if (process.platform !== 'win32' && typeof term.ptsName === 'string' && socket && typeof socket.destroy === 'function') {
      try {
        // Synchronously after the spawn: the event loop has not read the master yet, so even a child that has
        // already exited has not caused an end of file. Reopening the slave clears the master's hang-up.
        this.slave = fs.openSync(term.ptsName, fs.constants.O_RDWR | fs.constants.O_NOCTTY | fs.constants.O_NONBLOCK);
      } catch {
        this.slave = undefined;
      }
    }
    this.active = this.slave !== undefined;
    if (this.active) {
      term._emittedClose = true;
      // Stream errors (EIO once everything is closed) must not throw out of node-pty's handler.
      term.on?.('error', () => undefined);
      socket?.on('end', () => this.end());
      socket?.on('close', () => this.end());
    }
  }

  data(bytes: Buffer): void {
    this.progress++;
    if (this.finished) return;
    if (!this.marker) {
      this.forward(bytes);
      return;
    }
    const joined = this.held ? Buffer.concat([this.held, bytes]) : bytes;
    this.held = undefined;
    const at = joined.indexOf(this.marker);
    if (at >= 0) {
      if (at > 0) this.forward(joined.subarray(0, at));
      const after = joined.subarray(at + this.marker.length);
      if (after.length > 0) this.forward(after);
      this.finish(true);
      return;
    }
    const keep = Math.min(joined.length, this.marker.length - 1);
    if (joined.length > keep) this.forward(joined.subarray(0, joined.length - keep));
    this.held = Buffer.from(joined.subarray(joined.length - keep));
    this.writeMarker();
  }

  /** The leading process has exited: drain, then call `done`. */
  exited(): void {
    if (!this.active) {
      this.finish(false);
      return;
    }
    this.marker = Buffer.from(`CODESPACE-END-${crypto.randomBytes(12).toString('hex').toUpperCase()}`, 'latin1');
    this.pendingMarker = this.marker;
    this.writeMarker();
    this.arm();
  }

  /** Writes what is left of the marker; a full terminal buffer (EAGAIN) retries once output has been read. */
  private writeMarker(): void {
    if (this.finished || this.slave === undefined || !this.pendingMarker) return;
    try {
      const n = fs.writeSync(this.slave, this.pendingMarker);
      this.pendingMarker = n >= this.pendingMarker.length ? undefined : this.pendingMarker.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
        this.finish(false);
        return;
      }
    }
    if (this.pendingMarker && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.writeMarker();
      }, 5);
    }
  }

  /** The drain bound: no output for `drainMs` (checked after one more poll of the event loop). */
  private arm(): void {
    const seen = this.progress;
    this.timer = setTimeout(() => {
      // Timers run before I/O in a turn of the event loop: let pending reads in before judging.
      setImmediate(() => {
        if (this.finished) return;
        if (this.progress !== seen) this.arm();
        else this.finish(false);
      });
    }, this.drainMs);
  }

  /** The stream ended by itself: only sound before the exit if nothing can be missing, which we cannot tell. */
  private end(): void {
    if (this.finished || !this.marker) return;
    this.finish(false);
  }

  private finish(complete: boolean): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.retry) clearTimeout(this.retry);
    if (this.held && this.held.length > 0) this.forward(this.held);
    this.held = undefined;
    if (this.slave !== undefined) {
      try {
        fs.closeSync(this.slave);
      } catch {
        // already closed
      }
      this.slave = undefined;
      this.term._socket?.destroy();
    }
    this.done(complete);
  }
}

class PtyHandle implements ProcessHandle {
  readonly tty = true;
  readonly pid: number;
  private readonly events = new HandleEvents();
  private readonly subs: Disposable[] = [];
  private readonly drain: PtyDrain;
  private exitInfo: ExitInfo | undefined;
  /** The input typed since the last end of line: Ctrl-D then only hands over that line. */
  private lineOpen = false;

  constructor(private readonly term: NodePty.IPty, private readonly graceMs: number, sweepOnExit: boolean, drainMs: number) {
    this.pid = term.pid;
    this.drain = new PtyDrain(
      term as NodePty.IPty & UnixTerminalInternals,
      (bytes) => this.events.fireData(bytes),
      (complete) => {
        const info = this.exitInfo ?? {};
        for (const s of this.subs.splice(0)) s.dispose();
        this.events.fireExit(complete ? info : { ...info, outputComplete: false });
        if (sweepOnExit) void terminateTree(this.pid, { graceMs: this.graceMs, leaderGone: () => true });
      },
      drainMs,
    );
    // With `encoding: null` node-pty hands out Buffers although its typings say string.
    this.subs.push(term.onData((data: string | Buffer) => this.drain.data(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)));
    this.subs.push(
      term.onExit(({ exitCode, signal }) => {
        this.exitInfo = signal ? { signal: signalName(signal) } : { exitCode };
        this.drain.exited();
      }),
    );
  }

  onData(listener: (bytes: Uint8Array) => void): Disposable {
    return this.events.onData(listener);
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    return this.events.onExit(listener);
  }

  write(data: string | Uint8Array): void {
    if (this.exitInfo || this.events.exited) throw new Error('The terminal has closed.');
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    if (bytes.length === 0) return;
    this.term.write(bytes);
    const last = bytes[bytes.length - 1];
    this.lineOpen = !(last === 0x0a || last === 0x0d || last === VEOF);
  }

  endInput(): void {
    // In canonical mode Ctrl-D ends the read with what was typed; only at the start of a line does the reader
    // see a read of 0 bytes, end of file.
    this.write(this.lineOpen ? EOF_AFTER_TEXT : EOF_AT_LINE_START);
  }

  resize(rows: number, cols: number): void {
    if (this.exitInfo || this.events.exited) throw new Error('The terminal has closed.');
    this.term.resize(cols, rows);
  }

  kill(signal: string = 'SIGTERM'): void {
    // The child called setsid(): its pid is also its process group id.
    if (!sendSignal(-this.pid, signal as NodeJS.Signals)) sendSignal(this.pid, signal as NodeJS.Signals);
  }

  terminate(): Promise<void> {
    return terminateTree(this.pid, { graceMs: this.graceMs, leaderGone: () => this.events.exited });
  }
}

/** The terminal's default end-of-file character (VEOF, Ctrl-D). */
const VEOF = 0x04;
const EOF_AT_LINE_START = Buffer.from([VEOF]);
const EOF_AFTER_TEXT = Buffer.from([VEOF, VEOF]);
