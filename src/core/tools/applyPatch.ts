import { z } from 'zod';
import { patchOperation } from '../patch/patchOperation';
import { defineOperationTool } from './tool';

const fileResult = z.object({
  path: z.string(),
  kind: z.enum(['add', 'update', 'delete', 'move']),
  move_to: z.string().optional(),
  before_version: z.string().optional(),
  after_version: z.string().optional(),
  diff: z.string().optional(),
  state: z.string().optional(),
});

export const applyPatchTool = defineOperationTool({
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
  },
  operation: (services) => patchOperation(services),
});
