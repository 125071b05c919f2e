import type { SecretRedactor } from '../../../base/secretRedactor';
import type { ProcessRecord } from './processRecord';
import type { ProcessRead } from './processTypes';
import { readRedacted } from './redactedRead';
import type { SupervisorSettings } from './supervisorSettings';

const decoder = new TextDecoder('utf-8');

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const v = value === undefined || !Number.isFinite(value) ? fallback : Math.floor(value);
  return Math.min(max, Math.max(min, v));
}

/** A read request: from `cursor`, at most `max` bytes, waiting until `deadline` (performance.now()) at most. */
interface ReadRequest {
  readonly rec: ProcessRecord;
  readonly cursor: number;
  readonly max: number;
  readonly deadline: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * Reads a process's output by cursor, long-polling for more (see ProcessSupervisor.read). Output is redacted by
 * `redactor` when there is one.
 */
export class OutputReader {
  constructor(
    private readonly settings: SupervisorSettings,
    private readonly redactor: SecretRedactor | undefined,
  ) {}

  /**
   * Output from `cursor`. Returns at once when there is output past the cursor, when the process has ended,
   * or when the cursor fell out of the retained window; otherwise waits up to `waitMs` (capped) for either.
   */
  async read(rec: ProcessRecord, cursor: number, maxBytes: number | undefined, waitMs: number | undefined, signal: AbortSignal | undefined): Promise<ProcessRead> {
    const max = clampInt(maxBytes, this.settings.defaultReadBytes, 1, this.settings.maxReadBytes);
    const wait = clampInt(waitMs, 0, 0, this.settings.maxWaitMs);
    const req: ReadRequest = { rec, cursor, max, deadline: performance.now() + wait, signal };
    let waited = false;
    for (;;) {
      const result = this.readNow(req);
      if (result.chunk !== '' || result.eof || result.output_lost) {
        return waited && !result.eof && !result.output_lost ? this.gather(req, result) : result;
      }
      const left = req.deadline - performance.now();
      if (left <= 0 || signal?.aborted) return result;
      await changed(rec, left, signal);
      waited = true;
    }
  }

  /**
   * A long-poll woken by new output lets a little more arrive before answering, so a fast producer reaches the
   * agent in large chunks rather than one 4 KiB read per call. It stops at a quarter of the ring (well before
   * older output would be dropped), at `max`, at the exit, after `coalesceMs`, or at the caller's deadline.
   */
  private async gather(req: ReadRequest, first: ProcessRead): Promise<ProcessRead> {
    const { rec, cursor, signal } = req;
    const enough = Math.min(req.max, Math.floor(rec.buffer.capacity / 4));
    const until = Math.min(req.deadline, performance.now() + this.settings.coalesceMs);
    let gathered = false;
    while (rec.buffer.end - cursor < enough && rec.phase !== 'exited' && !signal?.aborted) {
      const left = until - performance.now();
      if (left <= 0) break;
      await changed(rec, left, signal);
      gathered = true;
    }
    return gathered ? this.readNow(req) : first;
  }

  private readNow({ rec, cursor, max }: ReadRequest): ProcessRead {
    const final = rec.phase === 'exited';
    const r = readRedacted(rec.buffer, cursor, max, final, this.redactor);
    return {
      chunk: decoder.decode(r.chunk),
      cursor: r.cursor,
      eof: final && r.cursor >= rec.buffer.end,
      output_lost: r.output_lost,
      retained_from: r.retained_from,
      ...(r.lost ? { lost: r.lost } : {}),
      ...(final && rec.outputComplete === false ? { output_complete: false as const } : {}),
    };
  }
}

/** Resolves at the record's next change (see `wake`), after `ms`, or on `signal`'s abort, whichever comes first. */
function changed(rec: ProcessRecord, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      rec.waiters.delete(done);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    rec.waiters.add(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
