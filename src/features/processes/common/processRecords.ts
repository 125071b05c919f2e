import type { Clock, SupervisorSettings } from './supervisorSettings';
import { notFoundError } from './processErrors';
import type { ProcessRecord } from './processRecord';
import type { Occupant } from './processTypes';

function newProcessId(): string {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return 'p_' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The processes a supervisor knows, by id: running ones, and exited ones until they are forgotten (past
 * `exitedTtlMs`, or beyond the `maxExited` newest). Every lookup forgets the expired first.
 */
export class ProcessRecords {
  private readonly records = new Map<string, ProcessRecord>();

  constructor(
    private readonly settings: SupervisorSettings,
    private readonly clock: Clock,
  ) {}

  /** An id no known process has. */
  freshId(): string {
    let id = newProcessId();
    while (this.records.has(id)) id = newProcessId();
    return id;
  }

  has(processId: string): boolean {
    return this.records.has(processId);
  }

  add(rec: ProcessRecord): void {
    this.records.set(rec.id, rec);
  }

  delete(processId: string): void {
    this.records.delete(processId);
  }

  /** The record of `processId`; PROCESS_NOT_FOUND when there is none (or no longer). */
  lookup(processId: string): ProcessRecord {
    this.prune();
    const rec = this.records.get(processId);
    if (!rec) throw notFoundError(processId, this.settings);
    return rec;
  }

  /** Every record, oldest first (a copy: the caller may add or delete meanwhile). */
  all(): ProcessRecord[] {
    return [...this.records.values()];
  }

  /** Records not yet exited (including those still starting). */
  live(): ProcessRecord[] {
    return this.all().filter((r) => r.phase !== 'exited');
  }

  /** Every record past its start, after forgetting the expired. */
  listed(): ProcessRecord[] {
    this.prune();
    return this.all().filter((r) => r.phase !== 'starting');
  }

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

  /** Forgets exited processes past the time or count bound. */
  prune(): void {
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
}
