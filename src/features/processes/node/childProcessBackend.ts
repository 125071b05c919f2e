import { spawn as spawnChild } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { Disposable } from '../../../base/disposable';
import type { ExitInfo, ProcessBackend, ProcessHandle, SpawnOptions } from '../common/processBackend';
import { SpawnError } from '../common/processBackend';
import { HandleEvents } from '../common/handleEvents';
import type { OpenedDirectory } from './processTable';
import type { CommandSandbox, SandboxedLaunch } from './sandbox/commandSandbox';
import { checkPathLength, checkSpawnLimits, openWorkingDirectory, resolveExecutable, sendSignal, terminateTree } from './processTable';

export interface ChildProcessBackendOptions {
  /** Time between SIGTERM and SIGKILL when terminating. Default 3 s. */
  readonly graceMs?: number;
  /** When the leader exits on its own, end what it left running in its process group. Default true. */
  readonly sweepOnExit?: boolean;
  /** After the leader exits, how long to wait for its output pipes to drain before reporting the exit. */
  readonly drainMs?: number;
  /** Runs each command in this sandbox when its settings say so (default: none). */
  readonly sandbox?: CommandSandbox;
}

const DEFAULT_GRACE_MS = 3000;
const DEFAULT_DRAIN_MS = 200;

/**
 * Processes on plain pipes through child_process: no shell, stdout and stderr merged in arrival order,
 * stdin piped. `detached: true` makes the child lead its own process group, so the group can be signalled.
 */
export class ChildProcessBackend implements ProcessBackend {
  readonly kind = 'pipes';
  private readonly graceMs: number;
  private readonly sweepOnExit: boolean;
  private readonly drainMs: number;
  private readonly sandbox: CommandSandbox | undefined;

  constructor(options: ChildProcessBackendOptions = {}) {
    this.sandbox = options.sandbox;
    this.graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    this.sweepOnExit = options.sweepOnExit ?? true;
    this.drainMs = options.drainMs ?? DEFAULT_DRAIN_MS;
  }

  available(): boolean {
    return true;
  }

  async spawn(options: SpawnOptions): Promise<ProcessHandle> {
    if (options.tty) throw new SpawnError('failed', 'ChildProcessBackend runs processes on pipes, not terminals.');
    let dir: OpenedDirectory | undefined;
    let launch: SandboxedLaunch | undefined;
    try {
      checkPathLength('The program name', options.file);
      const file = resolveExecutable(options.file, options.cwd, options.env);
      checkSpawnLimits(file, options.args, options.env, options.cwd);
      // Decided before anything is opened: a sandbox that cannot be set up refuses the command (never runs it bare).
      launch = await this.sandbox?.launch({ file, argv0: options.file, args: options.args, cwd: options.cwd, root: options.root, env: options.env, tty: false });
      if (launch) checkSpawnLimits(launch.file, launch.args, options.env, options.cwd);
      dir = await openWorkingDirectory(options.cwd, options.root);
      const child = spawnChild(launch?.file ?? file, launch ? launch.args : [...options.args], {
        cwd: dir.spawnPath,
        env: { ...options.env, PWD: options.cwd },
        argv0: launch ? launch.file : options.file,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
        windowsHide: true,
      });
      // Listen before anything else is awaited: 'spawn' or 'error' follows on the next tick.
      return await new Promise<ProcessHandle>((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException): void => {
          child.off('spawn', onSpawn);
          const reason = err.code === 'ENOENT' ? 'not_found' : err.code === 'EACCES' ? 'not_executable' : err.code === 'E2BIG' || err.code === 'ENAMETOOLONG' ? 'too_large' : 'failed';
          reject(new SpawnError(reason, `Could not start ${options.file}: ${err.message}`, { cause: err }));
        };
        const onSpawn = (): void => {
          child.off('error', onError);
          const handle = new PipeHandle(child, this.graceMs, this.sweepOnExit, this.drainMs);
          const sandboxed = launch;
          launch = undefined;
          // The sandbox's placeholders are given back once the command tree has ended.
          if (sandboxed) handle.onExit(() => sandboxed.release());
          resolve(handle);
        };
        child.once('error', onError);
        child.once('spawn', onSpawn);
      });
    } catch (err) {
      launch?.release();
      if (SpawnError.is(err)) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'E2BIG' || code === 'ENAMETOOLONG') {
        throw new SpawnError('too_large', `Could not start ${options.file}: the command, its environment or a path exceeds a system limit (${code}).`, { cause: err });
      }
      throw new SpawnError('failed', `Could not start ${options.file}: ${String(err)}`, { cause: err });
    } finally {
      // spawn() returns once the child has exec'd (or failed to): the descriptor is no longer needed.
      await dir?.close();
    }
  }
}

class PipeHandle implements ProcessHandle {
  readonly tty = false;
  readonly pid: number;
  private readonly events = new HandleEvents();

  constructor(private readonly child: ChildProcess, private readonly graceMs: number, sweepOnExit: boolean, drainMs: number) {
    this.pid = child.pid as number;
    const forward = (chunk: Buffer): void => this.events.fireData(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    child.stdout?.on('data', forward);
    child.stderr?.on('data', forward);
    // A child that closes its stdin makes our writes fail asynchronously (EPIPE): not a crash.
    child.stdin?.on('error', () => undefined);
    child.on('error', () => undefined);

    // The exit is reported once stdout and stderr have closed (everything written is read), but a background
    // job may hold them open: then after `drainMs` without output the pipes are closed and the exit is reported
    // with `outputComplete: false`, since that job could still have written.
    let exit: ExitInfo | undefined;
    let reported = false;
    let progress = 0;
    const counted = (): void => {
      progress++;
    };
    child.stdout?.on('data', counted);
    child.stderr?.on('data', counted);
    const report = (complete: boolean): void => {
      if (reported || exit === undefined) return;
      reported = true;
      this.events.fireExit(complete ? exit : { ...exit, outputComplete: false });
      if (sweepOnExit) void terminateTree(this.pid, { graceMs: this.graceMs, leaderGone: () => true });
    };
    child.once('exit', (code, signal) => {
      exit = signal ? { signal } : { exitCode: code ?? undefined };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = (): void => {
        const seen = progress;
        timer = setTimeout(() => {
          // Timers run before I/O in a turn of the event loop: let pending reads in before judging.
          setImmediate(() => {
            if (reported) return;
            if (progress !== seen) return arm();
            child.stdout?.destroy();
            child.stderr?.destroy();
            report(false);
          });
        }, drainMs);
      };
      arm();
      child.once('close', () => {
        if (timer) clearTimeout(timer);
        report(true);
      });
    });
  }

  onData(listener: (bytes: Uint8Array) => void): Disposable {
    return this.events.onData(listener);
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    return this.events.onExit(listener);
  }

  write(data: string | Uint8Array): void {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded || this.events.exited) throw new Error('The process input is closed.');
    stdin.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  endInput(): void {
    const stdin = this.child.stdin;
    if (!stdin || stdin.destroyed || stdin.writableEnded || this.events.exited) throw new Error('The process input is closed.');
    stdin.end();
  }

  resize(): void {
    throw new Error('A process on pipes has no terminal to resize.');
  }

  kill(signal: string = 'SIGTERM'): void {
    if (!sendSignal(-this.pid, signal as NodeJS.Signals)) sendSignal(this.pid, signal as NodeJS.Signals);
  }

  terminate(): Promise<void> {
    return terminateTree(this.pid, { graceMs: this.graceMs, leaderGone: () => this.events.exited });
  }
}
