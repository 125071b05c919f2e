import * as net from 'node:net';
import type { Disposable } from '../../../../base/disposable';
import type { Logger } from '../../../../base/logger';
import type { EndReason, ExitInfo, ProcessHandle, SpawnOptions } from '../../common/processBackend';
import { SpawnError } from '../../common/processBackend';
import type { SpawnFailure } from '../../common/processBackend';
import { HandleEvents } from '../../common/handleEvents';
import type { HostedProcess, HostedRecord, IsolationSnapshot, Message } from './protocol';
import { FrameStream, encodeMessage } from './protocol';
import { identify } from '../../../../base/node/processIdentity';

/** Why an attach did not happen: wrong secret (another window's host, or a stale one), busy, closing, or no host there. */
export class AttachError extends Error {
  constructor(readonly reason: 'secret' | 'busy' | 'closing' | 'protocol' | 'unreachable', message: string) {
    super(message);
    this.name = 'AttachError';
  }
}

/** A process the host handed over on attach, ready for the supervisor to take over (ProcessSupervisor.adopt). */
export interface AttachedProcess {
  readonly record: HostedRecord;
  readonly handle: ProcessHandle;
  /** The absolute offset of the first byte the handle's output starts with. */
  readonly retainedFrom: number;
  readonly requested?: EndReason;
  readonly inputClosed: boolean;
}

/** What one read from the host's socket takes at most (the buffer every read reuses). */
const READ_BUFFER_BYTES = 128 * 1024;

const SPAWN_FAILURES: readonly SpawnFailure[] = ['not_found', 'not_executable', 'bad_cwd', 'outside', 'too_large', 'unavailable', 'isolation', 'failed'];

/** One process on the host, seen from the extension: a ProcessHandle whose every call goes over the socket. */
class HostHandle implements ProcessHandle {
  readonly events = new HandleEvents();
  inputClosed: boolean;

  constructor(
    private readonly connection: HostConnection,
    readonly id: string,
    readonly pid: number,
    readonly tty: boolean,
    inputClosed = false,
  ) {
    this.inputClosed = inputClosed;
  }

  onData(listener: (bytes: Uint8Array) => void): Disposable {
    return this.events.onData(listener);
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    return this.events.onExit(listener);
  }

  onSkip(listener: (bytes: number) => void): Disposable {
    return this.events.onSkip(listener);
  }

  private checkInput(): void {
    if (this.events.exited || this.inputClosed || !this.connection.open) throw new Error('The process input is closed.');
  }

  write(data: string | Uint8Array): void {
    this.checkInput();
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    this.connection.send({ t: 'write', id: this.id, data: bytes.toString('base64') });
  }

  endInput(): void {
    this.checkInput();
    if (!this.tty) this.inputClosed = true;
    this.connection.send({ t: 'endInput', id: this.id });
  }

  resize(rows: number, cols: number): void {
    if (!this.tty) throw new Error('A process on pipes has no terminal to resize.');
    this.connection.send({ t: 'resize', id: this.id, rows, cols });
  }

  kill(signal: string = 'SIGTERM'): void {
    this.connection.send({ t: 'kill', id: this.id, signal });
  }

  terminate(reason: EndReason = 'terminated'): Promise<void> {
    return this.connection.request({ t: 'terminate', id: this.id, reason }).then(() => undefined);
  }
}

type Pending = { resolve: (m: Message) => void; reject: (err: Error) => void };

/**
 * An attached connection to a process host. Created by `HostConnection.attach`, which proves the secret and
 * receives the processes the host holds (with their retained output, then their exits, in stream order).
 */
export class HostConnection {
  private readonly handles = new Map<string, HostHandle>();
  private readonly pending = new Map<number, Pending>();
  /** Which process each spawn request is for, so its handle exists before the first output arrives. */
  private readonly spawnRequests = new Map<number, { process_id: string; tty: boolean }>();
  /**
   * Handles made on a `spawned` answer, until spawn() takes them: a process that ends at once has its exit in the
   * same read as the answer, which takes it out of `handles` before spawn() resumes.
   */
  private readonly started = new Map<string, HostHandle>();
  private nextReq = 1;
  private closed = false;
  /** Set when the host handed itself over to a newer extension host of this window. */
  private superseded = false;
  /** Called once when the connection ends without detach() (true: it was superseded). */
  onClosed: ((superseded: boolean) => void) | undefined;
  /**
   * Answers the host's `askWindow` (another extension host of this window wants the host): whether this extension's
   * window answers now. Unset: it does (a local window's extension host ends with its window).
   */
  windowAnswers: ((heartbeat: boolean) => Promise<boolean>) | undefined;
  /** The secret for the next attach (the host rotates it on every attach). */
  readonly nextSecret: string;
  /** The host's pid. */
  readonly hostPid: number;
  readonly processes: readonly AttachedProcess[];

