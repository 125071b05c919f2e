import type { AgentRef } from './identity';
import type { ToolKind } from './toolKinds';

/** One tool call as the dispatcher's hooks see it. */
export interface HookedCall {
  readonly tool: string;
  readonly kind: ToolKind;
  /** The arguments as the caller sent them (not checked: a refused call reaches the after-hooks too). */
  readonly args: unknown;
  readonly session?: string;
  readonly agent?: AgentRef;
}

/**
 * What a piece outside the tools does around every call (ToolDispatcher.addHook): the works' coordination, the
 * diagnostics follow-up and the review after the write register theirs. `before` runs once the arguments passed their
 * schema, just before the handler (`args` are then the parsed ones); `after` runs for every answer but an unknown
 * tool, in the order the hooks were added, and returns the notes to add to it (results at the top level, errors in
 * `details`).
 */
export interface CallHook {
  before?(call: HookedCall & { readonly args: Record<string, unknown> }): void;
  after?(call: HookedCall): Record<string, unknown> | undefined;
}
