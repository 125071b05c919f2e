import { z } from 'zod';
import { defineTool } from './tool';

export const processStatusTool = defineTool({
  name: 'process_status',
  title: 'Process status',
  description:
    'How a process stands: state running or exited. Once exited, termination says how it ended: "exited" (on its own, with ' +
    'exit_code), "timeout" (stopped by the operator timeout), "terminated" (terminate_process or closed by the developer) or ' +
    '"unknown" (for example killed by a signal from elsewhere). Only termination "exited" with exit_code 0 is a success. ' +
    'output_complete (once exited): false when the output could not be collected to its end, so its tail may be missing.',
  kind: 'processRead',
  input: {
    process_id: z.string().min(1).describe('The process_id returned by exec_command.'),
  },
  output: {
    state: z.enum(['running', 'exited']),
    termination: z.enum(['exited', 'timeout', 'terminated', 'unknown']).optional(),
    exit_code: z.number().optional(),
    signal: z.string().optional(),
    started_at: z.string(),
    ended_at: z.string().optional(),
    command: z.array(z.string()),
    tty: z.boolean(),
    output_complete: z.boolean().optional(),
  },
  async handler(args, ctx) {
    const { processes } = ctx.services;
    const s = processes.status(args.process_id);
    return {
      state: s.state,
      ...(s.termination !== undefined ? { termination: s.termination } : {}),
      ...(s.exit_code !== undefined ? { exit_code: s.exit_code } : {}),
      ...(s.signal !== undefined ? { signal: s.signal } : {}),
      started_at: s.started_at,
      ...(s.ended_at !== undefined ? { ended_at: s.ended_at } : {}),
      command: [...s.command],
      tty: s.tty,
      ...(s.output_complete !== undefined ? { output_complete: s.output_complete } : {}),
    };
  },
});
