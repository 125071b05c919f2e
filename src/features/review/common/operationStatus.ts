import { z } from 'zod';
import { InvalidArgumentsError } from '../../../base/errors';
import { defineTool } from '../../../kernel/tool';
import type { PatchToolDeps } from '../../patches';

const hash = z.string().nullable();

export const operationStatusTool = defineTool({
  name: 'operation_status',
  title: 'Operation status',
  description:
    'The recorded outcome of an apply_patch or rename_symbol, by operation_key or operation_id (one of them), e.g. after a lost answer. Runs nothing.',
  kind: 'operationQuery',
  input: {
    operation_key: z.string().min(1).optional(),
    operation_id: z.string().min(1).optional(),
  },
  output: {
    operation_id: z.string(),
    operation_key: z.string(),
    kind: z.literal('patch'),
    workspace_id: z.string(),
    work_id: z.string().optional(),
    status: z.enum(['pending', 'checked', 'applied', 'failed', 'failed_partial', 'not_applied', 'unknown']),
    created_at: z.string(),
    finished_at: z.string().optional(),
    files: z.array(z.object({ path: z.string(), kind: z.string(), move_to: z.string().optional(), before_version: z.string().optional(), after_version: z.string().optional() })),
    changes: z.array(z.object({ path: z.string(), kind: z.string(), before_hash: hash, after_hash: hash })),
    events: z.array(z.object({
      type: z.string(),
      at: z.string(),
      status: z.string().optional(),
      reason: z.string().optional(),
      evidence: z.array(z.object({ path: z.string(), expected_before: hash, expected_after: hash, found: hash })).optional(),
    })),
  },
  create: (deps: Pick<PatchToolDeps, 'patches'>) => async (args) => {
    const byKey = args.operation_key !== undefined;
    if (byKey === (args.operation_id !== undefined)) {
      throw new InvalidArgumentsError('Pass exactly one of operation_key or operation_id.');
    }
    const ledger = deps.patches.ledger;
    const r = ledger.get(byKey ? { operation_key: args.operation_key as string } : { operation_id: args.operation_id as string });
    return {
      operation_id: r.operation_id,
      operation_key: r.operation_key,
      kind: r.kind,
      workspace_id: r.workspace_id,
      ...(r.work_id !== undefined ? { work_id: r.work_id } : {}),
      status: r.status,
      created_at: r.created_at,
      ...(r.finished_at !== undefined ? { finished_at: r.finished_at } : {}),
      files: r.files.map((f) => ({ ...f })),
      changes: r.changes.map((c) => ({ ...c })),
      events: r.events.map(({ evidence, ...e }) => ({ ...e, ...(evidence ? { evidence: evidence.map((x) => ({ ...x })) } : {}) })),
    };
  },
});
