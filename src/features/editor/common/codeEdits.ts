import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { applyPatchTool, workspaceEditToPatch } from '../../patches';
import { defineTool } from '../../../kernel/tool';
import type { CheckedFile } from './language';
import { LANGUAGE_LIMITS, boundedText, checkPosition, featuresOf, positionInput, rangeSchema, readWorkspaceFile } from './language';
import type { CodeActionInfo, LanguageFeatures, TextRange } from './languageFeatures';
import { checkedEdits, editableWorkspace, runAsPatch } from './editsAsPatch';
import type { EditorToolDeps } from './editorTools';

/**
 * code_actions, apply_code_action and format: what the language servers offer to change, and the change made as an
 * ordinary apply_patch through the one path of src/features/editor/common/editsAsPatch.ts.
 */

type Deps = Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs' | 'runner'>;

/** Most actions one code_actions answer lists. */
export const MAX_CODE_ACTIONS = 50;
/** Longest wait for the language servers' first report on a file before its actions are asked for. */
const FIRST_REPORT_MS = 10_000;

const rangeInput = {
  workspace_id: z.string().min(1),
  path: z.string().min(1),
  ...positionInput,
  end_line: z.number().int().min(1).optional(),
  end_character: z.number().int().min(1).optional(),
  kind: z.string().min(1).max(200).optional(),
};

const patching = {
  operation_key: z.string().min(1).max(200),
  check_only: z.boolean().optional(),
  work_id: z.string().optional(),
};

/** The range the arguments name, checked against the file: an end before the start, or past the file, is refused. */
function rangeOf(file: CheckedFile, args: { line: number; character: number; end_line?: number | undefined; end_character?: number | undefined }): TextRange {
  const start = checkPosition(file, args.line, args.character);
  if (args.end_line === undefined && args.end_character === undefined) return { start, end: start };
  const endLine = args.end_line ?? args.line;
  const endCharacter = args.end_character ?? (file.lines[endLine - 1] ?? '').length + 1;
  const end = checkPosition(file, endLine, endCharacter);
  if (end.line < start.line || (end.line === start.line && end.character < start.character)) {
    throw new InvalidArgumentsError(`The range ends (line ${end.line}, character ${end.character}) before it starts (line ${start.line}, character ${start.character}).`, { field: 'end_line' });
  }
  return { start, end };
}

/**
 * What applying an action does: writes its edit (also when the server computes it only on request: an action listed
 * with neither), writes its edit and names a command it does not run, or only names a command.
 */
function appliesOf(a: CodeActionInfo): 'edit' | 'edit_and_command' | 'command' {
  if (a.edit && a.command) return 'edit_and_command';
  return a.command && !a.edit ? 'command' : 'edit';
}

/**
 * Waits until the language servers know the file: a file no server has reported on yet is opened and its first report
 * waited for (at most FIRST_REPORT_MS; a file already reported on is not waited for). Quick fixes are offered for the
 * diagnostics a range overlaps, and a server formats only a file it has loaded.
 */
export async function loadedByServers(features: LanguageFeatures, file: CheckedFile): Promise<void> {
  if (features.reportsOn(file.abs)) await features.settle([file.abs], { timeoutMs: FIRST_REPORT_MS, requireChange: false });
}

/** The actions for the range, their edits resolved (a server that computes an edit on request is asked for it). */
async function actionsFor(file: CheckedFile, range: TextRange, kind: string | undefined, features: LanguageFeatures): Promise<CodeActionInfo[]> {
  await loadedByServers(features, file);
  return features.codeActions(file.abs, range, { ...(kind !== undefined ? { kind } : {}), resolve: true });
}

const actionSchema = z.object({
  title: z.string(),
  kind: z.string().optional(),
  preferred: z.boolean().optional(),
  applies: z.enum(['edit', 'edit_and_command', 'command']).describe('apply_code_action writes an edit as a patch; a command is not run.'),
});

/** Most diagnostics of the range a code_actions answer shows. */
const MAX_RANGE_DIAGNOSTICS = 20;

const overlaps = (a: TextRange, b: TextRange): boolean => {
  const before = (p: TextRange['start'], q: TextRange['start']): boolean => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
};

export const codeActionsTool = defineTool({
  name: 'code_actions',
  title: 'Quick fixes and refactorings',
  description:
    'Quick fixes, refactorings and source actions for a position or range (end_line, end_character; kind: quickfix, ' +
    'refactor, ...), and the diagnostics there. apply_code_action applies one by title.',
  kind: 'inspect',
  input: rangeInput,
  output: {
    actions: z.array(actionSchema),
    truncated: z.boolean(),
    diagnostics: z.array(z.object({ message: z.string(), range: rangeSchema, severity: z.string(), code: z.string().optional() })).describe('The diagnostics the range overlaps: what quick fixes are offered for.'),
  },
  create: (deps: Deps) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(deps, ws, args.path);
    const range = rangeOf(file, args);
    // Resolved, as apply_code_action resolves them: a refactoring whose server computes its edit on request is listed
    // with the edit it applies (unresolved, it shows only the command that would ask for it).
    const all = await actionsFor(file, range, args.kind, features);
    const actions = all.slice(0, MAX_CODE_ACTIONS).map((a) => ({
      title: boundedText(a.title, LANGUAGE_LIMITS.maxContextChars).text,
      ...(a.kind !== undefined ? { kind: a.kind } : {}),
      ...(a.preferred ? { preferred: true } : {}),
      applies: appliesOf(a),
    }));
    const diagnostics = ((await features.diagnostics([file.abs]))[0]?.diagnostics ?? [])
      .filter((d) => overlaps(d.range, range))
      .slice(0, MAX_RANGE_DIAGNOSTICS)
      .map((d) => ({ message: boundedText(d.message, LANGUAGE_LIMITS.maxMessageChars).text, range: d.range, severity: d.severity, ...(d.code !== undefined ? { code: d.code } : {}) }));
    return { actions, truncated: all.length > MAX_CODE_ACTIONS, diagnostics };
  },
});

