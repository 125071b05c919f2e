import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import type { EndReason, ExitInfo, ProcessBackend, ProcessHandle } from '../../common/processBackend';
import { SpawnError } from '../../common/processBackend';
import { RingBuffer } from '../../common/ringBuffer';
import { SerialQueue } from '../../../../base/serialQueue';
import type { CommandSandbox } from '../sandbox/commandSandbox';
import { OrphanGuard } from './orphanGuard';
import { recordEnds } from './hostEnds';
import type { HostEntry } from './hostOutput';
import { OutputSender, floodBytes } from './hostOutput';

export { FLOOD_MIN_BYTES, FLOOD_PERIOD_MS, floodBytes } from './hostOutput';
import type { ProcessIdentity } from '../../../../base/node/processIdentity';
import { isSameProcessAlive } from '../../../../base/node/processIdentity';
import { HELLO_MS, editorOf, serveConnection } from './hostConnection';
import type { ProcessHostOptions } from './hostOptions';
import { localBackends } from './hostOptions';
import type { FrameReader, HostedProcess, HostedRecord, IsolationSnapshot, Message, WireSpawn } from './protocol';
import { encodeData, encodeMessage, sameSecret } from './protocol';

export type { ProcessHostOptions } from './hostOptions';
import { describeError } from '../../../../base/describeError';


/** How often the host looks at the processes it follows (see tick). */
const EDITOR_POLL_MS = 1_000;
/**
 * How often the attached extension is asked whether its window answers (see tick). An answer `live` withdraws the
 * grace; `lost`, or no answer within the ask deadline (a hung or lingering extension host), starts it.
 */
export const HEARTBEAT_MS = 10_000;

/**
 * How long a second client that proved the secret waits for the attached one to answer `askWindow`. The extension
 * asks its window with a 5 s deadline (extension.ts, PING_ANSWER_MS); the rest is room for a loaded machine. No
 * answer by then: the attached one keeps the host, and the other is refused as busy.
 */
export const ASK_WINDOW_MS = 15_000;
/**
 * A small process host: runs agents' commands (node-pty and pipes, in the command sandbox when the extension's
 * settings ask for it) outside the extension host, so they outlive a window reload or an extension-host crash.
 * Exactly one client (the window's extension) is attached at a time; it proves a secret that changes on every
 * attach, so only the extension that attached last (and kept the new secret) can attach again. A second client
 * with the secret is refused while the attached one has its window; once the attached one says its window is gone
 * (a remote window's old extension host waits for a reconnection that never comes), the newer client takes over
 * and the old connection is closed. Each process's
 * output is kept in a ring with absolute offsets, and the attach hands it over so reads continue from the
 * same cursor. With no client attached for `graceMs` the host ends every process and exits: it never outlives
 * the window by more than that.
 */
export class ProcessHost {
  private readonly entries = new Map<string, HostEntry>();
  private readonly server: net.Server;
  private client: net.Socket | undefined;
  /** False once the attached extension said its window stopped answering (a `window` message). */
  private clientLive = true;
  /** A client that proved the secret while the attached one had its window: it waits for that one's answer. */
  private contender: { socket: net.Socket; timer: ReturnType<typeof setTimeout> } | undefined;
  private secret: string;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  /** The editor process each connection named in its hello (see `hello` in protocol.ts). */
  private readonly editors = new WeakMap<net.Socket, ProcessIdentity>();
  /** The editor process of the extension attached last: while none is attached, its end ends the wait. */
  private editor: ProcessIdentity | undefined;
  /** The extension host process each connection named in its hello: its end detaches it. */
  private readonly extensionHosts = new WeakMap<net.Socket, ProcessIdentity>();
  private watchTimer: ReturnType<typeof setInterval> | undefined;
  /**
   * Since when no attached extension has shown a live window (at start, after a detach, a `window` lost or a
   * heartbeat not answered); undefined while one has. The grace runs from here: a reconnection does not restart it,
   * only an answer that the window is live ends it.
   */
  private lostSince: number | undefined = Date.now();
  /** When the attached extension last said its window is live, and when the heartbeat asked it (unanswered). */
  private lastLive: number | undefined;
  private asked: number | undefined;
  private lastAsk = 0;
  private closing: Promise<void> | undefined;
  private readonly tty: ProcessBackend;
  private readonly pipes: ProcessBackend;
  private readonly sandbox: CommandSandbox | undefined;
  /** The sandbox settings of the spawn in progress (spawns run one at a time, so it reads the right one). */
  private isolation: IsolationSnapshot | undefined;
  private readonly testHosts = new Map<string, { address: string; port: number }>();
  /** Spawns run one at a time: each reads the sandbox settings (`isolation`) of its own request. */
  private readonly spawns = new SerialQueue();
  private readonly output = new OutputSender(
    () => this.client,
    () => this.entries.values(),
  );
  /** Ends the processes' groups if this host dies without ending them (SIGKILL, a crash). */
  private readonly guard: OrphanGuard;

