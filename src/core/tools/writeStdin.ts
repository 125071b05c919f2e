import { z } from 'zod';
import { requireProcesses } from '../process/services';
import { defineTool } from './tool';

export const writeStdinTool = defineTool({
  name: 'write_stdin',
  title: 'Write to a process',
  description:
    'Sends text to a running process\'s input (its terminal when started with tty: true, else its stdin). Include "\\n" to ' +
    'end a line; on a terminal, "\\u0003" is Ctrl-C. Read the reaction with read_process. An exited process answers PROCESS_EXITED.',
  kind: 'processControl',
  input: {
    process_id: z.string().min(1).describe('The process_id returned by exec_command.'),
    data: z.string().describe('Text to send, as UTF-8.'),
  },
  output: {
    process_id: z.string(),
    bytes_written: z.number(),
  },
  async handler(args, ctx) {
    const { processes } = requireProcesses(ctx);
    const bytes = await processes.write(args.process_id, args.data);
    return { process_id: args.process_id, bytes_written: bytes };
  },
});