  private constructor(
    private readonly socket: net.Socket,
    private readonly logger: Logger,
    welcome: Extract<Message, { t: 'welcome' }>,
  ) {
    this.nextSecret = welcome.secret;
    this.hostPid = welcome.pid;
    this.processes = welcome.processes.map((p: HostedProcess) => {
      const handle = new HostHandle(this, p.record.process_id, p.pid, p.tty, p.input_closed === true);
      this.handles.set(handle.id, handle);
      return { record: p.record, handle, retainedFrom: p.retained_from, ...(p.requested ? { requested: p.requested } : {}), inputClosed: p.input_closed === true };
    });
  }

  get open(): boolean {
    return !this.closed;
  }

  /** Connects to `socket` and attaches with `secret`. Rejects with AttachError when the host says no or is not there. */
  static attach(socketPath: string, secret: string, logger: Logger): Promise<HostConnection> {
    return new Promise((resolve, reject) => {
      let connection: HostConnection | undefined;
      let settled = false;
      const fail = (err: AttachError): void => {
        if (settled) return;
        settled = true;
        socket.destroy();
        reject(err);
      };
      const stream = new FrameStream({
        message: (m) => {
          if (connection) {
            connection.message(m);
          } else if (m.t === 'welcome') {
            connection = new HostConnection(socket, logger, m);
            settled = true;
            resolve(connection);
          } else if (m.t === 'denied') {
            fail(new AttachError(m.reason, m.message));
          } else {
            fail(new AttachError('protocol', 'The process host answered the attach with something else than a welcome.'));
          }
        },
        data: (id, bytes) => {
          if (connection) connection.data(id, bytes);
          else fail(new AttachError('protocol', 'The process host answered the attach with something else than a welcome.'));
        },
      });
      // Every read lands in this one buffer (no allocation per read, however much output a flood sends); the frame
      // stream hands its data on as views of it, which the listeners copy or decode before the next read.
      const socket = net.connect({
        path: socketPath,
        onread: {
          buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
          callback: (bytes: number, buffer: Uint8Array): boolean => {
            if (socket.destroyed) return false;
            try {
              stream.push(buffer.subarray(0, bytes));
            } catch (err) {
              fail(new AttachError('protocol', `The process host sent a malformed frame: ${String(err)}`));
              socket.destroy();
              connection?.dropped();
              return false;
            }
            return true;
          },
        },
      });
      socket.on('error', (err: NodeJS.ErrnoException) => fail(new AttachError('unreachable', `No process host answers at the socket (${err.code ?? err.message}).`)));
      socket.on('connect', () => {
        const editor = process.ppid > 1 ? identify(process.ppid) : undefined;
        const extensionHost = identify(process.pid);
        socket.write(encodeMessage({ t: 'hello', secret, ...(editor ? { editor } : {}), ...(extensionHost ? { extensionHost } : {}) }));
      });
      socket.on('close', () => {
        fail(new AttachError('unreachable', 'The process host closed the connection before attaching.'));
        connection?.dropped();
      });
    });
  }

  send(message: Message): void {
    if (this.closed) throw new Error('The process host is not connected.');
    this.socket.write(encodeMessage(message));
  }

  /** Sends a message carrying a request number and resolves with the answer to it. */
  request(message: DistributiveOmit<Extract<Message, { req: number }>, 'req'>): Promise<Message> {
    if (this.closed) return Promise.reject(new Error('The process host is not connected.'));
    const req = this.nextReq++;
    if (message.t === 'spawn') this.spawnRequests.set(req, { process_id: message.record.process_id, tty: message.options.tty });
    return new Promise((resolve, reject) => {
      this.pending.set(req, { resolve, reject });
      this.socket.write(encodeMessage({ ...message, req } as Message));
    });
  }

