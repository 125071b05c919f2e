import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Disposable } from '../../../base/disposable';
import type { Logger } from '../../../base/logger';
import type { ProcessSupervisor } from '../common/supervisor';
import { descendantsOf, isLive, listProcesses, sendSignal } from './processTable';
import type { ProcessIdentity } from '../../../base/node/processIdentity';
import { bootId, identify, isSameProcessAlive, writeAtomically } from '../../../base/node/processIdentity';

/**
 * Crash survivors. Normally the supervisor ends every child when the window closes or reloads; if the extension
 * host dies without that (a crash, a kill -9), children may outlive it. Each registry (one per extension host)
 * keeps a small JSON file listing its live children by pid and OS start time, rewritten atomically on every
 * start and exit. At the next activation, `reapSurvivors` reads the files whose owner is dead and SIGKILLs every
 * listed process that is still alive with the same start time (so a recycled pid is never hit), with its process
 * group and descendants. Files of a live owner (another window on the same storage folder) are left alone.
 */

export interface SurvivorEntry extends ProcessIdentity {
  readonly process_id: string;
  readonly command: readonly string[];
  readonly started_at: string;
}

interface SurvivorFile {
  readonly version: 1;
  readonly owner: ProcessIdentity;
  readonly processes: readonly SurvivorEntry[];
}

/** The supervisor's events the registry follows (structural, for tests). */
export type SupervisedEvents = Pick<ProcessSupervisor, 'onDidStart' | 'onDidExit'>;

export interface ReapSummary {
  /** Survivors found alive and killed. */
  readonly ended: readonly SurvivorEntry[];
  /** Files of dead owners read and removed. */
  readonly files: number;
}

const FILE_PREFIX = 'processes-';

function readFile(file: string): SurvivorFile | undefined {
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<SurvivorFile>;
    if (data.version !== 1 || !data.owner || !Array.isArray(data.processes)) return undefined;
    return data as SurvivorFile;
  } catch {
    return undefined;
  }
}

function describe(e: SurvivorEntry): string {
  return `pid ${e.pid} (${e.process_id}, ${JSON.stringify(e.command)}, started ${e.started_at})`;
}

/**
 * Ends what earlier, dead extension hosts left running: for each registry file in `directory` whose owner is no
 * longer alive, every listed process still alive with its recorded start time gets SIGKILL, with its process
 * group and its live descendants. The file is removed afterwards. Files of live owners are left alone.
 */
export async function reapSurvivors(options: { directory: string; logger: Logger }): Promise<ReapSummary> {
  const { directory, logger } = options;
  let names: string[];
  try {
    names = (await fs.promises.readdir(directory)).filter((n) => n.startsWith(FILE_PREFIX) && n.endsWith('.json'));
  } catch {
    return { ended: [], files: 0 };
  }
  const ended: SurvivorEntry[] = [];
  let files = 0;
  for (const name of names) {
    const file = path.join(directory, name);
    const data = readFile(file);
    if (data && isSameProcessAlive(data.owner)) continue; // another window, still running: its children are its own
    files++;
    const victims = (data?.processes ?? []).filter((e) => isSameProcessAlive(e));
    if (victims.length > 0) {
      // Descendants are taken before any kill: once a leader dies, its children are reparented and untraceable.
      const table = process.platform === 'win32' ? [] : await listProcesses();
      for (const victim of victims) {
        if (!isSameProcessAlive(victim)) continue;
        const descendants = descendantsOf(victim.pid, table).filter(isLive);
        const leadsGroup = table.find((e) => e.pid === victim.pid)?.pgid === victim.pid;
        if (leadsGroup) sendSignal(-victim.pid, 'SIGKILL'); // every supervised process leads its own group
        sendSignal(victim.pid, 'SIGKILL');
        for (const d of descendants) {
          if (d.pgid === d.pid) sendSignal(-d.pid, 'SIGKILL');
          sendSignal(d.pid, 'SIGKILL');
        }
        ended.push(victim);
        logger.warn(`[survivors] ended ${describe(victim)}, left running by an earlier extension host${descendants.length ? `, with ${descendants.length} descendant(s)` : ''}`);
      }
    }
    try {
      await fs.promises.rm(file, { force: true });
    } catch (err) {
      logger.warn(`[survivors] could not remove ${file}: ${String(err)}`);
    }
  }
  if (files > 0) logger.info(`[survivors] ${files} registry file(s) of earlier extension hosts read, ${ended.length} surviving process(es) ended`);
  return { ended, files };
}

export interface SurvivorRegistryOptions {
  /** Folder of the registry files (created when needed). */
  readonly directory: string;
  readonly logger: Logger;
  /** Who owns the recorded children. Default: this process. Tests forge a dead owner. */
  readonly owner?: ProcessIdentity;
}

/**
 * This extension host's list of live children, kept on disk for `reapSurvivors` after a crash. Follows the
 * supervisor (`watch`) or is fed directly (`record` / `forget`). `dispose` removes the file (a clean end leaves
 * nothing to reap).
 */
export class SurvivorRegistry implements Disposable {
  readonly file: string;
  private readonly owner: ProcessIdentity;
  private readonly live = new Map<string, SurvivorEntry>();
  private readonly logger: Logger;
  private disposed = false;
  private failed = false;

  constructor(options: SurvivorRegistryOptions) {
    this.logger = options.logger;
    this.owner = options.owner ?? identify(process.pid) ?? { pid: process.pid, start: '', boot: bootId() };
    this.file = path.join(options.directory, `${FILE_PREFIX}${this.owner.pid}-${randomBytes(4).toString('hex')}.json`);
  }

  /** Records every process the supervisor starts and forgets it when it exits. */
  watch(supervisor: SupervisedEvents): Disposable {
    const subs = [
      supervisor.onDidStart((info) => this.record(info.process_id, info.pid, info.command, info.started_at)),
      supervisor.onDidExit((id) => this.forget(id)),
    ];
    return { dispose: () => subs.forEach((s) => s.dispose()) };
  }

  /** Adds a live process; false when it is already gone (nothing to record). */
  record(processId: string, pid: number, command: readonly string[], startedAt = new Date().toISOString()): boolean {
    if (this.disposed) return false;
    const who = identify(pid);
    if (!who) return false;
    this.live.set(processId, { ...who, process_id: processId, command: [...command], started_at: startedAt });
    this.save();
    return true;
  }

  forget(processId: string): void {
    if (this.disposed || !this.live.delete(processId)) return;
    this.save();
  }

  get size(): number {
    return this.live.size;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.live.clear();
    try {
      fs.rmSync(this.file, { force: true });
    } catch (err) {
      this.logger.warn(`[survivors] could not remove ${this.file}: ${String(err)}`);
    }
  }

  /** Synchronous on purpose: a crash right after a start must still find the process on disk. */
  private save(): void {
    try {
      if (this.live.size === 0) {
        fs.rmSync(this.file, { force: true });
      } else {
        fs.mkdirSync(path.dirname(this.file), { recursive: true });
        const data: SurvivorFile = { version: 1, owner: this.owner, processes: [...this.live.values()] };
        writeAtomically(this.file, JSON.stringify(data));
      }
      this.failed = false;
    } catch (err) {
      if (!this.failed) this.logger.warn(`[survivors] could not update ${this.file}: ${String(err)}`);
      this.failed = true;
    }
  }
}
