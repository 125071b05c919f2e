import { ToolError } from '../../../base/errors';
import type { ApplyPatchArgs, ApplyPatchResult, EditPatch, FileEdits } from '../../patches';
import { applyPatchTool, decodeText, hasBom } from '../../patches';
import type { Workspace } from '../../../kernel/workspaces';
import { callerOf } from '../../../kernel/identity';
import type { ToolContext } from '../../../kernel/tool';
import type { FileTextEdits } from './languageFeatures';
import type { CheckedFile } from './language';
import { LocationMapper, readWorkspaceFile } from './language';
import type { EditorToolDeps } from './editorTools';

/**
 * The one path by which a language server's edits reach the disk (rename_symbol, apply_code_action, format): the
 * edits are checked against the bytes on disk, turned into a V4A patch with those versions expected
 * (src/features/patches/common/workspaceEditToPatch.ts) and run as apply_patch's own operation: preview, approval
 * holds, review after the write, ledger, checkpoints, atomic writes. Never an edit of the editor's buffer.
 */

type Deps = Pick<EditorToolDeps, 'workspaces' | 'fs' | 'runner'>;

/** The common arguments of the tools that write through this path. */
export interface PatchingArgs {
  readonly workspace_id: string;
  readonly operation_key: string;
  readonly check_only?: boolean;
  readonly work_id?: string;
}

/**
 * The workspace the edits are for, checked as apply_patch's runner checks it (the profile allows writes), and never a
 * work's worktree: the language servers see the workspace folders, not a work's copy of them.
 */
export function editableWorkspace(deps: Pick<EditorToolDeps, 'workspaces'>, args: Pick<PatchingArgs, 'workspace_id' | 'work_id'>, tool: string): Workspace {
  const ws = deps.workspaces.get(args.workspace_id);
  if (args.work_id !== undefined && deps.workspaces.get(ws.id, args.work_id).work_id !== undefined) {
    throw new ToolError('UNAVAILABLE', `${tool} works on the workspace folders, not in work ${args.work_id}'s worktree: the language server does not see it.`, {
      hint: 'Make the change with apply_patch (with the work_id).',
      details: { reason: 'worktree_work', work_id: args.work_id },
    });
  }
  deps.workspaces.require(ws, 'write');
  return ws;
}

/**
 * Checks each file's edits against the disk and returns them as patch input. `what` names the change in messages
 * ("The rename"); `check` may refuse a file whose edits do not fit what is on disk now.
 */
export async function checkedEdits(
  deps: Deps,
  ws: Workspace,
  edits: readonly FileTextEdits[],
  what: string,
  check?: (disk: CheckedFile, fe: FileTextEdits) => void,
): Promise<FileEdits[]> {
  const mapper = new LocationMapper(deps);
  const files: FileEdits[] = [];
  for (const fe of edits) {
    const where = await mapper.confinePath(fe.path);
    if (!where || where.ws.id !== ws.id) {
      throw new ToolError('PATH_OUTSIDE_WORKSPACE', `${what} would also edit a file outside workspace ${ws.id}${where ? ` (in workspace ${where.ws.id}: ${where.rel})` : ''}; nothing was changed.`, {
        hint: 'Make the change by hand with apply_patch in each workspace.',
        details: where ? { workspace_id: where.ws.id, path: where.rel } : {},
      });
    }
    if (fe.dirty || deps.fs.isDirty(fe.path)) {
      throw new ToolError('FILE_DIRTY_IN_EDITOR', `${where.rel} has unsaved changes in the editor; ${what.toLowerCase()} was computed on them, so nothing was changed.`, {
        hint: 'Ask the developer to save or revert the file, then try again.',
        details: { path: where.rel },
      });
    }
    const disk = await readWorkspaceFile(deps, ws, where.rel);
    if (fe.documentText !== undefined) {
      const text = decodeText(hasBom(disk.bytes) ? disk.bytes.subarray(3) : disk.bytes);
      if (text !== fe.documentText) {
        throw new ToolError('VERSION_CONFLICT', `${where.rel} changed on disk after the language server read it; nothing was changed.`, {
          hint: 'Ask again: the editor reloads the file.',
          details: { path: where.rel, current: disk.version },
        });
      }
    }
    check?.(disk, fe);
    files.push({ path: where.rel, bytes: disk.bytes, edits: fe.edits });
  }
  return files;
}

/** The patch the edits became, and the versions it expects. */
export interface PatchOfEdits {
  readonly patch: string;
  readonly expected_versions: Record<string, string>;
}

/**
 * Runs the patch of checked edits (workspaceEditToPatch) as apply_patch's own operation (its holds, ledger and after-commit work are the caller's),
 * for the caller's session and agent: a hold it opens is that agent's, so it cannot approve it itself.
 * A held request is an apply_patch hold (operation_resume commits it): the error says which patch is held.
 */
export async function runAsPatch(
  deps: Deps,
  ws: Workspace,
  built: EditPatch,
  args: PatchingArgs,
  call: Pick<ToolContext, 'signal' | 'session' | 'agent' | 'progress'>,
): Promise<ApplyPatchResult & PatchOfEdits> {
  const request: ApplyPatchArgs = {
    workspace_id: ws.id,
    patch: built.patch,
    expected_versions: built.expected_versions,
    operation_key: args.operation_key,
    ...(args.check_only !== undefined ? { check_only: args.check_only } : {}),
    ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
  };
  try {
    const result = (await deps.runner.run(applyPatchTool.name, request, call.signal, { ...(call.progress ? { progress: call.progress } : {}), ...callerOf(call) })) as ApplyPatchResult;
    return { ...result, patch: built.patch, expected_versions: built.expected_versions };
  } catch (err) {
    if (ToolError.is(err, 'APPROVAL_REQUIRED')) {
      throw new ToolError('APPROVAL_REQUIRED', err.message, { ...(err.hint !== undefined ? { hint: err.hint } : {}), details: { ...err.details, patch: built.patch } });
    }
    throw err;
  }
}
