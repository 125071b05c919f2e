import { z } from 'zod';
import { InvalidArgumentsError } from '../../../../base/errors';
import { processOperation } from './processOperation';
import { defineOperationTool } from '../../../../kernel/tool';
import type { ProcessToolDeps } from './processTools';

export const writeStdinTool = defineOperationTool({
  name: 'write_stdin',
  title: 'Write to a process',
  description:
    'Sends data to a process\'s input (its terminal with tty: true, where \'\\u0003\' is Ctrl-C). eof: true then ends ' +
    'the input (closes stdin; Ctrl-D on a terminal). Read the reaction with read_process.',
  kind: 'processControl',
  input: {
    process_id: z.string().min(1),
    data: z.string().optional(),
    eof: z.boolean().optional(),
  },
  output: {
    process_id: z.string(),
    bytes_written: z.number(),
  },
  operation: (deps: Pick<ProcessToolDeps, 'processes' | 'workspaces'>) =>
    processOperation<{ readonly process_id: string; readonly data?: string; readonly eof?: boolean }, { process_id: string; bytes_written: number }>(
      deps,
      'write_stdin',
      (args) => args.process_id,
      async (args) => ({ process_id: args.process_id, bytes_written: await deps.processes.write(args.process_id, args.data ?? '', { eof: args.eof ?? false }) }),
      (args) => {
        if (args.data === undefined && !args.eof) throw new InvalidArgumentsError('write_stdin needs data, eof: true, or both.');
      },
    ),
});
