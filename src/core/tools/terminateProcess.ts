import { z } from 'zod';
import { defineTool } from './tool';

export const terminateProcessTool = defineTool({
  name: 'terminate_process',
  title: 'Terminate a process',
  description:
    'Stops a process and everything it started: SIGTERM to its whole process group, then SIGKILL after a grace period. ' +
    'Returns once it has ended, with its final state. Terminating a process that already ended changes nothing and returns its state.',
  kind: 'processKill',
  input: {
    process_id: z.string().min(1).describe('The process_id returned by exec_command.'),
  },
  output: {
    process_id: z.string(),
    state: z.enum(['running', 'exited']),
    termination: z.enum(['exited', 'timeout', 'terminated', 'unknown']).optional(),
    exit_code: z.number().optional(),
    signal: z.string().optional(),
  },
  async handler(args, ctx) {
    const { processes } = ctx.services;
    const s = await processes.terminate(args.process_id);
    return {
      process_id: s.process_id,
      state: s.state,
      ...(s.termination !== undefined ? { termination: s.termination } : {}),
      ...(s.exit_code !== undefined ? { exit_code: s.exit_code } : {}),
      ...(s.signal !== undefined ? { signal: s.signal } : {}),
    };
  },
});
