import { z } from 'zod';
import { defineTool } from './tool';

export const readProcessTool = defineTool({
  name: 'read_process',
  title: 'Read process output',
  description:
    'Reads a process\'s output (stdout and stderr combined) from cursor (start with 0, then pass the returned cursor). ' +
    'wait_ms long-polls: the call returns as soon as new output or the exit arrives, or after wait_ms (at most 30000). ' +
    'eof: the process has exited and all its output was read; it does not mean success (use process_status). ' +
    'Only the newest output is retained (256 KiB by default): output_lost true means your cursor was older than retained_from ' +
    'and the chunk starts there, so the log you hold is incomplete. output_complete false (only ever present as false, once ' +
    'the process has exited) means the output could not be collected to its end, so its tail may be missing. Chunks end on ' +
    'whole UTF-8 characters.',
  kind: 'processRead',
  input: {
    process_id: z.string().min(1).describe('The process_id returned by exec_command.'),
    cursor: z.number().int().min(0).describe('Byte offset to read from: 0 first, then the cursor of the previous result.'),
    max_bytes: z.number().int().min(1).optional().describe('Most output bytes to return (default 65536, at most 1048576).'),
    wait_ms: z.number().int().min(0).optional().describe('Wait up to this long for new output or the exit (capped at 30000). Default 0.'),
  },
  output: {
    chunk: z.string(),
    cursor: z.number(),
    eof: z.boolean(),
    output_lost: z.boolean(),
    retained_from: z.number(),
    output_complete: z.literal(false).optional(),
  },
  async handler(args, ctx) {
    const { processes } = ctx.services;
    const r = await processes.read(args.process_id, args.cursor, args.max_bytes, args.wait_ms, ctx.signal);
    return {
      chunk: r.chunk,
      cursor: r.cursor,
      eof: r.eof,
      output_lost: r.output_lost,
      retained_from: r.retained_from,
      ...(r.output_complete === false ? { output_complete: false as const } : {}),
    };
  },
});
