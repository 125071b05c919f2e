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
  end_line: z.number().int().min(1).optional().describe('End of the range (default: the position itself).'),
  end_character: z.number().int().min(1).optional(),
  kind: z.string().min(1).max(200).optional().describe('Only actions of this kind: quickfix, refactor, source.organizeImports, ...'),
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

/** What applying an action does: writes its edit, runs its command after the edit, or only runs a command. */
function appliesOf(a: CodeActionInfo): 'edit' | 'edit_and_command' | 'command' | 'nothing' {
  if (a.edit && a.command) return 'edit_and_command';
  if (a.edit) return 'edit';
  return a.command ? 'command' : 'nothing';
}

async function actionsFor(file: CheckedFile, range: TextRange, kind: string | undefined, resolve: boolean, features: LanguageFeatures): Promise<CodeActionInfo[]> {
  // Quick fixes are offered for the diagnostics the range overlaps: a file no server has reported on yet is first
  // opened and waited for (at most FIRST_REPORT_MS; a file already reported on is not waited for).
  if (features.reportsOn(file.abs)) await features.settle([file.abs], { timeoutMs: FIRST_REPORT_MS, requireChange: false });
  return features.codeActions(file.abs, range, { ...(kind !== undefined ? { kind } : {}), resolve });
}

const actionSchema = z.object({
  title: z.string(),
  kind: z.string().optional(),
  preferred: z.boolean().optional(),
  applies: z.enum(['edit', 'edit_and_command', 'command', 'nothing']).describe('edit: apply_code_action writes it as a patch; command: held for the developer.'),
  fixes: z.array(z.object({ message: z.string(), range: rangeSchema, code: z.string().optional() })).optional(),
  disabled: z.string().optional().describe('Why it cannot be applied now.'),
});

export const codeActionsTool = defineTool({
  name: 'code_actions',
  title: 'Quick fixes and refactorings',
  description:
    'The quick fixes, refactorings and source actions the language servers offer for a position or range (the ' +
    'diagnostics there included). Apply one with apply_code_action by its title.',
  kind: 'inspect',
  input: rangeInput,
  output: { actions: z.array(actionSchema), truncated: z.boolean() },
  create: (deps: Deps) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(deps, ws, args.path);
    const range = rangeOf(file, args);
    const all = await actionsFor(file, range, args.kind, false, features);
    const actions = all.slice(0, MAX_CODE_ACTIONS).map((a) => ({
      title: boundedText(a.title, LANGUAGE_LIMITS.maxContextChars).text,
      ...(a.kind !== undefined ? { kind: a.kind } : {}),
      ...(a.preferred ? { preferred: true } : {}),
      // A server that computes edits lazily lists an action with neither: apply_code_action asks for its edit.
      applies: appliesOf(a) === 'nothing' ? ('edit' as const) : appliesOf(a),
      ...(a.diagnostics.length > 0
        ? { fixes: a.diagnostics.map((d) => ({ message: boundedText(d.message, LANGUAGE_LIMITS.maxMessageChars).text, range: d.range, ...(d.code !== undefined ? { code: d.code } : {}) })) }
        : {}),
      ...(a.disabled !== undefined ? { disabled: a.disabled } : {}),
    }));
    return { actions, truncated: all.length > MAX_CODE_ACTIONS };
  },
});

export const applyCodeActionTool = defineTool({
  name: 'apply_code_action',
  title: 'Apply a quick fix or refactoring',
  description:
    'Applies the code action with this title (as code_actions lists it for the same range) as one apply_patch ' +
    '(versions, approvals, review, ledger; the result adds the patch). check_only: true previews. An action that ' +
    'only runs a command is refused.',
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
    const all = await actionsFor(file, range, args.kind, true, features);
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
    if (action.disabled !== undefined) throw new InvalidArgumentsError(`"${action.title}" cannot be applied now: ${action.disabled}`, { field: 'title' });
    if (!action.edit) {
      // A command of an extension can change anything, without versions, review or the ledger: it is not run.
      throw new ToolError('UNAVAILABLE', `"${action.title}" only runs the command ${action.command?.id ?? '(none)'} of an extension; CodeSpace applies only edits, as patches.`, {
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
    'Formats a file, or lines of it, with the formatter the editor uses for it, as one apply_patch (versions, ' +
    'approvals, review, ledger). changed: false when it is already formatted.',
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
    const edits = await features.formatEdits(file.abs, range);
    if (!edits) {
      throw new ToolError('UNAVAILABLE', `No formatter is installed for ${file.rel}${range ? ' (for a range of it)' : ''}.`, {
        hint: 'Run the project\'s formatter with exec_command instead.',
        details: { reason: 'no_formatter', path: file.rel },
      });
    }
    const files = await checkedEdits(deps, ws, [edits], 'The formatting');
    const built = workspaceEditToPatch(files, 'empty');
    if (built.files.length === 0) return { changed: false };
    return { changed: true, ...(await runAsPatch(deps, ws, built, args, call)) };
  },
});
