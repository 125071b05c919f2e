import type { ApprovalPolicy } from './approvalService';
import type { HoldReason } from './hold';

/**
 * When the developer reviews an agent's patches in a workspace (`codespace.review.mode`): `before` the write (a
 * held patch, today's review), or `after` it (non-sensitive patches apply at once and stay open to review in the
 * multi-file diff, with per-hunk Keep and Undo).
 */
export type ReviewMode = 'before' | 'after';

/** What a hold decision reads besides the operator's approval settings: the workspace's review mode. */
export interface HoldContext {
  readonly review: ReviewMode;
}

export const DEFAULT_HOLD_CONTEXT: HoldContext = { review: 'before' };

/** What the decision needs to know of a prepared operation. */
export interface HoldSubject {
  /** `patch`: files are written; `command`: a process is started. */
  readonly acts: 'patch' | 'command';
  /** The sensitive paths it writes (a patch), in order. */
  readonly sensitive_paths: readonly string[];
}

/**
 * The one place where the approval settings decide whether an operation is held, and why:
 * - a patch under `codespace.approvals.patches` `confirm` is held (`confirm`), one touching a sensitive path under
 *   `sensitive` is held (`sensitive`), nothing under `off`;
 * - in a workspace reviewed `after` the write, a patch `confirm` would hold is held only when it touches a sensitive
 *   path (`sensitive`): the others apply at once and are reviewed afterwards;
 * - a command is held under `codespace.approvals.commands` `confirm` (the review mode is about patches).
 */
export function holdReason(subject: HoldSubject, policy: ApprovalPolicy, context: HoldContext = DEFAULT_HOLD_CONTEXT): HoldReason | undefined {
  if (subject.acts === 'command') return policy.commands === 'confirm' ? 'confirm' : undefined;
  if (policy.patches === 'off') return undefined;
  const sensitive = subject.sensitive_paths.length > 0;
  if (policy.patches === 'confirm' && context.review === 'before') return 'confirm';
  return sensitive ? 'sensitive' : undefined;
}
