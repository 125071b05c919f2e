import { ToolError } from '../../../base/errors';

/**
 * Long patch work (parsing, matching, diffing) is written as generators that `yield` at checkpoints. `runSync`
 * drives one to the end at once; `drive` gives the event loop a turn (a macrotask, so timers, I/O and other
 * sessions' calls run) whenever a slice of `sliceMs` is used up, and fails with TIMEOUT past the pacer's
 * deadline. The extension host is shared with every other extension: no slice may hold it for long.
 */
export type Steps<T> = Generator<void, T, void>;

/** Longest synchronous slice before yielding to the event loop. */
export const DEFAULT_SLICE_MS = 8;
/** Wall-clock bound on planning one patch. */
export const DEFAULT_PATCH_DEADLINE_MS = 60_000;

export interface PacerOptions {
  readonly sliceMs?: number;
  readonly deadlineMs?: number;
  readonly now?: () => number;
}

export class Pacer {
  private readonly sliceMs: number;
  private readonly deadlineMs: number;
  private readonly now: () => number;
  private readonly started: number;
  private sliceStart: number;

  constructor(options: PacerOptions = {}) {
    this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    this.deadlineMs = options.deadlineMs ?? DEFAULT_PATCH_DEADLINE_MS;
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.sliceStart = this.started;
  }

  /** True when the current slice is used up. */
  due(): boolean {
    return this.now() - this.sliceStart >= this.sliceMs;
  }

  /** Lets the event loop run, then starts a new slice; throws TIMEOUT once the deadline has passed. */
  async pause(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const t = this.now();
    if (t - this.started > this.deadlineMs) {
      throw new ToolError('TIMEOUT', `The patch could not be checked within ${Math.round(this.deadlineMs / 1000)} s (limit patch_deadline_ms = ${this.deadlineMs}); nothing was written.`, {
        hint: 'Split the patch into smaller ones (fewer files or hunks, more distinctive context lines).',
        details: { limit: 'patch_deadline_ms', max: this.deadlineMs },
      });
    }
    this.sliceStart = t;
  }

  /** Yields when due; for async code between generator runs. */
  async breathe(): Promise<void> {
    if (this.due()) await this.pause();
  }
}

/** Runs `steps` to completion synchronously. */
export function runSync<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** Runs `steps`, pausing at checkpoints whenever the pacer's slice is used up. */
export async function drive<T>(steps: Steps<T>, pacer: Pacer): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
    if (pacer.due()) await pacer.pause();
  }
}
