import type { Disposable } from '../../../base/disposable';
import type { EndReason, ExitInfo, ProcessHandle } from './processBackend';
import type { Occupancy, ProcessInfo, ProcessStatus, Termination } from './processTypes';
import { endOutcome } from './processTypes';
import type { RingBuffer } from './ringBuffer';

/** One process the supervisor knows: its description, its output, and where it is in its life. */
export interface ProcessRecord {
  readonly id: string;
  readonly workspaceId: string;
  /** Set when it runs in a work's worktree: it occupies that worktree, not the folder. */
  readonly workId?: string;
  readonly command: readonly string[];
  readonly cwd: string;
  readonly tty: boolean;
  readonly occupancy: Occupancy;
  readonly startedAt: number;
  readonly buffer: RingBuffer;
  readonly waiters: Set<() => void>;
  readonly subscriptions: Disposable[];
  /** Resolves when the record reaches `exited`. */
  readonly exited: Promise<void>;
  markExited: () => void;
  phase: 'starting' | 'running' | 'exited';
  handle?: ProcessHandle;
  /** Resolves when spawn has settled (handle set, or the record dropped). */
  ready: Promise<void>;
  requested?: EndReason;
  termination?: Termination;
  exitCode?: number;
  signal?: string;
  endedAt?: number;
  /** False when the backend could not collect the output to its end. */
  outputComplete?: boolean;
  /** Pipes: write_stdin eof closed stdin. */
  inputClosed?: boolean;
  timer?: ReturnType<typeof setTimeout>;
  stopping?: Promise<void>;
}

/** What a new record is made of; the rest (waiters, subscriptions, the exit promise) starts empty. */
export type RecordFields = Omit<ProcessRecord, 'buffer' | 'waiters' | 'subscriptions' | 'exited' | 'markExited'>;


/** A record over `buffer` (a new one for a spawn, one resumed at the old offsets for an adopted process). */
export function newRecord(fields: RecordFields, buffer: RingBuffer): ProcessRecord {
  let markExited!: () => void;
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  return { ...fields, buffer, waiters: new Set(), subscriptions: [], exited, markExited };
}

/** Wakes every long-poll waiting on the record (new output, a skip, or the exit). */
export function wake(rec: ProcessRecord): void {
  for (const waiter of [...rec.waiters]) waiter();
}

/** Stops following the record's handle: its output, skips and exit no longer reach the supervisor. */
export function unfollow(rec: ProcessRecord): void {
  for (const sub of rec.subscriptions.splice(0)) sub.dispose();
}

/**
 * The record's last transition, to `exited` at `now`: how it ended (the reason CodeSpace ended it wins, then the
 * backend's own), whether its output is complete. Wakes its readers; the caller reports the end.
 */
export function markEnded(rec: ProcessRecord, info: ExitInfo, now: number): void {
  if (rec.timer) clearTimeout(rec.timer);
  rec.phase = 'exited';
  rec.endedAt = now;
  // The backend's reason counts too: a process host's deadline may fire before this supervisor's timer.
  rec.requested ??= info.requested;
  const end = endOutcome(info, rec.requested);
  if (end.signal !== undefined) rec.signal = end.signal;
  rec.termination = end.termination;
  if (end.exit_code !== undefined) rec.exitCode = end.exit_code;
  rec.outputComplete = info.outputComplete !== false;
  unfollow(rec);
  rec.markExited();
  wake(rec);
}

export function infoOf(rec: ProcessRecord): ProcessInfo {
  return {
    process_id: rec.id,
    workspace_id: rec.workspaceId,
    command: [...rec.command],
    cwd: rec.cwd,
    tty: rec.tty,
    occupancy: rec.occupancy,
    started_at: new Date(rec.startedAt).toISOString(),
    pid: rec.handle?.pid ?? 0,
  };
}

export function statusOf(rec: ProcessRecord): ProcessStatus {
  const exited = rec.phase === 'exited';
  return {
    process_id: rec.id,
    workspace_id: rec.workspaceId,
    state: exited ? 'exited' : 'running',
    ...(exited ? { termination: rec.termination ?? 'unknown' } : {}),
    ...(exited && rec.exitCode !== undefined ? { exit_code: rec.exitCode } : {}),
    ...(rec.signal !== undefined ? { signal: rec.signal } : {}),
    started_at: new Date(rec.startedAt).toISOString(),
    ...(rec.endedAt !== undefined ? { ended_at: new Date(rec.endedAt).toISOString() } : {}),
    command: [...rec.command],
    tty: rec.tty,
    occupancy: rec.occupancy,
    ...(exited ? { output_complete: rec.outputComplete !== false } : {}),
  };
}
