import { z } from 'zod';
import { patchOperation } from './patchOperation';
import type { ApplyPatchResult } from '../patch/patchService';
import { diagnosticsReportSchema, patchDiagnostics } from './diagnostics';
import { defineOperationTool } from './tool';
import type { CoreServices } from './tool';

const fileResult = z.object({
  path: z.string(),
  kind: z.enum(['add', 'update', 'delete', 'move']),
  move_to: z.string().optional(),
  before_version: z.string().optional(),
  after_version: z.string().optional(),
  diff: z.string().optional(),
  state: z.string().optional(),
});

const applyPatchOperation = defineOperationTool({
  name: 'apply_patch',
  title: 'Apply a patch',
  description:
    'Creates, edits, moves and deletes files with a V4A patch: \'*** Begin Patch\', then per file \'*** Add File: p\' (+ ' +
    'lines), \'*** Delete File: p\' or \'*** Update File: p\' (optionally \'*** Move to: q\') with @@ hunks of \' \', \'-\', ' +
    '\'+\' lines, then \'*** End Patch\'. All or nothing. expected_versions: each existing file touched -> the version ' +
    'read returned. A new operation_key per change (a repeat returns the stored result); check_only: true previews.',
  kind: 'patch',
  input: {
    workspace_id: z.string().min(1),
    patch: z.string().min(1).max(32 * 1024 * 1024),
    expected_versions: z.record(z.string(), z.string()),
    operation_key: z.string().min(1).max(200),
    check_only: z.boolean().optional(),
    work_id: z.string().min(1).optional(),
  },
  output: {
    status: z.enum(['checked', 'applied', 'failed', 'failed_partial', 'not_applied', 'unknown']),
    operation_id: z.string(),
    files: z.array(fileResult),
    reason: z.string().optional(),
    hint: z.string().optional(),
    reviewer_changes: z
      .array(z.object({ path: z.string(), diff: z.string() }))
      .optional()
      .describe('After a held patch: what the reviewer changed in the proposal before it was applied (unified diff, proposal → applied).'),
    reviewer_note: z.string().optional(),
    diagnostics: diagnosticsReportSchema
      .optional()
      .describe('After an applied patch, in the editor, when a language server reports on the files it wrote: answered at once, never waited for.'),
  },
  operation: (services) => patchOperation(services),
});

/**
 * The diagnostics field of an applied patch (see patchDiagnostics): added after the runner has released the
 * workspace's patch turn and the ledger has the result (which never carries it: a replay answers anew). Never waits
 * for a language server.
 */
export async function withPatchDiagnostics<R extends ApplyPatchResult>(services: CoreServices, workspaceId: string, result: R, session?: string): Promise<R & { diagnostics?: z.infer<typeof diagnosticsReportSchema> }> {
  if (result.status !== 'applied') return result;
  const written = result.files.flatMap((f) => (f.kind === 'delete' ? [] : [{ path: f.kind === 'move' && f.move_to !== undefined ? f.move_to : f.path, version: f.after_version }]));
  const diagnostics = await patchDiagnostics(services, workspaceId, written, session);
  return diagnostics ? { ...result, diagnostics } : result;
}

/** apply_patch: the runner's operation, and the diagnostics of what it wrote. */
export const applyPatchTool: typeof applyPatchOperation = {
  ...applyPatchOperation,
  handler: async (args, ctx) => withPatchDiagnostics(ctx.services, args.workspace_id, (await applyPatchOperation.handler(args, ctx)) as ApplyPatchResult, ctx.session),
};
