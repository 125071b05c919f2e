import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../../../../base/logger';
import type { BackendOrigin, EndReason, ExitInfo, ProcessBackend, ProcessHandle, SpawnOptions } from '../../common/processBackend';
import type { EndOutcome } from '../../common/processTypes';
import { endOutcome } from '../../common/processTypes';
import { pidAlive } from '../../../../base/node/processIdentity';
import type { NodePtyCandidate } from '../nodePtyLoader';
import type { IsolationSettings } from '../sandbox/commandSandbox';
import { storageFolderParts } from '../../../../kernel/node/stateFolder';
import type { AttachedProcess } from './client';
import { AttachError, HostConnection } from './client';
import type { HostEnd, HostEndsFile, IsolationSnapshot, WireExit } from './protocol';
import { hostLogFile, prepareHostLog } from './hostLog';
import { describeError } from '../../../../base/describeError';
import { forget, privateSocketDir, writePrivate } from './hostFiles';

export { privateSocketDir } from './hostFiles';

/** What workspace_info says owns a process's lifetime when it runs in the process host. */
export const HOST_LIFETIME = 'process-host';
/** How long the host keeps processes with no window attached (a reload takes seconds; see README). */
export const DEFAULT_HOST_GRACE_MS = 60_000;
/** Sets the grace period in ms (tests shorten it; the default stays DEFAULT_HOST_GRACE_MS). */
export const HOST_GRACE_ENV = 'CODESPACE_PROCESS_HOST_GRACE_MS';
const READY_MS = 20_000;
/**
 * Each host's record in the storage folder: `process-host-<host pid>.json`. One file per host, because two windows
 * on one folder share that storage folder and each has a host of its own. `process-host.json` is the name earlier
 * versions wrote (read, never written).
 */
const RECORD_PREFIX = 'process-host';
const RECORD_EXT = '.json';
/** The ends a host recorded as it exited (protocol.ts HostEndsFile): `process-host-<id>.ends`, beside the records. */
const ENDS_PATTERN = /^process-host-[0-9a-f]+\.ends$/;
/** The biggest ends file read (a host holds at most a few hundred processes; anything larger is not one). */
const MAX_ENDS_BYTES = 4 * 1024 * 1024;

/** How a process the host ended (or saw end) while no window was attached ended, as the command log records it. */
export interface RecordedEnd extends EndOutcome {
  readonly process_id: string;
  readonly ended_at: string;
}

const END_REASONS: readonly string[] = ['terminated', 'timeout', 'window_closed'] satisfies readonly EndReason[];

/** One end of an ends file, checked field by field; undefined when it is not one. */
function parseEnd(value: unknown): RecordedEnd | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Partial<Record<keyof HostEnd, unknown>>;
  const exit = e.exit as Partial<Record<keyof WireExit, unknown>> | undefined;
  if (typeof e.process_id !== 'string' || e.process_id === '' || typeof e.ended_at !== 'string' || Number.isNaN(Date.parse(e.ended_at))) return undefined;
  if (typeof exit !== 'object' || exit === null) return undefined;
  if (exit.exitCode !== undefined && !Number.isInteger(exit.exitCode)) return undefined;
  if (exit.signal !== undefined && typeof exit.signal !== 'string' && typeof exit.signal !== 'number') return undefined;
  if (e.requested !== undefined && !END_REASONS.includes(e.requested as string)) return undefined;
  const info: ExitInfo = {
    ...(exit.exitCode !== undefined ? { exitCode: exit.exitCode as number } : {}),
    ...(exit.signal !== undefined ? { signal: exit.signal as string | number } : {}),
  };
  return { process_id: e.process_id, ended_at: new Date(e.ended_at).toISOString(), ...endOutcome(info, e.requested as EndReason | undefined) };
}

/** The grace period `env` asks for: a whole number of ms from 1 s to one day; anything else: the default. */
export function hostGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[HOST_GRACE_ENV];
  const n = text !== undefined && /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  return Number.isSafeInteger(n) && n >= 1_000 && n <= 86_400_000 ? n : DEFAULT_HOST_GRACE_MS;
}

