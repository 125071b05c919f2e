import type { Limits } from '../../../kernel/limits';
import type { Logger } from '../../../base/logger';
import type { ProcessBackend } from './processBackend';
import type { SecretRedactor } from '../../../base/secretRedactor';

export interface SupervisorSettings {
  /** Exited processes kept queryable (oldest forgotten first). */
  readonly maxExited: number;
  /** How long an exited process stays queryable. */
  readonly exitedTtlMs: number;
  /** Longest long-poll of one read. */
  readonly maxWaitMs: number;
  /** Bytes one read returns when the caller does not say. */
  readonly defaultReadBytes: number;
  /** Most bytes one read returns. */
  readonly maxReadBytes: number;
  /** After a terminate, how long to wait for the exit report before recording the end anyway. */
  readonly exitReportMs: number;
  /**
   * When a long-poll was woken by new output, how long to let more gather before answering (never past the
   * caller's wait): a fast producer then arrives in a few large chunks instead of many 4 KiB ones.
   */
  readonly coalesceMs: number;
}

export const DEFAULT_SUPERVISOR_SETTINGS: SupervisorSettings = {
  maxExited: 100,
  exitedTtlMs: 30 * 60 * 1000,
  maxWaitMs: 30_000,
  defaultReadBytes: 64 * 1024,
  maxReadBytes: 1024 * 1024,
  exitReportMs: 2_000,
  coalesceMs: 10,
};

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface ProcessSupervisorOptions {
  /** Backend factories, called on each spawn (so node-pty is only loaded when a PTY is asked for). */
  readonly backends: { readonly tty: () => ProcessBackend; readonly pipes: () => ProcessBackend };
  /** Read at each spawn: `retainedOutputBytes` sizes that process's output buffer. */
  readonly limits?: () => Pick<Limits, 'retainedOutputBytes'>;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly settings?: Partial<SupervisorSettings>;
  /** What workspace_info reports as the owner of a process's lifetime (read each time it is asked). */
  readonly lifetime?: string | (() => string);
  /** Redacts credentials from output an agent reads (read_process); none when absent. */
  readonly redactor?: SecretRedactor;
}
