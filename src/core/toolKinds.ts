/**
 * One table of tool kinds, so a kind is declared once. Today only the MCP annotations read it
 * (src/mcp/toolServer.ts: readOnly, destructive and idempotent become readOnlyHint, destructiveHint and
 * idempotentHint). The other flags describe the kind but nothing reads them yet: the profile checks live in
 * the workspace registry and the process supervisor, not here.
 */
export interface ToolKindFlags {
  /** Touches nothing: MCP readOnlyHint. */
  readonly readOnly: boolean;
  /** Changes files or starts/alters processes. */
  readonly mutates: boolean;
  /** May destroy data or work (MCP destructiveHint). */
  readonly destructive: boolean;
  /** Repeating the same call has no further effect (MCP idempotentHint). */
  readonly idempotent: boolean;
  /** Held for a person's decision when approvals are `confirm`. */
  readonly needsApproval: boolean;
  /** Starts something that outlives the call. */
  readonly longRunning: boolean;
  /** What the workspace profile must allow: `read`, `write` or `exec`. */
  readonly requires: 'read' | 'write' | 'exec';
}

export const TOOL_KINDS = {
  inspect: { readOnly: true, mutates: false, destructive: false, idempotent: true, needsApproval: false, longRunning: false, requires: 'read' },
  patch: { readOnly: false, mutates: true, destructive: true, idempotent: true, needsApproval: true, longRunning: false, requires: 'write' },
  operationQuery: { readOnly: true, mutates: false, destructive: false, idempotent: true, needsApproval: false, longRunning: false, requires: 'read' },
  exec: { readOnly: false, mutates: true, destructive: true, idempotent: false, needsApproval: true, longRunning: true, requires: 'exec' },
  processRead: { readOnly: true, mutates: false, destructive: false, idempotent: true, needsApproval: false, longRunning: false, requires: 'read' },
  processControl: { readOnly: false, mutates: true, destructive: false, idempotent: false, needsApproval: false, longRunning: false, requires: 'exec' },
  processKill: { readOnly: false, mutates: true, destructive: true, idempotent: true, needsApproval: false, longRunning: false, requires: 'exec' },
} as const satisfies Record<string, ToolKindFlags>;

export type ToolKind = keyof typeof TOOL_KINDS;

export function kindFlags(kind: ToolKind): ToolKindFlags {
  return TOOL_KINDS[kind];
}
