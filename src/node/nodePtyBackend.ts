import * as os from 'node:os';
import type * as NodePty from 'node-pty';
import type { Disposable } from '../core/disposable';
import type { ExitInfo, ProcessBackend, ProcessHandle, SpawnOptions } from '../core/ports/processBackend';
import { SpawnError } from '../core/ports/processBackend';
import { HandleEvents } from '../core/process/handleEvents';
import { checkCwd, resolveExecutable, sendSignal, terminateTree } from './processTable';

type NodePtyModule = typeof NodePty;

export interface NodePtyBackendOptions {
  /** Time between SIGTERM and SIGKILL when terminating. Default 3 s. */
  readonly graceMs?: number;
  /**
   * When the leading process exits on its own, end what it left behind in its process group (background
   * jobs), so no orphan outlives its command. Default true.
   */
  readonly sweepOnExit?: boolean;
  /** Loads node-pty; for tests. Default: `require('node-pty')`, on first use. */
  readonly load?: () => NodePtyModule;
}

export const DEFAULT_GRACE_MS = 3000;

let cached: { module?: NodePtyModule; error?: unknown } | undefined;

function loadNodePty(): NodePtyModule {
  if (!cached) {
    try {
      // Native module: loaded lazily so that a build without it still runs pipe processes.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      cached = { module: require('node-pty') as NodePtyModule };
    } catch (error) {
      cached = { error };
    }
  }
  if (cached.module) return cached.module;
  const why = cached.error instanceof Error ? cached.error.message : String(cached.error);
  throw new SpawnError('unavailable', `node-pty could not be loaded, so terminal (PTY) processes are unavailable: ${why}`, { cause: cached.error });
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

  constructor(options: NodePtyBackendOptions = {}) {
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.sweepOnExit = options.sweepOnExit ?? true;
    this.load = options.load ?? loadNodePty;
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
      const why = err instanceof Error ? err.message : String(err);
      throw new SpawnError('unavailable', `node-pty could not be loaded, so terminal (PTY) processes are unavailable: ${why}`, { cause: err });
    }
  }

  async spawn(options: SpawnOptions): Promise<ProcessHandle> {
    if (!options.tty) throw new SpawnError('failed', 'NodePtyBackend only starts terminal (tty) processes.');
    const pty = this.module();
    checkCwd(options.cwd);
    const file = resolveExecutable(options.file, options.cwd, options.env);
    let term: NodePty.IPty;
    try {
      term = pty.spawn(file, [...options.args], {
        name: options.env.TERM ?? 'xterm-256color',
        cols: options.cols ?? 80,
        rows: options.rows ?? 24,
        cwd: options.cwd,
        env: { ...options.env },
        encoding: null,
      });
    } catch (err) {
      throw new SpawnError('failed', `The terminal process could not be started: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return new PtyHandle(term, this.graceMs, this.sweepOnExit);
  }
}

class PtyHandle implements ProcessHandle {
  readonly tty = true;
  readonly pid: number;
  private readonly events = new HandleEvents();
  private readonly subs: Disposable[] = [];

  constructor(private readonly term: NodePty.IPty, private readonly graceMs: number, sweepOnExit: boolean) {
    this.pid = term.pid;
    // With `encoding: null` node-pty hands out Buffers although its typings say string.
    this.subs.push(term.onData((data: string | Buffer) => this.events.fireData(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)));
    this.subs.push(
      term.onExit(({ exitCode, signal }) => {
        const info: ExitInfo = signal ? { signal: signalName(signal) } : { exitCode };
        for (const s of this.subs.splice(0)) s.dispose();
        this.events.fireExit(info);
        if (sweepOnExit) void terminateTree(this.pid, { graceMs: this.graceMs, leaderGone: () => true });
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
    if (this.events.exited) throw new Error('The terminal has closed.');
    this.term.write(typeof data === 'string' ? data : Buffer.from(data));
  }

  resize(rows: number, cols: number): void {
    if (this.events.exited) throw new Error('The terminal has closed.');
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
