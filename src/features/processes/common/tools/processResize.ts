import { z } from 'zod';
import { MAX_TERMINAL_DIMENSION } from '../supervisor';
import { processOperation } from './processOperation';
import { defineOperationTool } from '../../../../kernel/tool';
import type { ProcessToolDeps } from './processTools';

export const processResizeTool = defineOperationTool({
  name: 'process_resize',
  title: 'Resize a process terminal',
  description:
    'Resizes the terminal of a process started with tty: true.',
  kind: 'processControl',
  input: {
    process_id: z.string().min(1),
    rows: z.number().int().min(1).max(MAX_TERMINAL_DIMENSION),
    cols: z.number().int().min(1).max(MAX_TERMINAL_DIMENSION),
  },
  output: {
    process_id: z.string(),
    rows: z.number(),
    cols: z.number(),
  },
  operation: (deps: Pick<ProcessToolDeps, 'processes' | 'workspaces'>) =>
    processOperation<{ readonly process_id: string; readonly rows: number; readonly cols: number }, { process_id: string; rows: number; cols: number }>(deps, 'process_resize', (args) => `${args.process_id} to ${args.rows}x${args.cols}`, async (args) => {
      await deps.processes.resize(args.process_id, args.rows, args.cols);
      return { process_id: args.process_id, rows: args.rows, cols: args.cols };
    }),
});
