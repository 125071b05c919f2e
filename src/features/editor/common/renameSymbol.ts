import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { applyPatchTool, workspaceEditToPatch } from '../../patches';
import type { TextRange } from './languageFeatures';
import { checkPosition, featuresOf, positionInput, readWorkspaceFile } from './language';
import { checkedEdits, editableWorkspace, runAsPatch } from './editsAsPatch';
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
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs' | 'runner'>) => async (args, call) => {
    const features = featuresOf(deps);
    // The same checks apply_patch's runner makes, before asking the language server anything.
    const ws = editableWorkspace(deps, args, 'rename_symbol');
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
    const files = await checkedEdits(deps, ws, outcome.edits, 'The rename', (disk) => {
      // A rename replaces the same name everywhere: an edit whose range covers other text was computed on text
      // that is no longer on disk (the file changed in between).
      const fe = outcome.edits.find((e) => e.path === disk.abs);
      const covered = (fe?.edits ?? []).map((e) => textIn(disk.lines, e.range));
      if (covered.some((t) => t === undefined || t !== oldName)) {
        throw new ToolError('VERSION_CONFLICT', `${disk.rel} changed while the language server computed the rename; nothing was changed.`, {
          hint: 'Call rename_symbol again.',
          details: { path: disk.rel, current: disk.version },
        });
      }
    });
    return runAsPatch(deps, ws, workspaceEditToPatch(files, { field: 'new_name' }), args, call);
  },
});