export const applyCodeActionTool = defineTool({
  name: 'apply_code_action',
  title: 'Apply a quick fix or refactoring',
  description:
    'Applies the code action of this title (code_actions, same range) as one apply_patch; the result adds the patch. ' +
    'check_only: true previews. A command-only action is refused.',
  kind: 'patch',
  input: { ...rangeInput, title: z.string().min(1).max(1000), ...patching },
  output: {
    ...applyPatchTool.output,
    patch: z.string().describe('The V4A patch the action became.'),
    expected_versions: z.record(z.string(), z.string()),
    command_not_run: z.string().optional().describe('The command the action also names, which was not run (only its edit was applied).'),
  },
  create: (deps: Deps) => async (args, call) => {
    const features = featuresOf(deps);
    const ws = editableWorkspace(deps, args, 'apply_code_action');
    const file = await readWorkspaceFile(deps, ws, args.path);
    const range = rangeOf(file, args);
    const all = await actionsFor(file, range, args.kind, features);
    const matching = all.filter((a) => a.title === args.title);
    if (matching.length === 0) {
      const titles = all.slice(0, 20).map((a) => a.title);
      throw new InvalidArgumentsError(`No code action titled "${args.title}" is offered there${all.length > 0 ? `; offered: ${titles.map((t) => `"${t}"`).join(', ')}${all.length > titles.length ? ', …' : ''}` : ' (none is)'}.`, {
        field: 'title',
        hint: 'Call code_actions for the same range and copy a title.',
        details: { offered: titles },
      });
    }
    if (matching.length > 1) {
      throw new InvalidArgumentsError(`${matching.length} code actions are titled "${args.title}"; name the one with kind.`, { field: 'kind', details: { kinds: matching.map((a) => a.kind ?? '') } });
    }
    const action = matching[0] as CodeActionInfo;
    if (!action.edit && !action.command) throw new InvalidArgumentsError(`"${action.title}" has no edit to apply (its server gave none).`, { field: 'title' });
    if (!action.edit) {
      // A command of an extension can change anything, without versions, review or the ledger: it is not run.
      throw new ToolError('UNAVAILABLE', `"${action.title}" only runs the command ${action.command?.id ?? ''} of an extension; CodeSpace applies only edits, as patches.`, {
        hint: 'Ask the developer to apply it in the editor (the lightbulb), or make the change with apply_patch.',
        details: { reason: 'command_only', ...(action.command ? { command: action.command.id } : {}) },
      });
    }
    if ('refused' in action.edit) throw new InvalidArgumentsError(`"${action.title}" cannot be applied: ${action.edit.refused}.`, { field: 'title' });
    if (action.edit.fileOperations > 0) {
      throw new InvalidArgumentsError(`"${action.title}" also creates, renames or deletes files, which apply_code_action does not do.`, { field: 'title', hint: 'Make the change with apply_patch (it can add, move and delete files).' });
    }
    const files = await checkedEdits(deps, ws, action.edit.edits, 'The code action');
    const result = await runAsPatch(deps, ws, workspaceEditToPatch(files, { field: 'title' }), args, call);
    return { ...result, ...(action.command ? { command_not_run: action.command.id } : {}) };
  },
});

export const formatTool = defineTool({
  name: 'format',
  title: 'Format a file',
  description:
    'Formats a file, or lines of it, with the editor\'s formatter, as one apply_patch. changed: false when no ' +
    'formatter changes anything (formatted, or none installed).',
  kind: 'patch',
  input: {
    workspace_id: z.string().min(1),
    path: z.string().min(1),
    start_line: z.number().int().min(1).optional(),
    end_line: z.number().int().min(1).optional(),
    ...patching,
  },
  output: {
    changed: z.boolean(),
    ...z.object(applyPatchTool.output).partial().shape,
    patch: z.string().optional().describe('The V4A patch the formatting became.'),
    expected_versions: z.record(z.string(), z.string()).optional(),
  },
  create: (deps: Deps) => async (args, call) => {
    const features = featuresOf(deps);
    const ws = editableWorkspace(deps, args, 'format');
    const file = await readWorkspaceFile(deps, ws, args.path);
    let range: TextRange | undefined;
    if (args.start_line !== undefined || args.end_line !== undefined) {
      const first = args.start_line ?? 1;
      const last = args.end_line ?? file.lines.length;
      checkPosition(file, first, 1);
      checkPosition(file, last, 1);
      if (last < first) throw new InvalidArgumentsError(`end_line ${last} is before start_line ${first}.`, { field: 'end_line' });
      range = { start: { line: first, character: 1 }, end: { line: last, character: (file.lines[last - 1] as string).length + 1 } };
    }
    await loadedByServers(features, file);
    const edits = await features.formatEdits(file.abs, range);
    // VS Code's formatting commands answer the same when no formatter is installed and when none changes anything.
    if (!edits) return { changed: false };
    const built = workspaceEditToPatch(await checkedEdits(deps, ws, [edits], 'The formatting'), 'empty');
    if (built.files.length === 0) return { changed: false };
    return { changed: true, ...(await runAsPatch(deps, ws, built, args, call)) };
  },
});