  /** Starts a process on the host. Rejects with SpawnError as the local backends do. */
  async spawn(options: SpawnOptions, record: HostedRecord, isolation: IsolationSnapshot | undefined): Promise<ProcessHandle> {
    let answer: Message;
    try {
      answer = await this.request({
        t: 'spawn',
        options: {
          file: options.file,
          args: [...options.args],
          cwd: options.cwd,
          ...(options.root !== undefined ? { root: options.root } : {}),
          env: options.env,
          tty: options.tty,
          ...(options.rows !== undefined ? { rows: options.rows } : {}),
          ...(options.cols !== undefined ? { cols: options.cols } : {}),
        },
        record,
        ...(isolation ? { isolation } : {}),
      });
    } catch (err) {
      throw new SpawnError('failed', `The process host went away while starting ${options.file}: ${String(err)}`, { cause: err });
    }
    if (answer.t === 'failed') {
      const reason = (SPAWN_FAILURES as readonly string[]).includes(answer.reason) ? (answer.reason as SpawnFailure) : 'failed';
      throw new SpawnError(reason, answer.message);
    }
    if (answer.t !== 'spawned') throw new SpawnError('failed', `The process host answered a spawn with ${answer.t}.`);
    // Registered when the answer is handled (message(), below), before any of the process's output.
    const handle = this.started.get(record.process_id);
    this.started.delete(record.process_id);
    if (!handle) throw new SpawnError('failed', 'The process host started the process but its handle is missing.');
    return handle;
  }

  /** Asks the host to end every process and exit (tests, and a window closed for good). */
  async shutdown(): Promise<void> {
    if (this.closed) return;
    await this.request({ t: 'shutdown' }).catch(() => undefined);
  }

  /**
   * Tells the host whether this extension still has its window (see the `window` message). Lost: a newer
   * extension host of the window may take the host over; live again: it may not.
   */
  windowLive(live: boolean): void {
    if (!this.closed) this.send({ t: 'window', live });
  }

  /** Closes the connection without ending anything: the host keeps the processes for its grace period. */
  detach(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.end();
    this.failPending();
  }

  private failPending(): void {
    for (const p of this.pending.values()) p.reject(new Error('The process host connection closed.'));
    this.pending.clear();
  }

  /** The host went away unexpectedly: its processes are gone with it (it ends them when it exits). */
  dropped(): void {
    const unexpected = !this.closed;
    this.closed = true;
    this.failPending();
    if (!unexpected) return;
    if (!this.superseded) this.logger.warn('[process-host] the connection to the process host was lost');
    this.onClosed?.(this.superseded);
    for (const h of this.handles.values()) h.events.fireExit({ outputComplete: false });
  }

  /** Output of a process: a view valid during the call only (see FrameSink.data); the handle's listeners copy it. */
  private data(id: string, bytes: Uint8Array): void {
    this.handles.get(id)?.events.fireData(bytes);
  }

  private message(m: Message): void {
    switch (m.t) {
      case 'spawned':
      case 'failed':
      case 'done': {
        const p = this.pending.get(m.req);
        if (!p) return;
        this.pending.delete(m.req);
        if (m.t === 'spawned') {
          const spawn = this.spawnRequests.get(m.req);
          if (spawn) {
            const handle = new HostHandle(this, spawn.process_id, m.pid, spawn.tty);
            this.handles.set(spawn.process_id, handle);
            this.started.set(spawn.process_id, handle);
          }
        }
        this.spawnRequests.delete(m.req);
        p.resolve(m);
        return;
      }
      case 'exit': {
        const h = this.handles.get(m.id);
        if (!h) return;
        this.handles.delete(m.id);
        h.events.fireExit({ ...m.exit, ...(m.requested ? { requested: m.requested } : {}) });
        // The extension has the exit now: the host may forget the process.
        if (!this.closed) this.send({ t: 'release', id: m.id });
        return;
      }
      case 'skip':
        this.handles.get(m.id)?.events.fireSkip(m.bytes);
        return;
      case 'superseded':
        // A newer extension host of this window took the host over (this one had lost its window): its processes
        // are that one's now. The socket closes next; dropped() then ends this side's view of them.
        this.superseded = true;
        this.logger.warn(`[process-host] ${m.message}`);
        return;
      case 'askWindow': {
        // The host asks right after an attach, in the same read as the welcome: answered on the next turn of the
        // event loop, once whoever awaited the attach has set windowAnswers (else a lingering extension host
        // without its window would answer with the default, live, and stop the grace).
        setImmediate(() => {
          const ask = this.windowAnswers ?? (() => Promise.resolve(true));
          ask(m.heartbeat === true).then(
            (live) => this.windowLive(live),
            // A check that fails is no proof the window is gone: keep the host.
            () => this.windowLive(true),
          );
        });
        return;
      }
      case 'inputFailed':
        this.logger.warn(`[process-host] process ${m.id}: input failed: ${m.message}`);
        return;
      default:
        this.logger.warn(`[process-host] unexpected message ${JSON.stringify(m.t)}`);
    }
  }

}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
