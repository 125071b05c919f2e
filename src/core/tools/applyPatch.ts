import { z } from 'zod';
import { ToolError } from '../errors';
import type { CoreServices } from './tool';
import { defineTool } from './tool';
import type { PatchService } from '../patch/patchService';

const fileResult = z.object({
  path: z.string(),
  kind: z.enum(['add', 'update', 'delete', 'move']),
  move_to: z.string().optional(),
  before_version: z.string().optional(),
  after_version: z.string().optional(),
  diff: z.string().optional(),
  state: z.string().optional(),
});

export function requirePatches(services: CoreServices): PatchService {
  if (!services.patches) {
    throw new ToolError('READ_ONLY', 'This host has no patch ledger, so it cannot write.', { hint: 'Open a folder in VS Code (patches need workspace storage).' });
  }
  return services.patches;
}

export const applyPatchTool = defineTool({
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
  },
  async handler(args, { services }) {
    const ws = services.workspaces.get(args.workspace_id);
    services.workspaces.require(ws, 'write');
    const patches = requirePatches(services);
    if (!args.check_only) {
      const occupant = services.occupant?.(ws.id);
      if (occupant) {
        throw new ToolError('WORKSPACE_BUSY', `Workspace ${ws.id} is busy: process ${occupant.process_id} (${occupant.command.join(' ')}) is running.`, {
          hint: 'Wait for it to exit (process_status / read_process with wait_ms) or terminate it, then apply. Previews (check_only) still work.',
          details: { workspace_id: ws.id, process_id: occupant.process_id, command: occupant.command },
        });
      }
    }
    const request = {
      workspace_id: args.workspace_id,
      patch: args.patch,
      expected_versions: args.expected_versions,
      operation_key: args.operation_key,
      ...(args.check_only !== undefined ? { check_only: args.check_only } : {}),
      ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
    };
    return patches.apply(ws, request);
  },
});
