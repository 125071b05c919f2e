import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { ApplyPatchArgs } from '../../patches';
import { workspaceEditToPatch } from '../../patches';
import type { FileEdits } from '../../patches';
import { decodeText, hasBom } from '../../patches';
import type { TextRange } from './languageFeatures';
import type { ApplyPatchResult } from '../../patches';
import { applyPatchTool } from '../../patches';
import { LocationMapper, checkPosition, featuresOf, positionInput, readWorkspaceFile } from './language';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';

/** The text a 1-based range covers in `lines`, or undefined when the range is not inside them. */
function textIn(lines: readonly string[], range: TextRange | undefined): string | undefined {
  if (!range) return undefined;
  const { start, end } = range;
  if (start.line < 1 || end.line > lines.length || end.line < start.line) return undefined;
  const first = lines[start.line - 1] as string;
  if (start.line === end.line) return end.character - 1 > first.length || end.character < start.character ? undefined : first.slice(start.character - 1, end.character - 1);
  const last = lines[end.line - 1] as string;
  if (end.character - 1 > last.length) return undefined;
  return [first.slice(start.character - 1), ...lines.slice(start.line, end.line - 1), last.slice(0, end.character - 1)].join('\n');
}

/**
 * rename_symbol: the language server's rename, as an ordinary apply_patch. The edits are checked against the bytes
 * on disk (a dirty document is FILE_DIRTY_IN_EDITOR, a document that differs from disk VERSION_CONFLICT), turned into
 * a V4A patch with those versions expected (src/features/patches/common/workspaceEditToPatch.ts), and run through the operation
 * runner as apply_patch runs: preview, approval holds, review, ledger, atomic writes. A file changed after the
 * check fails the patch's own version check.
 */
