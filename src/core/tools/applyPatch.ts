import { z } from 'zod';
import { patchOperation } from '../patch/patchOperation';
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
    'Applies a V4A patch ("*** Begin Patch" … "*** End Patch" with Add File / Update File [Move to] / Delete File sections and @@ hunks). ' +
    'All or nothing: every hunk of every file is checked before the first write, files are written atomically, and a failed write restores the others. ' +
    'expected_versions must map every existing file the patch updates, moves or deletes to the version read returned. ' +
    'operation_key makes the call idempotent: resending the same key and arguments returns the stored result without writing again. ' +
    'check_only: true previews (unified diff and resulting version per file) and writes nothing; a preview and an apply need different keys.',
  kind: 'patch',
  input: {
    workspace_id: z.string().min(1).describe('Workspace id from workspace_info.'),
    patch: z.string().min(1).max(32 * 1024 * 1024).describe('The V4A patch text.'),
    expected_versions: z.record(z.string(), z.string()).describe('Path → version from read, for every existing file touched.'),
    operation_key: z.string().min(1).max(200).describe('Your idempotency key for this exact request.'),
    check_only: z.boolean().optional().describe('Preview only: return diffs and resulting versions, write nothing.'),
    work_id: z.string().min(1).optional().describe('The work this patch belongs to (work_open).'),
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
