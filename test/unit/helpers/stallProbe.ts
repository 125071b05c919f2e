import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Generous bound on the event loop's longest stall while a hostile call runs. The product target is 50 ms; unit tests
 * run on loaded shared machines where one garbage collection can take a few hundred, so this only catches work that
 * holds the loop for seconds (which every hostile input here did before it was bounded).
 */
export const STALL_BOUND_MS = 1500;

export interface ProbeResult<T> {
  readonly outcome: PromiseSettledResult<T>;
  /** Ordinary calls that completed while the hostile one was still running. */
  readonly answeredDuring: number;
  /** Longest event-loop delay seen meanwhile. */
  readonly maxDelayMs: number;
}

/**
 * Starts `hostile`, and until it settles keeps making `ordinary` calls one after another (another session, another
 * workspace). Reports how many of them were answered before the hostile call finished.
 */
export async function whileHostile<T>(hostile: () => Promise<T>, ordinary: () => Promise<unknown>): Promise<ProbeResult<T>> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let settled = false;
  const running = hostile().finally(() => {
    settled = true;
  });
  const outcome = Promise.allSettled([running]).then(([r]) => r as PromiseSettledResult<T>);
  let answeredDuring = 0;
  while (!settled) {
    await ordinary();
    if (!settled) answeredDuring++;
  }
  const result = await outcome;
  histogram.disable();
  return { outcome: result, answeredDuring, maxDelayMs: histogram.max / 1e6 };
}
