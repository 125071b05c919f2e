import { z } from 'zod';
import { LANGUAGE_LIMITS, LocationMapper, boundedText, checkPosition, featuresOf, locationSchema, positionInput, rangeSchema, readWorkspaceFile, sortLocations } from './language';
import { defineTool } from './tool';
import type { CoreServices } from './tool';

const target = {
  workspace_id: z.string().min(1).describe('Workspace id from workspace_info.'),
  path: z.string().min(1).describe('File path relative to the workspace root, "/"-separated.'),
  ...positionInput,
};

const locationsOutput = {
  locations: z.array(locationSchema),
  outside: z.number().describe('Locations outside every workspace folder (for example a library\'s declaration files), dropped.'),
  truncated: z.boolean(),
};

const positionNote = 'line and character are 1-based (character in UTF-16 code units, as read\'s start_column); a position past the end of its line or file is INVALID_ARGUMENTS.';

/** Definition and references share one path: check the position, ask the editor, confine and bound what it says. */
async function locationsAt(
  services: CoreServices,
  args: { workspace_id: string; path: string; line: number; character: number },
  which: 'definition' | 'references',
): Promise<{ locations: z.infer<typeof locationSchema>[]; outside: number; truncated: boolean }> {
  const features = featuresOf(services);
  const ws = services.workspaces.get(args.workspace_id);
  const file = await readWorkspaceFile(services, ws, args.path);
  const pos = checkPosition(file, args.line, args.character);
  const mapper = new LocationMapper(services);
  const { locations, truncated } = await mapper.mapAll(sortLocations(await features[which](file.abs, pos)), LANGUAGE_LIMITS.maxLocations);
  return { locations, outside: mapper.outside, truncated };
}

export const definitionTool = defineTool({
  name: 'definition',
  title: 'Go to definition',
  description:
    'Where the symbol at a position is defined, as the editor\'s language server says ("Go to Definition"): each location with path, range and its line as context. ' +
    `${positionNote} Locations outside the workspace folders are only counted in outside.`,
  kind: 'inspect',
  input: target,
  output: locationsOutput,
  handler: (args, { services }) => locationsAt(services, args, 'definition'),
});

export const referencesTool = defineTool({
  name: 'references',
  title: 'Find all references',
  description:
    'Every use of the symbol at a position, declaration included, as the editor\'s language server finds them ("Find All References"), sorted by path and position, each with its line as context. ' +
    `${positionNote} At most ${LANGUAGE_LIMITS.maxLocations}; truncated: true means more. Uses outside the workspace folders are only counted in outside.`,
  kind: 'inspect',
  input: target,
  output: locationsOutput,
  handler: (args, { services }) => locationsAt(services, args, 'references'),
});

export const hoverTool = defineTool({
  name: 'hover',
  title: 'Hover information',
  description:
    'What the editor shows on hover at a position: the type, signature and documentation of the symbol there (Markdown), and the range it describes. ' +
    `${positionNote} Text is bounded to ${LANGUAGE_LIMITS.maxHoverChars} characters (truncated). An empty contents: nothing is known there.`,
  kind: 'inspect',
  input: target,
  output: {
    contents: z.string().describe('The hover texts, separated by a blank line.'),
    range: rangeSchema.optional(),
    truncated: z.boolean(),
  },
  async handler(args, { services }) {
    const features = featuresOf(services);
    const ws = services.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(services, ws, args.path);
    const pos = checkPosition(file, args.line, args.character);
    const hovers = await features.hover(file.abs, pos);
    const parts = hovers.flatMap((h) => h.contents).filter((c) => c.trim() !== '');
    const { text, truncated } = boundedText(parts.join('\n\n'), LANGUAGE_LIMITS.maxHoverChars);
    const range = hovers.find((h) => h.range)?.range;
    return { contents: text, ...(range ? { range } : {}), truncated };
  },
});
