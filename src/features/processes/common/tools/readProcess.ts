import { z } from 'zod';
import { defineTool } from '../../../../kernel/tool';
import type { ProcessToolDeps } from './processTools';

export const readProcessTool = defineTool({
  name: 'read_process',
  title: 'Read process output',
  description:
    'Reads a process\'s output (stdout and stderr) from cursor: 0 first, then the cursor returned. wait_ms waits for ' +
    'new output or the exit. eof: the output is complete, not that the command succeeded (see process_status). output_lost: older output was dropped (lost: which bytes).',
  kind: 'processRead',
  input: {
    process_id: z.string().min(1),
    cursor: z.number().int().min(0),
    max_bytes: z.number().int().min(1).optional(),
    wait_ms: z.number().int().min(0).optional(),
  },
  output: {
    chunk: z.string(),
    cursor: z.number(),
    eof: z.boolean(),
    output_lost: z.boolean(),
    retained_from: z.number(),
    lost: z.object({ from: z.number(), to: z.number() }).optional(),
    output_complete: z.literal(false).optional(),
  },
  create: (deps: Pick<ProcessToolDeps, 'processes'>) => async (args, ctx) => {
    const { processes } = deps;
    const r = await processes.read(args.process_id, args.cursor, args.max_bytes, args.wait_ms, ctx.signal);
    return {
      chunk: r.chunk,
      cursor: r.cursor,
      eof: r.eof,
      output_lost: r.output_lost,
      retained_from: r.retained_from,
      ...(r.lost ? { lost: { from: r.lost.from, to: r.lost.to } } : {}),
      ...(r.output_complete === false ? { output_complete: false as const } : {}),
    };
  },
});
