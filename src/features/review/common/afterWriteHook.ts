import type { AfterWriteReviews } from './afterWriteReviews';
import type { SteeringService } from '../../works';
import type { CallHook } from '../../../kernel/callHooks';
import { heldWork } from '../../../kernel/approvals/holdWork';

/**
 * Every answer to a session carries `review_update`: the hunks of what it (or the work of the call: its open work, or
 * the one it names) wrote that the reviewer undid after the write (taken once: delivered now).
 */
export function afterWriteHook(reviews: Pick<AfterWriteReviews, 'take'>, steering: Pick<SteeringService, 'coordination'>): CallHook {
  return {
    after(call) {
      const named = heldWork(call.args);
      const undone = reviews.take(call.session, steering.coordination(call.session, named)?.work_id ?? named);
      return undone.length > 0 ? { review_update: undone } : undefined;
    },
  };
}
