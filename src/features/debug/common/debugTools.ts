import { ToolError } from '../../../base/errors';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { AnyTool } from '../../../kernel/tool';
import type { OperationRunner } from '../../../kernel/runner/operationRunner';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import { debugBreakpointsTool, debugControlTool, debugWaitTool } from './debugControl';
import { debugEvaluateTool, debugStackTool, debugVariablesTool } from './debugInspect';
import type { DebugPort } from './debugPort';
import type { DebugSessions } from './debugSessions';
import { debugStartTool } from './debugStart';

/** What the debug tools use. */
export interface DebugToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  /** The editor's debugger; undefined in a host without an editor (the debug tools answer UNAVAILABLE). */
  readonly debug: DebugPort | undefined;
  /** The state kept from the port's events (present with the port). */
  readonly sessions: DebugSessions | undefined;
  readonly runner: Pick<OperationRunner, 'run'>;
  /**
   * Whether the debug group is served now (default: yes). A start asked through approval_create while it is not is
   * refused like a call of a tool not served.
   */
  readonly served?: () => boolean;
}

/** The debug tools, in tools/list order. */
export const DEBUG_TOOLS = [debugStartTool, debugBreakpointsTool, debugControlTool, debugWaitTool, debugStackTool, debugVariablesTool, debugEvaluateTool] as const;

export function debugTools(deps: DebugToolDeps): AnyTool[] {
  return [
    debugStartTool.create(deps),
    debugBreakpointsTool.create(deps),
    debugControlTool.create(deps),
    debugWaitTool.create(deps),
    debugStackTool.create(deps),
    debugVariablesTool.create(deps),
    debugEvaluateTool.create(deps),
  ];
}

/** The port and its state, or UNAVAILABLE in a host without an editor. */
export function debuggerOf(deps: Pick<DebugToolDeps, 'debug' | 'sessions'>): { port: DebugPort; sessions: DebugSessions } {
  if (!deps.debug || !deps.sessions) {
    throw new ToolError('UNAVAILABLE', 'The debugger needs the VS Code editor; this host has none.', { hint: 'Use exec_command to run the program instead.' });
  }
  return { port: deps.debug, sessions: deps.sessions };
}