  constructor(private readonly options: ProcessHostOptions) {
    this.secret = options.secret;
    const backends = localBackends(options, () => this.isolation, this.testHosts);
    this.tty = backends.tty;
    this.pipes = backends.pipes;
    this.sandbox = backends.sandbox;
    this.guard = new OrphanGuard(options.logger);
    this.server = net.createServer((socket) => this.connected(socket));
    this.options.logger.info(`process host ${process.pid} started: grace ${options.graceMs} ms with no live window attached`);
    this.armGrace();
    this.watchTimer = setInterval(() => this.tick(), options.editorPollMs ?? EDITOR_POLL_MS);
    this.watchTimer.unref?.();
  }

  /** Starts listening (the socket file is created with the folder's protection: only this user can connect). */
  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.socket, () => {
        this.server.off('error', reject);
        try {
          fs.chmodSync(this.options.socket, 0o600);
        } catch {
          // The 0700 folder is the protection; the mode is a second fence.
        }
        resolve();
      });
    });
  }

  /** Processes the host holds (tests and the log). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Ends every process, closes the socket and the client, and records how each process ended (`endsFile`); resolves
   * when all is done. Idempotent. `reason` is why a process still running is ended: `window_closed` when no window
   * attached within the grace period, else `terminated` (a shutdown asked for, a signal to the host).
   */
  close(reason: EndReason = 'terminated'): Promise<void> {
    this.closing ??= (async () => {
      if (this.graceTimer) clearTimeout(this.graceTimer);
      if (this.watchTimer) clearInterval(this.watchTimer);
      this.watchTimer = undefined;
      this.settleContender('closing');
      // The socket stays open meanwhile: an extension that comes now is told the host is closing (and waits for
      // the ends to be recorded), rather than finding no host and missing them.
      await Promise.all(
        [...this.entries.values()].map(async (e) => {
          if (e.timer) clearTimeout(e.timer);
          this.output.unpace(e);
          if (e.exit) return;
          e.requested ??= reason;
          try {
            await e.handle.terminate();
          } catch (err) {
            this.options.logger.warn(`process ${e.record.process_id}: terminate failed: ${String(err)}`);
          }
        }),
      );
      if (this.options.endsFile !== undefined) recordEnds(this.options.endsFile, this.entries.values(), this.options.logger);
      this.server.close();
      await this.sandbox?.close();
      this.guard.close();
      this.client?.end();
      this.client = undefined;
      try {
        fs.unlinkSync(this.options.socket);
      } catch {
        // already gone
      }
      this.options.onClosed?.();
    })();
    return this.closing;
  }

  /** The grace ends `graceMs` after `lostSince`: then every process ends and the host exits. */
  private armGrace(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    const since = this.lostSince;
    if (since === undefined) return;
    this.graceTimer = setTimeout(() => {
      if (this.lostSince === undefined) return;
      this.options.logger.info(`no live window for ${Date.now() - since} ms (grace ${this.options.graceMs} ms, ${this.client ? 'an extension is attached but shows no live window' : 'no extension attached'}): ending ${this.entries.size} process(es) and exiting`);
      void this.close('window_closed');
    }, Math.max(0, since + this.options.graceMs - Date.now()));
  }

  /** No live window since `since` (kept when earlier): the grace runs from the first moment, whatever happens next. */
  private markLost(since: number, why: string): void {
    if (this.closing) return;
    const first = this.lostSince === undefined;
    this.lostSince = first ? since : Math.min(this.lostSince as number, since);
    const left = Math.max(0, (this.lostSince as number) + this.options.graceMs - Date.now());
    this.options.logger.info(`${why}: ${this.entries.size} process(es) end in ${left} ms unless a live window attaches${first ? '' : ' (the grace already ran)'}`);
    this.armGrace();
  }

  /** The attached extension showed a live window: the grace is withdrawn. */
  private markLive(): void {
    this.lastLive = Date.now();
    if (this.lostSince === undefined) return;
    this.lostSince = undefined;
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.options.logger.info(`the attached extension has a live window: ${this.entries.size} process(es) kept`);
  }

  /** Asks the attached extension whether its window answers (a heartbeat; its answer is a `window` message). */
  private ask(client: net.Socket): void {
    this.asked = Date.now();
    this.lastAsk = this.asked;
    client.write(encodeMessage({ t: 'askWindow', heartbeat: true }));
  }

  /**
   * Every EDITOR_POLL_MS: the attached extension host's process (gone: its connection is dropped, whatever keeps the
   * socket open), the heartbeat (unanswered within the ask deadline: the window counts as gone), and, while no live
   * window is attached, the editor's process (gone: VS Code or a remote window's server stopped, and no window can
   * come back, so the processes end now rather than after the grace period).
   */
  private tick(): void {
    if (this.closing) return;
    const now = Date.now();
    const client = this.client;
    if (client && !client.destroyed) {
      const host = this.extensionHosts.get(client);
      if (host && !isSameProcessAlive(host)) {
        this.options.logger.info(`the attached extension host (pid ${host.pid}) has exited: dropping its connection`);
        client.destroy();
        this.detached(client);
        return;
      }
      const wait = this.options.askWindowMs ?? ASK_WINDOW_MS;
      if (this.asked !== undefined && now - this.asked >= wait) {
        const since = this.lastLive ?? this.asked;
        this.asked = undefined;
        this.clientLive = false;
        this.markLost(since, `the attached extension did not answer within ${wait} ms whether it has its window (hung, or lingering without it)`);
      } else if (this.asked === undefined && now - this.lastAsk >= (this.options.heartbeatMs ?? HEARTBEAT_MS)) {
        this.ask(client);
      }
    }
    const editor = this.editor;
    if (this.lostSince !== undefined && editor && !isSameProcessAlive(editor)) {
      this.options.logger.info(`the editor process (pid ${editor.pid}) has exited with no live window attached: ending ${this.entries.size} process(es) and exiting`);
      void this.close('window_closed');
    }
  }

  /** The attached client's connection ended (closed, or dropped because its process is gone). */
  private detached(socket: net.Socket): void {
    if (this.client !== socket) return;
    this.client = undefined;
    this.asked = undefined;
    // The client that waited for this one's answer takes over at once.
    if (this.contender && !this.closing) {
      this.options.logger.info('extension detached; the one waiting takes over');
      this.settleContender('admit');
    } else if (!this.closing) this.markLost(Date.now(), 'extension detached');
  }

  /** The frame readers of the open connections (what they hold is `bufferedBytes`). */
  private readonly readers = new Set<FrameReader>();

  /** Bytes the open connections' readers hold, not yet whole frames (tests: what a hostile peer can make it keep). */
  get bufferedBytes(): number {
    let n = 0;
    for (const r of this.readers) n += r.buffered;
    return n;
  }

  private connected(socket: net.Socket): void {
    serveConnection(socket, this.readers, {
      helloMs: this.options.helloMs ?? HELLO_MS,
      logger: this.options.logger,
      hello: (m) => this.hello(socket, m),
      isClient: () => socket === this.client,
      handle: (m) => this.handle(socket, m),
      closed: () => {
        if (this.contender?.socket === socket) this.settleContender('busy');
        this.detached(socket);
      },
    });
  }

  private deny(socket: net.Socket, reason: 'secret' | 'busy' | 'closing' | 'protocol', message: string): false {
    socket.end(encodeMessage({ t: 'denied', reason, message }));
    return false;
  }

  /**
   * The first message of a connection. True when it proved the secret: it is attached now, or (while the attached
   * client has its window) waits as the contender until that client answers `askWindow`.
   */
  private hello(socket: net.Socket, message: Message): boolean {
    if (message.t !== 'hello' || typeof message.secret !== 'string') return this.deny(socket, 'protocol', 'The first message must be hello.');
    if (this.closing) return this.deny(socket, 'closing', 'The process host is shutting down.');
    if (!sameSecret(message.secret, this.secret)) return this.deny(socket, 'secret', 'Wrong secret: this host belongs to another window, or to an earlier attach.');
    const editor = editorOf(message.editor);
    if (editor) this.editors.set(socket, editor);
    const extensionHost = editorOf(message.extensionHost);
    if (extensionHost) this.extensionHosts.set(socket, extensionHost);
    const previous = this.client && !this.client.destroyed ? this.client : undefined;
    if (previous && this.clientLive) {
      // A reloaded remote window's old extension host may not know yet that its page is gone (it asks its window
      // every 10 s): ask it now, and let this client wait for the answer instead of refusing it at once.
      if (this.contender) return this.deny(socket, 'busy', 'Another extension is attached to this process host, and another one waits to take it over.');
      const wait = this.options.askWindowMs ?? ASK_WINDOW_MS;
      const timer = setTimeout(() => {
        this.options.logger.info(`the attached extension did not say within ${wait} ms whether it has its window: it keeps the host`);
        this.settleContender('busy');
      }, wait);
      this.contender = { socket, timer };
      this.options.logger.info('another extension host of this window asks for the host: asking the attached one whether it still has its window');
      previous.write(encodeMessage({ t: 'askWindow' }));
      return true;
    }
    this.admit(socket, previous);
    return true;
  }

  /** The contender's wait ends: it takes the host over, or it is refused (busy, or the host is closing). */
  private settleContender(outcome: 'admit' | 'busy' | 'closing'): void {
    const c = this.contender;
    if (!c) return;
    this.contender = undefined;
    clearTimeout(c.timer);
    if (c.socket.destroyed) return;
    if (outcome === 'closing' || this.closing) {
      this.deny(c.socket, 'closing', 'The process host is shutting down.');
      return;
    }
    if (outcome === 'busy') {
      this.deny(c.socket, 'busy', 'Another extension is attached to this process host, and its window answers.');
      return;
    }
    const previous = this.client && !this.client.destroyed ? this.client : undefined;
    this.admit(c.socket, previous);
  }

  /** `socket` becomes the client: it gets the secret for the next attach, the processes, and their retained output. */
  private admit(socket: net.Socket, previous: net.Socket | undefined): void {
    this.client = socket;
    this.clientLive = true;
    if (previous) {
      // The attached extension said its window is gone (a lingering extension host of a reloaded remote window):
      // the newer client proved the secret, so it takes over; the old one is told and let go, and the secret it
      // knew is rotated below, so it cannot attach again.
      previous.end(encodeMessage({ t: 'superseded', message: 'A newer extension host of this window took the process host over.' }));
      this.options.logger.info('the attached extension had lost its window: handing the host over to the newer one');
    }
    this.editor = this.editors.get(socket);
    this.secret = randomBytes(32).toString('hex');
    const processes: HostedProcess[] = [...this.entries.values()].map((e) => ({
      record: e.record,
      pid: e.handle.pid,
      tty: e.handle.tty,
      retained_from: e.ring.retainedFrom,
      end: e.ring.end,
      ...(e.requested ? { requested: e.requested } : {}),
      ...(e.exit ? { exit: e.exit } : {}),
      ...(e.inputClosed ? { input_closed: true } : {}),
    }));
    socket.write(encodeMessage({ t: 'welcome', secret: this.secret, pid: process.pid, processes }));
    // The retained output of each, then the exits already known, in this order on the one stream: the client
    // rebuilds each ring from the same absolute offset and sees an exit only after all of its output.
    this.output.attached();
    for (const e of this.entries.values()) {
      const kept = e.ring.slice(e.ring.retainedFrom, e.ring.end).bytes;
      if (kept.length > 0) socket.write(encodeData(e.record.process_id, kept));
      e.sent = e.ring.end;
    }
    for (const e of this.entries.values()) {
      if (e.exit) socket.write(encodeMessage({ t: 'exit', id: e.record.process_id, exit: e.exit, ...(e.requested ? { requested: e.requested } : {}) }));
    }
    this.options.logger.info(`extension attached (extension host pid ${this.extensionHosts.get(socket)?.pid ?? '?'}); ${processes.length} process(es) handed over`);
    // Only a live window ends the grace: the new client is asked at once (a lingering one that reconnects says lost).
    if (this.lostSince !== undefined) this.ask(socket);
  }

  private send(message: Message): void {
    if (this.client && !this.client.destroyed) this.client.write(encodeMessage(message));
  }

  private handle(socket: net.Socket, m: Message): void {
    switch (m.t) {
      case 'spawn':
        void this.spawn(m.req, m.options, m.record, m.isolation);
        return;
      case 'write':
      case 'endInput': {
        const e = this.entries.get(m.id);
        try {
          if (!e || e.exit) throw new Error('The process has exited.');
          if (m.t === 'write') e.handle.write(Buffer.from(m.data, 'base64'));
          else {
            e.handle.endInput();
            if (!e.handle.tty) e.inputClosed = true;
          }
        } catch (err) {
          this.send({ t: 'inputFailed', id: m.id, message: describeError(err) });
        }
        return;
      }
      case 'resize':
        try {
          this.entries.get(m.id)?.handle.resize(m.rows, m.cols);
        } catch (err) {
          this.options.logger.warn(`process ${m.id}: resize failed: ${String(err)}`);
        }
        return;
      case 'kill':
        this.entries.get(m.id)?.handle.kill(m.signal);
        return;
      case 'terminate': {
        const e = this.entries.get(m.id);
        if (!e) {
          this.send({ t: 'done', req: m.req });
          return;
        }
        // The first reason wins, on both sides: the host's own deadline and the extension's may race.
        if (!e.exit) e.requested ??= m.reason === 'timeout' ? 'timeout' : 'terminated';
        void e.handle.terminate().then(
          () => this.send({ t: 'done', req: m.req }),
          () => this.send({ t: 'done', req: m.req }),
        );
        return;
      }
      case 'release': {
        const e = this.entries.get(m.id);
        if (e?.exit) this.entries.delete(m.id);
        return;
      }
      case 'window':
        if (socket === this.client && typeof m.live === 'boolean') {
          const changed = this.clientLive !== m.live;
          this.clientLive = m.live;
          this.asked = undefined;
          if (changed && m.live) this.options.logger.info('the attached extension has its window again');
          if (m.live) this.markLive();
          // The window went somewhere after it last answered: the grace runs from then.
          else if (changed || this.lostSince === undefined) this.markLost(this.lastLive ?? Date.now(), 'the attached extension lost its window (a newer extension host of it may take over)');
          if (this.contender) this.settleContender(m.live ? 'busy' : 'admit');
        }
        return;
      case 'shutdown':
        void this.close().then(() => undefined);
        socket.write(encodeMessage({ t: 'done', req: m.req }));
        return;
      default:
        this.options.logger.warn(`unexpected message ${JSON.stringify(m.t)}`);
    }
  }

  private spawn(req: number, options: WireSpawn, record: HostedRecord, isolation: IsolationSnapshot | undefined): Promise<void> {
    const run = async (): Promise<void> => {
      if (this.closing) {
        this.send({ t: 'failed', req, reason: 'unavailable', message: 'The process host is shutting down.' });
        return;
      }
      if (this.entries.has(record.process_id)) {
        this.send({ t: 'failed', req, reason: 'failed', message: `Process id ${record.process_id} is already taken.` });
        return;
      }
      this.isolation = isolation;
      this.testHosts.clear();
      for (const [name, addr] of isolation?.testHosts ?? []) this.testHosts.set(name, { address: addr.address, port: addr.port });
      let handle: ProcessHandle;
      try {
        handle = await (options.tty ? this.tty : this.pipes).spawn({ ...options, args: [...options.args] });
      } catch (err) {
        const reason = SpawnError.is(err) ? err.reason : 'failed';
        this.send({ t: 'failed', req, reason, message: describeError(err) });
        return;
      }
      this.guard.add(handle.pid);
      const entry: HostEntry = { record, handle, ring: new RingBuffer(record.capacity), sent: 0, credit: floodBytes(record.capacity), creditAt: performance.now() };
      this.entries.set(record.process_id, entry);
      // Told before any output, so the client has the handle when the first data frame arrives.
      this.send({ t: 'spawned', req, pid: handle.pid });
      handle.onData((bytes) => this.output.received(entry, bytes));
      handle.onExit((info: ExitInfo) => {
        if (entry.timer) clearTimeout(entry.timer);
        this.output.unpace(entry);
        this.guard.release(handle.pid);
        entry.endedAt = Date.now();
        // All of its output reaches the client before its exit, congested or not (a ring's worth at most).
        this.output.catchUp(entry);
        entry.exit = { ...(info.exitCode !== undefined ? { exitCode: info.exitCode } : {}), ...(info.signal !== undefined ? { signal: info.signal } : {}), ...(info.outputComplete === false ? { outputComplete: false } : {}) };
        this.send({ t: 'exit', id: record.process_id, exit: entry.exit, ...(entry.requested ? { requested: entry.requested } : {}) });
      });
      if (record.deadline !== undefined && !entry.exit) {
        entry.timer = setTimeout(() => {
          if (entry.exit) return;
          entry.requested ??= 'timeout';
          void handle.terminate();
        }, Math.max(0, record.deadline - Date.now()));
      }
    };
    return this.spawns.run(run);
  }
}
