/**
 * One table of tool kinds, so a kind is declared once. The MCP adapter turns readOnly, destructive and
 * idempotent into readOnlyHint, destructiveHint and idempotentHint; the operation runner
 * (src/kernel/runner/operationRunner.ts) reads `requires` (the profile a mutating tool needs, and so Restricted
 * Mode) and `needsApproval` (whether the approval settings may hold it).
 */
export interface ToolKindFlags {
  /** Touches nothing: MCP readOnlyHint. */
  readonly readOnly: boolean;
  /** May destroy data or work (MCP destructiveHint). */
  readonly destructive: boolean;
  /** Repeating the same call has no further effect (MCP idempotentHint). */
  readonly idempotent: boolean;
  /** Held for a person's decision when approvals are `confirm`. */
  readonly needsApproval: boolean;
  /** What the workspace profile must allow: `read`, `write` or `exec`. */
  readonly requires: 'read' | 'write' | 'exec';
}

export const TOOL_KINDS = {
  inspect: { readOnly: true, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
  patch: { readOnly: false, destructive: true, idempotent: true, needsApproval: true, requires: 'write' },
  operationQuery: { readOnly: true, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
  exec: { readOnly: false, destructive: true, idempotent: false, needsApproval: true, requires: 'exec' },
  processRead: { readOnly: true, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
  processControl: { readOnly: false, destructive: false, idempotent: false, needsApproval: false, requires: 'exec' },
  /** Opens a hold (approval_create) or decides one (approval_resolve): changes no file and starts nothing itself. */
  approval: { readOnly: false, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
  /** Commits a granted hold once (operation_resume); the held operation's own requirement is checked again. */
  resume: { readOnly: false, destructive: true, idempotent: true, needsApproval: false, requires: 'read' },
  // Ending a process is always allowed where it may be seen: stopping an agent's command only ever reduces what it
  // does, also after the workspace lost trust or its exec profile while the command ran.
  processKill: { readOnly: false, destructive: true, idempotent: true, needsApproval: false, requires: 'read' },
  /** Steering (work_open, steer_claim_next, steer_complete, work_finish): changes the work's state, no file and no process. */
  steer: { readOnly: false, destructive: false, idempotent: false, needsApproval: false, requires: 'read' },
  /** steer_status: reads a work's counts. */
  steerRead: { readOnly: true, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
  /** debug_start: starts a debuggee, which runs outside the command sandbox: always held for the developer. */
  debugStart: { readOnly: false, destructive: true, idempotent: false, needsApproval: true, requires: 'exec' },
  /** Breakpoints, stepping and evaluation in a session the agent started (evaluate runs code in the debuggee). */
  debugControl: { readOnly: false, destructive: false, idempotent: false, needsApproval: false, requires: 'exec' },
  /** Reads a session's stop, stack and variables. */
  debugRead: { readOnly: true, destructive: false, idempotent: true, needsApproval: false, requires: 'read' },
} as const satisfies Record<string, ToolKindFlags>;

export type ToolKind = keyof typeof TOOL_KINDS;

export function kindFlags(kind: ToolKind): ToolKindFlags {
  return TOOL_KINDS[kind];
}