export const renameSymbolTool = defineTool({
  name: 'rename_symbol',
  title: 'Rename a symbol',
  description:
    'Renames the symbol at a position everywhere the language server finds it, as one apply_patch (versions, ' +
    'approvals, review, ledger; the result adds the patch). check_only: true previews. Refused when a touched file has unsaved edits.',
  kind: 'patch',
  input: {
    workspace_id: z.string().min(1),
    path: z.string().min(1),
    ...positionInput,
    new_name: z.string().min(1).max(1000),
    operation_key: z.string().min(1).max(200),
    check_only: z.boolean().optional(),
    work_id: z.string().optional(),
  },
  output: {
    ...applyPatchTool.output,
    patch: z.string().describe('The V4A patch the rename became.'),
    expected_versions: z.record(z.string(), z.string()),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs' | 'runner'>) => async (args, { signal, session }) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    // A work in its own worktree: the language server sees the workspace folders, never the work's copy of them.
    if (args.work_id !== undefined && deps.workspaces.get(ws.id, args.work_id).work_id !== undefined) {
      throw new ToolError('UNAVAILABLE', `rename_symbol works on the workspace folders, not in work ${args.work_id}'s worktree: the language server does not see it.`, {
        hint: 'Edit the references with search and apply_patch (with the work_id).',
        details: { reason: 'worktree_work', work_id: args.work_id },
      });
    }
    // The same check apply_patch's runner makes, before asking the language server anything.
    deps.workspaces.require(ws, 'write');
    if (/[\r\n]/.test(args.new_name)) throw new InvalidArgumentsError('new_name must be one line.', { field: 'new_name' });
    const file = await readWorkspaceFile(deps, ws, args.path);
    const pos = checkPosition(file, args.line, args.character);
    const outcome = await features.rename(file.abs, pos, args.new_name);
    if ('refused' in outcome) {
      throw new InvalidArgumentsError(`The language server cannot rename at line ${args.line}, character ${args.character} of ${file.rel}: ${outcome.refused}`, {
        field: 'character',
        hint: 'Point at the symbol\'s name (symbols gives selection_range), or use apply_patch.',
      });
    }
    if (outcome.fileOperations > 0) {
      throw new InvalidArgumentsError('This rename also creates, renames or deletes files, which rename_symbol does not do.', { hint: 'Make the change with apply_patch (it can move files).' });
    }
    if (outcome.edits.length === 0) throw new InvalidArgumentsError(`The language server found nothing to rename at line ${args.line}, character ${args.character} of ${file.rel}.`, { field: 'character' });

    // The name being renamed: what the edit of the requested file covers (every edit covers the same name).
    const own = outcome.edits.find((fe) => fe.path === file.abs)?.edits.find((e) => e.range.start.line <= pos.line && e.range.end.line >= pos.line);
    const oldName = own ? textIn(file.lines, own.range) : textIn(file.lines, outcome.edits[0]?.edits[0]?.range);
    const mapper = new LocationMapper(deps);
    const files: FileEdits[] = [];
    for (const fe of outcome.edits) {
      const where = await mapper.confinePath(fe.path);
      if (!where || where.ws.id !== ws.id) {
        throw new ToolError('PATH_OUTSIDE_WORKSPACE', `The rename would also edit a file outside workspace ${ws.id}${where ? ` (in workspace ${where.ws.id}: ${where.rel})` : ''}; nothing was changed.`, {
          hint: 'Rename it by hand with apply_patch in each workspace.',
          details: where ? { workspace_id: where.ws.id, path: where.rel } : {},
        });
      }
      if (fe.dirty || deps.fs.isDirty(fe.path)) {
        throw new ToolError('FILE_DIRTY_IN_EDITOR', `${where.rel} has unsaved changes in the editor; the rename was computed on them, so nothing was changed.`, {
          hint: 'Ask the developer to save or revert the file, then rename again.',
          details: { path: where.rel },
        });
      }
      const disk = await readWorkspaceFile(deps, ws, where.rel);
      if (fe.documentText !== undefined) {
        const text = decodeText(hasBom(disk.bytes) ? disk.bytes.subarray(3) : disk.bytes);
        if (text !== fe.documentText) {
          throw new ToolError('VERSION_CONFLICT', `${where.rel} changed on disk after the language server read it; nothing was changed.`, {
            hint: 'Call rename_symbol again: the editor reloads the file.',
            details: { path: where.rel, current: disk.version },
          });
        }
      }
      // A rename replaces the same name everywhere: an edit whose range covers other text was computed on text
      // that is no longer on disk (the file changed in between).
      const covered = fe.edits.map((e) => textIn(disk.lines, e.range));
      if (covered.some((t) => t === undefined || t !== oldName)) {
        throw new ToolError('VERSION_CONFLICT', `${where.rel} changed while the language server computed the rename; nothing was changed.`, {
          hint: 'Call rename_symbol again.',
          details: { path: where.rel, current: disk.version },
        });
      }
      files.push({ path: where.rel, bytes: disk.bytes, edits: fe.edits });
    }
    const built = workspaceEditToPatch(files);
    const request: ApplyPatchArgs = {
      workspace_id: ws.id,
      patch: built.patch,
      expected_versions: built.expected_versions,
      operation_key: args.operation_key,
      ...(args.check_only !== undefined ? { check_only: args.check_only } : {}),
      ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
    };
    try {
      // apply_patch's own operation: its holds, ledger and after-commit work (diagnostics) are the rename's.
      const result = (await deps.runner.run(applyPatchTool.name, request, signal, session !== undefined ? { session } : {})) as ApplyPatchResult;
      return { ...result, patch: built.patch, expected_versions: built.expected_versions };
    } catch (err) {
      // A held rename is an apply_patch hold: operation_resume commits it. Say which patch is held.
      if (ToolError.is(err, 'APPROVAL_REQUIRED')) {
        throw new ToolError('APPROVAL_REQUIRED', err.message, { ...(err.hint !== undefined ? { hint: err.hint } : {}), details: { ...err.details, patch: built.patch } });
      }
      throw err;
    }
  },
});
