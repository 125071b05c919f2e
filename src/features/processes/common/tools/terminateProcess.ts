import { z } from 'zod';
import { processOperation } from './processOperation';
import { defineOperationTool } from '../../../../kernel/tool';
import type { ProcessToolDeps } from './processTools';

export const terminateProcessTool = defineOperationTool({
  name: 'terminate_process',
  title: 'Terminate a process',
  description:
    'Stops a process and everything it started (SIGTERM, then SIGKILL) and returns its final state. Safe to repeat.',
  kind: 'processKill',
  input: {
    process_id: z.string().min(1),
  },
  output: {
    process_id: z.string(),
    state: z.enum(['running', 'exited']),
    termination: z.enum(['exited', 'timeout', 'terminated', 'window_closed', 'unknown']).optional(),
    exit_code: z.number().optional(),
    signal: z.string().optional(),
  },
  operation: (deps: Pick<ProcessToolDeps, 'processes' | 'workspaces'>) =>
    processOperation(deps, 'terminate_process', (_args, command) => command.join(' ').slice(0, 80), async (args) => {
      const s = await deps.processes.terminate(args.process_id);
      return {
        process_id: s.process_id,
        state: s.state,
        ...(s.termination !== undefined ? { termination: s.termination } : {}),
        ...(s.exit_code !== undefined ? { exit_code: s.exit_code } : {}),
        ...(s.signal !== undefined ? { signal: s.signal } : {}),
      };
    }),
});
