import { z } from 'zod';
import { LANGUAGE_LIMITS, LocationMapper, boundedText, checkPosition, featuresOf, locationSchema, positionInput, rangeSchema, readWorkspaceFile, sortLocations } from './language';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';

/** What the navigation tools use. */
type NavigationDeps = Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs'>;

const target = {
  workspace_id: z.string().min(1),
  path: z.string().min(1),
  ...positionInput,
};

const locationsOutput = {
  locations: z.array(locationSchema),
  outside: z.number().describe('Locations outside every workspace folder (for example a library\'s declaration files), dropped.'),
  truncated: z.boolean(),
};

/** Definition and references share one path: check the position, ask the editor, confine and bound what it says. */
async function locationsAt(
  deps: NavigationDeps,
  args: { workspace_id: string; path: string; line: number; character: number },
  which: 'definition' | 'references',
): Promise<{ locations: z.infer<typeof locationSchema>[]; outside: number; truncated: boolean }> {
  const features = featuresOf(deps);
  const ws = deps.workspaces.get(args.workspace_id);
  const file = await readWorkspaceFile(deps, ws, args.path);
  const pos = checkPosition(file, args.line, args.character);
  const mapper = new LocationMapper(deps);
  const { locations, truncated } = await mapper.mapAll(sortLocations(await features[which](file.abs, pos)), LANGUAGE_LIMITS.maxLocations);
  return { locations, outside: mapper.outside, truncated };
}

export const definitionTool = defineTool({
  name: 'definition',
  title: 'Go to definition',
  description:
    'Where the symbol at a position is defined, each location with its line as context.',
  kind: 'inspect',
  input: target,
  output: locationsOutput,
  create: (deps: NavigationDeps) => (args) => locationsAt(deps, args, 'definition'),
});

export const referencesTool = defineTool({
  name: 'references',
  title: 'Find all references',
  description:
    'Every reference to the symbol at a position, declaration included, each with its line as context.',
  kind: 'inspect',
  input: target,
  output: locationsOutput,
  create: (deps: NavigationDeps) => (args) => locationsAt(deps, args, 'references'),
});

export const hoverTool = defineTool({
  name: 'hover',
  title: 'Hover information',
  description:
    'What VS Code shows on hover at a position: type, signature and docs, as Markdown. Empty: nothing is known there.',
  kind: 'inspect',
  input: target,
  output: {
    contents: z.string().describe('The hover texts, separated by a blank line.'),
    range: rangeSchema.optional(),
    truncated: z.boolean(),
  },
  create: (deps: NavigationDeps) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(deps, ws, args.path);
    const pos = checkPosition(file, args.line, args.character);
    const hovers = await features.hover(file.abs, pos);
    const parts = hovers.flatMap((h) => h.contents).filter((c) => c.trim() !== '');
    const { text, truncated } = boundedText(parts.join('\n\n'), LANGUAGE_LIMITS.maxHoverChars);
    const range = hovers.find((h) => h.range)?.range;
    return { contents: text, ...(range ? { range } : {}), truncated };
  },
});
