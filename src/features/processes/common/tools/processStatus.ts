import { z } from 'zod';
import { ToolError } from '../../../../base/errors';
import { defineTool } from '../../../../kernel/tool';
import type { ProcessToolDeps } from './processTools';

const TERMINATIONS = ['exited', 'timeout', 'terminated', 'window_closed', 'unknown'] as const;
function isTermination(t: string | undefined): t is (typeof TERMINATIONS)[number] {
  return (TERMINATIONS as readonly (string | undefined)[]).includes(t);
}

export const processStatusTool = defineTool({
  name: 'process_status',
  title: 'Process status',
  description:
    'Whether a process still runs and how it ended: termination \'exited\' with exit_code (success only with 0), ' +
    '\'timeout\', \'terminated\', \'window_closed\' (no window came back for it) or \'unknown\'. output_complete false: the output\'s tail may be missing.',
  kind: 'processRead',
  input: {
    process_id: z.string().min(1),
  },
  output: {
    state: z.enum(['running', 'exited']),
    termination: z.enum(TERMINATIONS).optional(),
    exit_code: z.number().optional(),
    signal: z.string().optional(),
    started_at: z.string(),
    ended_at: z.string().optional(),
    command: z.array(z.string()),
    tty: z.boolean(),
    output_complete: z.boolean().optional(),
  },
  create: (deps: Pick<ProcessToolDeps, 'processes' | 'execLog'>) => async (args) => {
    const { processes, execLog } = deps;
    let s;
    try {
      s = processes.status(args.process_id);
    } catch (err) {
      // Forgotten by the supervisor (retention, or a window reload since): the ledger still knows how it ended.
      const r = ToolError.is(err, 'PROCESS_NOT_FOUND') ? execLog.byProcessId(args.process_id) : undefined;
      if (!r) throw err;
      const termination = r.state === 'exited' && isTermination(r.termination) ? r.termination : 'unknown';
      return {
        state: 'exited' as const,
        termination,
        ...(termination === 'exited' && r.exit_code !== undefined ? { exit_code: r.exit_code } : {}),
        ...(r.signal !== undefined ? { signal: r.signal } : {}),
        started_at: r.started_at,
        ...(r.ended_at !== undefined ? { ended_at: r.ended_at } : {}),
        command: [...r.command],
        tty: r.tty,
        // The output went with the window (or the retention window): only read_process of a live record has it.
        output_complete: false,
      };
    }
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
