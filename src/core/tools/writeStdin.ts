import { z } from 'zod';
import { InvalidArgumentsError } from '../errors';
import { processOperation } from './processOperation';
import { defineOperationTool } from './tool';

export const writeStdinTool = defineOperationTool({
  name: 'write_stdin',
  title: 'Write to a process',
  description:
    'Sends text to a running process\'s input (its terminal when started with tty: true, else its stdin). Include "\\n" to ' +
    'end a line; on a terminal, "\\u0003" is Ctrl-C. eof: true ends the input after data, so programs reading to the end ' +
    '(sort, wc, cat > file) finish: on pipes stdin is closed and later writes fail with INVALID_ARGUMENTS; on a terminal ' +
    'Ctrl-D is sent (twice when the current line is not empty) and the terminal stays writable. Read the reaction with ' +
    'read_process. An exited process answers PROCESS_EXITED.',
  kind: 'processControl',
  input: {
    process_id: z.string().min(1).describe('The process_id returned by exec_command.'),
    data: z.string().optional().describe('Text to send, as UTF-8. Optional with eof.'),
    eof: z.boolean().optional().describe('After data, end the input (close stdin on pipes, Ctrl-D on a terminal). Default false.'),
  },
  output: {
    process_id: z.string(),
    bytes_written: z.number(),
  },
  operation: (services) =>
    processOperation(
      services,
      'write_stdin',
      (args) => args.process_id,
      async (args) => ({ process_id: args.process_id, bytes_written: await services.processes.write(args.process_id, args.data ?? '', { eof: args.eof ?? false }) }),
      (args) => {
        if (args.data === undefined && !args.eof) throw new InvalidArgumentsError('write_stdin needs data, eof: true, or both.');
      },
    ),
});
