import type { ProgressReporter } from '../kernel/tool';
import type { RequestContext } from './surface';

type ProgressToken = string | number;

/** Fewest milliseconds between two progress notifications of one request (the last one always goes). */
export const PROGRESS_MIN_INTERVAL_MS = 50;

/**
 * The core's `progress(done, total?, message?)` callback for one tools/call that carried `_meta.progressToken`, as
 * MCP `notifications/progress` about that request. Per the specification the progress value must increase with
 * every notification, so a call that does not move it forward sends nothing; notifications are also spaced out, so
 * a chatty tool cannot flood the client. Sending is fire-and-forget: a failed send never fails the tool.
 */
export function progressReporter(token: ProgressToken | undefined, send: RequestContext['notify']): ProgressReporter | undefined {
  if (token === undefined) return undefined;
  let last = -Infinity;
  let lastAt = 0;
  return (done, total, message) => {
    if (!Number.isFinite(done) || done <= last) return;
    const now = Date.now();
    const final = total !== undefined && done >= total;
    if (!final && now - lastAt < PROGRESS_MIN_INTERVAL_MS && last !== -Infinity) return;
    last = done;
    lastAt = now;
    const params: { progressToken: ProgressToken; progress: number; total?: number; message?: string } = { progressToken: token, progress: done };
    if (total !== undefined && Number.isFinite(total) && total >= done) params.total = total;
    if (message !== undefined) params.message = message;
    send({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}
