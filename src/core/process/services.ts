import { ToolError } from '../errors';
import type { CoreServices, ToolContext } from '../tools/tool';
import type { ProcessSupervisor } from './supervisor';

/**
 * CoreServices plus what the process tools need. Kept here until `CoreServices` grows these fields; a host
 * without process support simply omits them and the process tools answer EXEC_DISABLED.
 */
export interface ProcessServices extends CoreServices {
  readonly processes: ProcessSupervisor;
  readonly exec: {
    /** Base environment of children (operator setting merged over the host's); scrubbed by the supervisor. */
    readonly env: () => Record<string, string>;
    /** Operator timeout in milliseconds; 0 means none. */
    readonly timeoutMs: () => number;
  };
}

export function hasProcesses(services: CoreServices): services is ProcessServices {
  const s = services as Partial<ProcessServices>;
  return s.processes !== undefined && s.exec !== undefined;
}

/** The context's services with process support, or EXEC_DISABLED when this host has none. */
export function requireProcesses(ctx: ToolContext): ProcessServices {
  if (!hasProcesses(ctx.services)) {
    throw new ToolError('EXEC_DISABLED', 'This CodeSpace server does not run processes.', {
      hint: 'Call workspace_info: execution.process.available says whether commands can run here.',
    });
  }
  return ctx.services;
}
