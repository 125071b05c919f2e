import type { Workspace } from '../../../kernel/workspaces';
import type { Logger } from '../../../base/logger';
import type { ProcessBackend, ProcessHandle, SpawnRecord } from './processBackend';
import type { SecretSet } from './environment';
import { scrubEnvironment } from './environment';
import { spawnFailure } from './processErrors';
import type { ProcessRecord } from './processRecord';
import { newRecord } from './processRecord';
import type { ProcessRecords } from './processRecords';
import type { AdoptedProcess, ExecOptions } from './processTypes';
import { PTY_COLS, PTY_ROWS } from './processTypes';
import { DEFAULT_RING_CAPACITY, RingBuffer } from './ringBuffer';
import type { Clock, ProcessSupervisorOptions } from './supervisorSettings';

/** A record just started (`running`), with the operator timeout to arm on it, if any. */
export interface Spawned {
  readonly rec: ProcessRecord;
  readonly timeoutMs?: number;
}

/**
 * Starts processes through a backend and makes their records: the output buffer sized by the limits at that
 * moment, the environment scrubbed of our secrets, the description a lasting backend keeps. Admission (may it
 * start here, now?) is the supervisor's.
 */
export class ProcessSpawner {
  constructor(
    private readonly options: Pick<ProcessSupervisorOptions, 'backends' | 'limits'>,
    private readonly records: ProcessRecords,
    private readonly secrets: SecretSet,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /**
   * Spawns `command`. Its record is registered (`starting`) before the first await, so that a concurrent exclusive
   * exec sees the workspace occupied; a failed spawn removes it again and throws the error an agent is told.
   */
  async spawn(workspace: Workspace, command: readonly string[], options: ExecOptions): Promise<Spawned> {
    const tty = options.tty ?? false;
    const occupancy = options.occupancy ?? 'exclusive';
    let backend: ProcessBackend;
    try {
      backend = tty ? this.options.backends.tty() : this.options.backends.pipes();
    } catch (err) {
      throw spawnFailure(this.logger, err, command, tty);
    }
    const id = this.records.freshId();
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const capacity = this.options.limits?.().retainedOutputBytes ?? DEFAULT_RING_CAPACITY;
    const work = workspace.work_id !== undefined ? { workId: workspace.work_id } : {};
    const rec = newRecord({ id, workspaceId: workspace.id, ...work, command: [...command], cwd: options.cwd, tty, occupancy, startedAt: this.clock.now(), phase: 'starting', ready }, new RingBuffer(capacity));
    this.records.add(rec);

    const { env, removed } = scrubEnvironment(options.env, this.secrets);
    if (removed.length > 0) this.logger.debug(`process ${id}: ${removed.length} environment variable(s) withheld: ${removed.join(', ')}`);

    const timeoutMs = options.timeoutMs ?? 0;
    const timed = timeoutMs > 0 && Number.isFinite(timeoutMs);
    const record: SpawnRecord = {
      process_id: id,
      workspace_id: workspace.id,
      ...(workspace.work_id !== undefined ? { work_id: workspace.work_id } : {}),
      command: rec.command,
      cwd: options.cwd,
      occupancy,
      started_at: rec.startedAt,
      capacity,
      ...(timed ? { deadline: rec.startedAt + timeoutMs } : {}),
    };
    let handle: ProcessHandle;
    try {
      const root = options.root !== undefined ? { root: options.root } : {};
      handle = await backend.spawn({ file: command[0] as string, args: command.slice(1), cwd: options.cwd, ...root, env, tty, rows: PTY_ROWS, cols: PTY_COLS, record });
    } catch (err) {
      this.records.delete(id);
      markReady();
      throw spawnFailure(this.logger, err, command, tty, options.cwd);
    }
    rec.handle = handle;
    rec.phase = 'running';
    markReady();
    this.logger.info(`process ${id} started (pid ${handle.pid}, ${tty ? 'pty' : 'pipes'}, ${occupancy}) in ${workspace.id}: ${JSON.stringify(command)}`);
    return { rec, ...(timed ? { timeoutMs } : {}) };
  }

  /**
   * The record of a process an earlier extension host started (see ProcessSupervisor.adopt), registered: its output
   * resumes at the same absolute offsets, its operator timeout at the same deadline.
   */
  adopt(p: AdoptedProcess): Spawned {
    const r = p.record;
    if (this.records.has(r.process_id)) throw new Error(`Process ${r.process_id} is already supervised.`);
    const buffer = new RingBuffer(r.capacity);
    buffer.resumeAt(p.retainedFrom);
    const rec = newRecord(
      {
        id: r.process_id,
        workspaceId: r.workspace_id,
        ...(r.work_id !== undefined ? { workId: r.work_id } : {}),
        command: [...r.command],
        cwd: r.cwd,
        tty: p.handle.tty,
        occupancy: r.occupancy,
        startedAt: r.started_at,
        phase: 'running',
        ready: Promise.resolve(),
        handle: p.handle,
        ...(p.requested ? { requested: p.requested } : {}),
        ...(p.inputClosed ? { inputClosed: true } : {}),
      },
      buffer,
    );
    this.records.add(rec);
    this.logger.info(`process ${rec.id} taken over (pid ${p.handle.pid}, ${rec.tty ? 'pty' : 'pipes'}, ${rec.occupancy}) in ${rec.workspaceId}: ${JSON.stringify(rec.command)}`);
    return { rec, ...(r.deadline !== undefined ? { timeoutMs: Math.max(0, r.deadline - this.clock.now()) } : {}) };
  }
}
