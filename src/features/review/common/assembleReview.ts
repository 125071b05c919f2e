// The review module as the composition starts it: the review after the write, the checkpoints (rewind and redo),
// the approval tools, and the per-call hook that tells the agent what the reviewer undid (`review_update`).
import type { AsyncDisposableStore } from '../../../base/disposable';
import type { CallHook } from '../../../kernel/callHooks';
import type { AnyTool } from '../../../kernel/tool';
import type { SteeringService } from '../../works';
import { afterWriteHook } from './afterWriteHook';
import { AfterWriteReviews } from './afterWriteReviews';
import type { AfterWriteOptions } from './afterWriteTypes';
import { approvalTools } from './approvalTools';
import type { ApprovalToolDeps } from './approvalTools';
import { CheckpointService } from './checkpointService';
import type { CheckpointServiceOptions } from './checkpointService';

export interface ReviewModule {
  readonly afterWrite: AfterWriteReviews;
  readonly checkpoints: CheckpointService;
  readonly tools: readonly AnyTool[];
  readonly hook: CallHook;
}

export function assembleReview(
  o: {
    readonly afterWrite: AfterWriteOptions;
    readonly checkpoints: Omit<CheckpointServiceOptions, 'steering'>;
    readonly steering: CheckpointServiceOptions['steering'] & Pick<SteeringService, 'coordination'>;
  } & ApprovalToolDeps,
  owned: AsyncDisposableStore,
): ReviewModule {
  const afterWrite = owned.add(new AfterWriteReviews(o.afterWrite));
  return {
    afterWrite,
    checkpoints: new CheckpointService({ ...o.checkpoints, steering: o.steering }),
    tools: approvalTools({ runner: o.runner, approvals: o.approvals }),
    hook: afterWriteHook(afterWrite, o.steering),
  };
}
