import { z } from 'zod';
import { LANGUAGE_LIMITS, LocationMapper, checkPosition, featuresOf, locationSchema, positionInput, rangeSchema, locationKey, readWorkspaceFile } from './language';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';

/** Call sites one call of the hierarchy lists, at most. */
const MAX_SITES = 20;

const callSchema = locationSchema.extend({
  name: z.string(),
  kind: z.string(),
  detail: z.string().optional(),
  sites: z.array(rangeSchema).describe('The calls: in this caller\'s file (incoming), in the asked function\'s file (outgoing).'),
  sites_truncated: z.boolean().optional(),
});

/**
 * call_hierarchy: the functions that call the one at a position (incoming) or that it calls (outgoing), each as a
 * location the way `references` answers (only what lies inside a workspace folder; `outside` counts the rest), with
 * its call sites.
 */
export const callHierarchyTool = defineTool({
  name: 'call_hierarchy',
  title: 'Call hierarchy',
  description:
    'The functions that call the one at a position (incoming) or that it calls (outgoing), with their call sites.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    path: z.string().min(1),
    ...positionInput,
    direction: z.enum(['incoming', 'outgoing']),
  },
  output: {
    items: z.array(locationSchema.extend({ name: z.string(), kind: z.string() })).describe('What the position names (empty: nothing callable there).'),
    calls: z.array(callSchema),
    outside: z.number().describe('Calls outside every workspace folder (for example in a library), dropped.'),
    truncated: z.boolean(),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs'>) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(deps, ws, args.path);
    const pos = checkPosition(file, args.line, args.character);
    const { items, edges } = await features.callHierarchy(file.abs, pos, args.direction);
    // The asked items are not calls: they are mapped apart, so only the calls count in `outside`.
    const itemMapper = new LocationMapper(deps);
    const itemViews = [];
    for (const item of items) {
      const view = await itemMapper.map(item.location);
      if (view) itemViews.push({ ...view, name: item.name, kind: item.kind });
    }
    const mapper = new LocationMapper(deps);
    const calls = [];
    let truncated = false;
    const key = (e: (typeof edges)[number]): string => locationKey(e.item.location);
    const byLocation = [...edges].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    for (const edge of byLocation) {
      const view = await mapper.map(edge.item.location);
      if (!view) continue;
      if (calls.length >= LANGUAGE_LIMITS.maxLocations) {
        truncated = true;
        continue;
      }
      const sites = edge.sites.map((s) => s.range);
      calls.push({
        ...view,
        name: edge.item.name,
        kind: edge.item.kind,
        ...(edge.item.detail !== undefined ? { detail: edge.item.detail } : {}),
        sites: sites.slice(0, MAX_SITES),
        ...(sites.length > MAX_SITES ? { sites_truncated: true } : {}),
      });
    }
    return { items: itemViews, calls, outside: mapper.outside, truncated };
  },
});
