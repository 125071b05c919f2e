import { z } from 'zod';
import { patchOperation } from './patchOperation';
import { diagnosticsReportSchema } from '../../editor';
import { defineOperationTool } from '../../../kernel/tool';
import type { PatchToolDeps } from './patchTools';

const fileResult = z.object({
  path: z.string(),
  kind: z.enum(['add', 'update', 'delete', 'move']),
  move_to: z.string().optional(),
  before_version: z.string().optional(),
  after_version: z.string().optional(),
  diff: z.string().optional(),
  state: z.string().optional(),
});

/** apply_patch: its operation (src/features/patches/common/patchOperation.ts) holds, commits and follows what it wrote for diagnostics. */
export const applyPatchTool = defineOperationTool({
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
    work_id: z.string().optional(),
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
  operation: (deps: PatchToolDeps) => patchOperation(deps),
});