export interface ProcessHostSettings {
  /** The window's storage folder (per workspace): the discovery record and the host's log live there. */
  readonly storageDir: string;
  /** The host's entry point (dist/processHost.js). */
  readonly script: string;
  /** The Node the host runs on; default this process's (with ELECTRON_RUN_AS_NODE for VS Code's Electron). */
  readonly execPath?: string;
  readonly graceMs?: number;
  /** Where the host looks for node-pty (the same candidates as the extension). */
  readonly nodePty?: readonly NodePtyCandidate[];
  /** Where the socket's private folder is made (default the OS temp folder; a socket path must stay short). */
  readonly socketRoot?: string;
  /** The sandbox settings, read when each command starts, and sent with it. */
  readonly isolation?: IsolationSettings;
  /** What runs a process when the host cannot (it did not start): in this extension host, as before. */
  readonly fallback: { readonly tty: ProcessBackend; readonly pipes: ProcessBackend };
  readonly logger: Logger;
  /** The host's log that outlives the state folder (default hostLogFile(): beside the discovery folder). */
  readonly hostLogFile?: string;
}

/**
 * A `busy` answer right after the previous extension host of this window let go can be the host not having read that
 * connection's end yet (a quick reload, a loaded machine): asked again a moment later it admits this one. A host
 * that stays busy belongs to another window on the same folder.
 */
const BUSY_RETRIES = 4;
const BUSY_RETRY_MS = 250;

export async function attachPatiently(socket: string, secret: string, logger: Logger): Promise<HostConnection> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await HostConnection.attach(socket, secret, logger);
    } catch (err) {
      if (!(err instanceof AttachError && err.reason === 'busy') || attempt >= BUSY_RETRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
    }
  }
}

/**
 * Where a window's process host records live: the extension's workspace storage folder, but always the first one of
 * the workspace. VS Code's Node extension host locks its workspace storage folder (a `vscode.lock` file) and, when
 * another live extension host holds it, takes `<folder>-1` … `<folder>-9` instead (extHostStoragePaths.ts). That is
 * what a reloaded remote window's new extension host gets while the server keeps the old one for a reconnection, so
 * it looked for the host's record in an empty folder and took nothing over. The records are made to be shared by the
 * extension hosts of a folder (each host has its own record, and one whose window answers refuses the others), so
 * every extension host of the workspace keeps them in the first folder.
 */
export function processHostStorageDir(storageDir: string): string {
  const { parent, base, suffixed, extension } = storageFolderParts(storageDir);
  if (!suffixed) return storageDir;
  const first = path.join(parent, base);
  try {
    if (!fs.statSync(first).isDirectory()) return storageDir;
  } catch {
    return storageDir;
  }
  return path.join(first, extension);
}

/** The discovery record: where this window's host listens and the secret for the next attach (mode 0600). */
interface HostRecordFile {
  readonly pid: number;
  readonly socket: string;
  readonly secret: string;
}

/** How long a start waits for a closing host to exit (it ends its processes: SIGTERM, SIGKILL after 3 s). */
const CLOSING_WAIT_MS = 10_000;

