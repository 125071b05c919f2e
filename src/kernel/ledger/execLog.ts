import { randomBytes } from 'node:crypto';
import type { Disposable } from '../../base/disposable';
import type { Journal } from '../../base/journal';
import { JournalStore } from '../../base/journalStore';
import type { Logger } from '../../base/logger';
import type { ExecRecord } from './schemas';
import { LINE_TYPES, execRecordSchema } from './schemas';
import { describeError } from '../../base/describeError';

/** A process's end, as the operation runner reports it (one of its events, declared here for the log it feeds). */
export interface ProcessExitedEvent {
  readonly type: 'process.exited';
  readonly process_id: string;
  readonly workspace_id: string;
  readonly termination: string;
  readonly exit_code?: number;
  readonly signal?: string;
  readonly ended_at: string;
}

/**
 * What the log records, as the operation runner reports it: a committed operation that started a command (the
 * fields of the runner's event the log reads), and a process's exit. Declared here, below the runner that feeds it.
 */
export type ExecEvent =
  | {
      readonly type: 'operation.committed';
      readonly operation: { readonly workspace_id: string; readonly work_id?: string; readonly at: string };
      readonly status: string;
      readonly approval_id?: string;
      readonly process_id?: string;
      readonly command?: { readonly argv: readonly string[]; readonly cwd: string; readonly tty: boolean; readonly occupancy: 'exclusive' | 'shared' };
    }
  | ProcessExitedEvent;

/** Command records kept (the newest); older finished ones roll off. */
export const DEFAULT_EXEC_RECORDS = 500;

/**
 * The ledger's record of every command an agent started: argv, folder, terminal, occupancy, the hold it came
 * through, and how it ended. Durable, so what ran is known after a reload or a crash; a command whose end was
 * never recorded (the extension host went away while it ran, and the next start ended it) reads `interrupted`.
 * Fed by the operation runner's event stream.
 */
export class ExecLog implements Disposable {
  /** Oldest-changed first: retention drops the records that changed longest ago. */
  private readonly records: JournalStore<ExecRecord>;
  private readonly byProcess = new Map<string, string>();
  /** Exits seen before the start was reported (a command that ends at once can exit before exec returns). */
  private readonly earlyExits = new Map<string, ProcessExitedEvent>();
  private opened = false;

  constructor(private readonly options: { journal: Journal; logger: Logger; maxRecords?: number; newId?: () => string }) {
    this.records = new JournalStore<ExecRecord>({
      journal: options.journal,
      codec: {
        decode: (line) => {
          const parsed = execRecordSchema.safeParse((line as { record?: unknown }).record);
          if (line.type === LINE_TYPES.exec.type && line.v === LINE_TYPES.exec.v && parsed.success) return parsed.data;
          options.logger.warn('[exec-log] skipped a journal line that is not a command record');
          return undefined;
        },
        encode: (record) => ({ type: LINE_TYPES.exec.type, v: LINE_TYPES.exec.v, record }),
        id: (record) => record.operation_id,
      },
      unrecognized: 'drop',
      order: 'updated',
      beforeCompact: () => this.trim(),
      warn: (message) => options.logger.warn(`[exec-log] ${message}`),
    });
  }

  async open(): Promise<{ loaded: number; interrupted: number }> {
    let interrupted = 0;
    await this.records.open();
    for (const r of [...this.records.values()]) {
      if (r.state === 'running') {
        // In place: a command interrupted keeps its position among the others.
        this.records.set({ ...r, state: 'interrupted' });
        interrupted++;
      }
    }
    this.trim();
    await this.records.compact();
    this.opened = true;
    return { loaded: this.records.size, interrupted };
  }

  /** Records what the runner reports: a started command, and its exit. */
  observe(event: ExecEvent): void {
    if (!this.opened) return;
    if (event.type === 'operation.committed' && event.process_id !== undefined && event.command) {
      const r: ExecRecord = {
        operation_id: this.options.newId?.() ?? `op_${randomBytes(8).toString('hex')}`,
        kind: 'exec',
        process_id: event.process_id,
        workspace_id: event.operation.workspace_id,
        ...(event.operation.work_id !== undefined ? { work_id: event.operation.work_id } : {}),
        ...(event.approval_id !== undefined ? { approval_id: event.approval_id } : {}),
        command: [...event.command.argv],
        cwd: event.command.cwd,
        tty: event.command.tty,
        occupancy: event.command.occupancy,
        started_at: event.operation.at,
        state: 'running',
      };
      this.byProcess.set(r.process_id, r.operation_id);
      this.put(r);
      const early = this.earlyExits.get(r.process_id);
      if (early) {
        this.earlyExits.delete(r.process_id);
        this.observe(early);
      }
    } else if (event.type === 'process.exited') {
      const id = this.byProcess.get(event.process_id);
      const r = id === undefined ? undefined : this.records.get(id);
      if (!r) {
        this.earlyExits.set(event.process_id, event);
        if (this.earlyExits.size > 64) this.earlyExits.delete(this.earlyExits.keys().next().value as string);
        return;
      }
      this.byProcess.delete(event.process_id);
      this.put({
        ...r,
        state: 'exited',
        ended_at: event.ended_at,
        termination: event.termination,
        ...(event.exit_code !== undefined ? { exit_code: event.exit_code } : {}),
        ...(event.signal !== undefined ? { signal: event.signal } : {}),
      });
    }
  }

  /**
   * Commands an earlier extension host started that were taken over on this start (the process host kept them
   * running across the reload), or whose end a process host recorded as it exited with no window attached: `open`
   * read them as interrupted; they are running again, or have ended as told.
   */
  reattached(processes: readonly { process_id: string; termination?: ExecRecord['termination']; exit_code?: number; signal?: string; ended_at?: string }[]): void {
    if (!this.opened) return;
    for (const p of processes) {
      const r = this.byProcessId(p.process_id);
      if (!r || r.state !== 'interrupted') continue;
      if (p.termination === undefined) {
        this.byProcess.set(p.process_id, r.operation_id);
        this.put({ ...r, state: 'running' });
      } else {
        this.put({
          ...r,
          state: 'exited',
          termination: p.termination,
          ...(p.ended_at !== undefined ? { ended_at: p.ended_at } : {}),
          ...(p.exit_code !== undefined ? { exit_code: p.exit_code } : {}),
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        });
      }
    }
  }

  get(operationId: string): ExecRecord | undefined {
    return this.records.get(operationId);
  }

  /** The record of a process this window started, if it is still kept. */
  byProcessId(processId: string): ExecRecord | undefined {
    for (const r of this.records.values()) if (r.process_id === processId) return r;
    return undefined;
  }

  /** Every kept record, oldest first. */
  list(): ExecRecord[] {
    return [...this.records.values()];
  }

  /** Resolves once every record so far is durable. */
  flush(): Promise<void> {
    return this.records.flush();
  }

  dispose(): void {
    this.opened = false;
  }

  private put(r: ExecRecord): void {
    const written = this.records.put(r);
    this.trim();
    written.catch((err: unknown) => this.options.logger.warn(`[exec-log] could not record ${r.operation_id}: ${describeError(err)}`));
  }

  private trim(): void {
    const max = this.options.maxRecords ?? DEFAULT_EXEC_RECORDS;
    for (const r of [...this.records.values()]) {
      if (this.records.size <= max) break;
      if (r.state !== 'running') this.records.forget(r.operation_id);
    }
  }
}
