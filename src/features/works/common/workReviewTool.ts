import { z } from 'zod';
import { InvalidArgumentsError } from '../../../base/errors';
import { callerOf } from '../../../kernel/identity';
import { defineTool } from '../../../kernel/tool';
import type { SteeringToolDeps } from './steeringTools';

export const workReviewTool = defineTool({
  name: 'work_review',
  title: 'Review a work',
  description:
    'freeze: digest, no edits until reopen. approve/reject: another agent reviews it. commit once approved.',
  kind: 'steer',
  input: {
    work_id: z.string().min(1),
    action: z.enum(['freeze', 'reopen', 'approve', 'reject', 'commit']),
    digest: z.string().optional(),
    findings: z.string().optional(),
  },
  output: {
    work_id: z.string(),
    digest: z.string().optional(),
    commits: z.array(z.object({ workspace_id: z.string(), commit: z.string() })).optional(),
  },
  create: (deps: Pick<SteeringToolDeps, 'freezer'>) => async (args, { session, agent }) => {
    const caller = callerOf({ session, agent });
    const { freezer } = deps;
    switch (args.action) {
      case 'freeze':
      case 'reopen': {
        const out = args.action === 'freeze' ? await freezer.freeze(args.work_id) : await freezer.reopen(args.work_id);
        return { work_id: out.work_id, ...(out.digest !== undefined ? { digest: out.digest } : {}) };
      }
      case 'commit': {
        const out = await freezer.commit(args.work_id, undefined, { caller });
        return { work_id: out.work_id, ...(out.digest !== undefined ? { digest: out.digest } : {}), commits: out.commits };
      }
      default: {
        if (args.digest === undefined) throw new InvalidArgumentsError(`${args.action} needs the digest you reviewed.`, { field: 'digest' });
        const r = await freezer.review(args.work_id, args.digest, args.action === 'approve', { caller }, args.findings);
        return { work_id: args.work_id, digest: r.digest };
      }
    }
  },
});