/** Resolves true once `pid` has exited, false if it still runs after `ms`. */
async function exited(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (pidAlive(pid)) {
    if (Date.now() >= end) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * Runs agents' processes in a process host beside the window (src/features/processes/node/processHost/host.ts), so they outlive a
 * reload or an extension-host crash. `tty` and `pipes` are the supervisor's backends; `attachExisting` takes
 * back the processes of the window's earlier extension host. The host is started on the first command (not at
 * activation). When it cannot start, or on a platform without Unix sockets (Windows), processes run in this
 * extension host as before, and `lifetime()` says so.
 */
export class ProcessHostBackends {
  readonly tty: ProcessBackend;
  readonly pipes: ProcessBackend;
  private connection: HostConnection | undefined;
  private starting: Promise<HostConnection | undefined> | undefined;
  private unavailable: string | undefined;
  private readonly hostedIds = new Set<string>();
  /** The record of the host this window is attached to (undefined before the first attach). */
  private recordFile: string | undefined;
  private detached = false;
  /** Whether this extension's window answers (windowLive); told to every host this window attaches to. */
  private live = true;
  private windowCheck: ((heartbeat: boolean) => Promise<boolean>) | undefined;

  constructor(private readonly settings: ProcessHostSettings) {
    if (process.platform === 'win32') this.unavailable = 'the process host uses a Unix socket, which this build does not use on Windows';
    this.tty = this.view(settings.fallback.tty);
    this.pipes = this.view(settings.fallback.pipes);
  }

  /** `process-host` while processes run in the host, else the fallback's lifetime. */
  lifetime(fallback: string): string {
    return this.unavailable === undefined && !this.detached ? HOST_LIFETIME : fallback;
  }

  /** Why the host is not used (undefined while it is, or may still be, used). */
  get unavailableReason(): string | undefined {
    return this.unavailable;
  }

  /** Whether the process runs in the host (so it must not be ended when this extension host goes). */
  hosted(processId: string): boolean {
    return this.hostedIds.has(processId);
  }

  /** The host's pid, once attached. */
  get hostPid(): number | undefined {
    return this.connection?.open ? this.connection.hostPid : undefined;
  }

  /**
   * Attaches to the host an earlier extension host of this window left (the records in the storage folder), and
   * returns its processes for the supervisor to adopt. Each record is tried, newest first: a host that is gone is
   * forgotten; a host whose attached extension still has its window is another window's on the same folder
   * (`busy`), and is left to it; the first that admits this one is this window's. None: a new host is started for
   * this window on its first command.
   */
  async attachExisting(): Promise<readonly AttachedProcess[]> {
    if (this.unavailable !== undefined) return [];
    const records = this.readRecords();
    // Said in the log either way: a reload that finds no host to take over says where it looked.
    if (records.length === 0) this.settings.logger.info(`[process-host] no process host of this window to take over (no record in ${this.settings.storageDir})`);
    for (const { file, record } of records) {
      if (!pidAlive(record.pid)) {
        this.settings.logger.info(`[process-host] the process host pid ${record.pid} of an earlier extension host is gone; forgetting its record`);
        forget(file);
        continue;
      }
      try {
        const connection = await attachPatiently(record.socket, record.secret, this.settings.logger);
        this.adopted(connection, record.pid, record.socket, file);
        this.settings.logger.info(`[process-host] re-attached to the process host (pid ${connection.hostPid}): ${connection.processes.length} process(es) taken over`);
        return connection.processes;
      } catch (err) {
        const reason = err instanceof AttachError ? err.reason : 'unreachable';
        this.settings.logger.warn(`[process-host] did not re-attach to the process host pid ${record.pid} (${reason}): ${describeError(err)}`);
        // A host ending its processes (its grace period ran out just now) records their ends as it exits: wait
        // for that (bounded), so this start folds them into the command log instead of the next one.
        if (reason === 'closing' && (await exited(record.pid, CLOSING_WAIT_MS))) forget(file);
        if (reason === 'unreachable') forget(file);
      }
    }
    return [];
  }

  /**
   * The ends that hosts of this window recorded as they exited (a grace period that ran out with no window, or a
   * shutdown): how each process they still held ended. `forget` removes the files once the caller has folded the
   * ends into the command log. A file that is not a valid ends record is logged and removed at once; it never
   * stops an activation.
   */
  takeRecordedEnds(): { ends: RecordedEnd[]; forget: () => void } {
    let names: string[];
    try {
      names = fs.readdirSync(this.settings.storageDir);
    } catch {
      return { ends: [], forget: () => undefined };
    }
    const ends: RecordedEnd[] = [];
    const files: string[] = [];
    for (const name of names) {
      if (!ENDS_PATTERN.test(name)) continue;
      const file = path.join(this.settings.storageDir, name);
      try {
        const st = fs.lstatSync(file);
        if (!st.isFile() || st.size > MAX_ENDS_BYTES) throw new Error(st.isFile() ? `${st.size} bytes` : 'not a file');
        const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Record<keyof HostEndsFile, unknown>>;
        if (parsed.v !== 1 || !Array.isArray(parsed.ends)) throw new Error('not an ends record');
        for (const value of parsed.ends as unknown[]) {
          const end = parseEnd(value);
          if (end) ends.push(end);
          else this.settings.logger.warn(`[process-host] ${name}: skipped an entry that is not a process end`);
        }
        files.push(file);
      } catch (err) {
        this.settings.logger.warn(`[process-host] removing ${name}, which could not be read as a record of process ends: ${describeError(err)}`);
        forget(file);
      }
    }
    return { ends, forget: () => files.forEach(forget) };
  }

  /** The host records in the storage folder, newest first; unreadable ones are skipped. */
  private readRecords(): { file: string; record: HostRecordFile; mtime: number }[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.settings.storageDir);
    } catch {
      return [];
    }
    const out: { file: string; record: HostRecordFile; mtime: number }[] = [];
    for (const name of names) {
      if (!name.startsWith(RECORD_PREFIX) || !name.endsWith(RECORD_EXT)) continue;
      const file = path.join(this.settings.storageDir, name);
      try {
        const record = JSON.parse(fs.readFileSync(file, 'utf8')) as HostRecordFile;
        if (!Number.isInteger(record.pid) || typeof record.socket !== 'string' || typeof record.secret !== 'string') continue;
        out.push({ file, record, mtime: fs.statSync(file).mtimeMs });
      } catch {
        continue;
      }
    }
    return out.sort((a, b) => b.mtime - a.mtime);
  }

  /**
   * Whether this extension's window answers. Lost (the extension host outlived its window: a reloaded remote
   * window's server keeps it waiting for a reconnection): the newer extension host of the window may take the
   * host over. Live again (the same window reconnected): it may not.
   */
  windowLive(live: boolean): void {
    if (this.live === live) return;
    this.live = live;
    if (this.connection?.open) this.connection.windowLive(live);
  }

  /**
   * This extension host is going away (a reload, or the window closing): let go of the host without ending
   * anything. It keeps the processes for its grace period and ends them if no window attaches meanwhile.
   */
  detach(): void {
    this.detached = true;
    this.connection?.detach();
    this.connection = undefined;
  }

  /** Ends every process in the host and the host itself (tests; and a window known to close for good). */
  async shutdown(): Promise<void> {
    const c = this.connection;
    this.detached = true;
    this.connection = undefined;
    if (!c) return;
    await c.shutdown();
    c.detach();
    if (this.recordFile) forget(this.recordFile);
  }

  private adopted(connection: HostConnection, pid: number, socket: string, previousFile?: string): void {
    this.connection = connection;
    for (const p of connection.processes) this.hostedIds.add(p.record.process_id);
    // A newer extension host of this window took the host over: this one lets go (it lost its window).
    connection.onClosed = (superseded) => {
      if (!superseded) return;
      this.settings.logger.warn('[process-host] a newer extension host of this window took the process host over; processes started here from now run in a new host');
      for (const p of connection.processes) this.hostedIds.delete(p.record.process_id);
    };
    const file = path.join(this.settings.storageDir, `${RECORD_PREFIX}-${pid}${RECORD_EXT}`);
    writePrivate(file, JSON.stringify({ pid, socket, secret: connection.nextSecret } satisfies HostRecordFile));
    if (previousFile !== undefined && previousFile !== file) forget(previousFile);
    this.recordFile = file;
    connection.windowAnswers = (heartbeat) => this.askWindow(heartbeat);
    if (!this.live) connection.windowLive(false);
  }

  /** The host asks whether this window answers (another extension host of the window wants the host). */
  private async askWindow(heartbeat: boolean): Promise<boolean> {
    const check = this.windowCheck;
    const live = check ? await check(heartbeat) : this.live;
    if (heartbeat) {
      if (!live) this.settings.logger.info('[process-host] the process host asked whether this window answers: it does not');
      return live;
    }
    this.settings.logger.info(`[process-host] another extension host of this window asked for the process host: this window ${live ? 'answers, so this one keeps it' : 'does not answer, so it is handed over'}`);
    return live;
  }

  /**
   * How to check, when asked, whether this window still answers (a round trip to the window with a deadline).
   * Unset: the last state told through `windowLive`. `heartbeat`: the host's regular question, not a takeover.
   */
  answerWindowQuestionsWith(check: (heartbeat: boolean) => Promise<boolean>): void {
    this.windowCheck = check;
  }

  private view(fallback: ProcessBackend): ProcessBackend {
    return {
      kind: fallback.kind,
      available: () => fallback.available(),
      origin: (): BackendOrigin | undefined => fallback.origin?.(),
      spawn: (options: SpawnOptions) => this.spawn(fallback, options),
    };
  }

  private async spawn(fallback: ProcessBackend, options: SpawnOptions): Promise<ProcessHandle> {
    const connection = options.record && !this.detached ? await this.connect() : undefined;
    if (!connection || !options.record) return fallback.spawn(options);
    const handle = await connection.spawn(options, options.record, this.snapshot());
    this.hostedIds.add(options.record.process_id);
    handle.onExit(() => this.hostedIds.delete(options.record?.process_id ?? ''));
    return handle;
  }

  private snapshot(): IsolationSnapshot | undefined {
    const iso = this.settings.isolation;
    if (!iso) return undefined;
    return {
      mode: iso.mode(),
      network: iso.network(),
      ...(iso.gitWrites ? { gitWrites: iso.gitWrites() } : {}),
      ...(iso.incompleteProtection ? { incompleteProtection: iso.incompleteProtection() } : {}),
      ...(iso.maxProcesses ? { maxProcesses: iso.maxProcesses() } : {}),
      ...(iso.unixSockets ? { unixSockets: iso.unixSockets() } : {}),
      ...(iso.allowedDomains ? { allowedDomains: [...iso.allowedDomains()] } : {}),
      ...(iso.testHosts ? { testHosts: [...iso.testHosts.entries()] } : {}),
    };
  }

  /** The attached host, starting one if there is none (once at a time); undefined when it cannot start. */
  private async connect(): Promise<HostConnection | undefined> {
    if (this.connection?.open) return this.connection;
    if (this.unavailable !== undefined) return undefined;
    this.starting ??= this.launch().then(
      (c) => c,
      (err: unknown) => {
        this.unavailable = describeError(err);
        this.settings.logger.warn(`[process-host] the process host could not start, so agent processes run in the extension host and end with the window: ${this.unavailable}`);
        return undefined;
      },
    );
    try {
      return await this.starting;
    } finally {
      this.starting = undefined;
    }
  }

  /** The host's log that outlives the state folder (hostLog.ts), or undefined when its folder cannot be made. */
  private survivingLog(): string | undefined {
    try {
      return prepareHostLog(this.settings.hostLogFile ?? hostLogFile());
    } catch (err) {
      this.settings.logger.warn(`[process-host] no log outside the state folder: ${describeError(err)}`);
      return undefined;
    }
  }

  private async launch(): Promise<HostConnection> {
    const dir = privateSocketDir(this.settings.socketRoot ?? os.tmpdir());
    const id = randomBytes(6).toString('hex');
    const socket = path.join(dir, `host-${id}.sock`);
    const endsFile = path.join(this.settings.storageDir, `${RECORD_PREFIX}-${id}.ends`);
    const secret = randomBytes(32).toString('hex');
    fs.mkdirSync(this.settings.storageDir, { recursive: true });
    const log = fs.openSync(path.join(this.settings.storageDir, 'process-host.log'), 'a', 0o600);
    let pid: number;
    try {
      const env: Record<string, string> = { ELECTRON_RUN_AS_NODE: '1' };
      for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'USER', 'LOGNAME']) {
        const v = process.env[name];
        if (v !== undefined) env[name] = v;
      }
      // Detached: its own session and process group, so neither a reload nor a signal to the extension host's
      // group reaches it. Its settings (with the secret) go through stdin, never through argv or environment.
      const child = spawn(this.settings.execPath ?? process.execPath, [this.settings.script], { detached: true, stdio: ['pipe', 'pipe', log], env, windowsHide: true });
      pid = await new Promise<number>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`the process host did not report ready within ${READY_MS} ms`)), READY_MS);
        const done = (err?: Error): void => {
          clearTimeout(timer);
          child.stdout?.removeAllListeners('data');
          if (err) reject(err);
          else resolve(child.pid as number);
        };
        child.once('error', (err) => done(err));
        child.once('exit', (code, signal) => done(new Error(`the process host exited at start (${signal ?? `exit code ${String(code)}`}); see process-host.log in the extension's storage`)));
        child.stdout?.setEncoding('utf8');
        child.stdout?.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('ready\n')) done();
        });
        child.stdin?.on('error', () => undefined);
        const logFile = this.survivingLog();
        child.stdin?.end(JSON.stringify({ socket, secret, graceMs: this.settings.graceMs ?? hostGraceMs(), endsFile, ...(logFile ? { logFile } : {}), ...(this.settings.nodePty ? { nodePty: this.settings.nodePty } : {}) }) + '\n');
      });
      child.removeAllListeners('exit');
      child.stdout?.destroy();
      child.unref();
    } finally {
      fs.closeSync(log);
    }
    const connection = await HostConnection.attach(socket, secret, this.settings.logger);
    this.adopted(connection, pid, socket);
    this.settings.logger.info(`[process-host] started the process host (pid ${pid})`);
    return connection;
  }
}
