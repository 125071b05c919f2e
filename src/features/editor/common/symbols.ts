import { z } from 'zod';
import type { DocumentSymbolNode } from './languageFeatures';
import { LANGUAGE_LIMITS, LocationMapper, featuresOf, locationSchema, rangeSchema, readWorkspaceFile } from './language';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';

interface SymbolView {
  name: string;
  kind: string;
  detail?: string;
  range: z.infer<typeof rangeSchema>;
  selection_range: z.infer<typeof rangeSchema>;
  children?: SymbolView[];
}

const symbolSchema: z.ZodType<SymbolView> = z.lazy(() =>
  z.object({
    name: z.string(),
    kind: z.string(),
    detail: z.string().optional(),
    range: rangeSchema,
    selection_range: rangeSchema,
    children: z.array(symbolSchema).optional(),
  }),
);

/** The tree, breadth-bounded by `maxSymbols` nodes in document order and depth-bounded by `maxSymbolDepth`. */
export function boundSymbols(nodes: readonly DocumentSymbolNode[]): { symbols: SymbolView[]; total: number; truncated: boolean } {
  let budget: number = LANGUAGE_LIMITS.maxSymbols;
  let total = 0;
  let truncated = false;
  const walk = (list: readonly DocumentSymbolNode[], depth: number): SymbolView[] => {
    const out: SymbolView[] = [];
    for (const n of list) {
      total++;
      if (budget <= 0 || depth > LANGUAGE_LIMITS.maxSymbolDepth) {
        truncated = true;
        countRest(n.children);
        continue;
      }
      budget--;
      const children = walk(n.children, depth + 1);
      out.push({
        name: n.name,
        kind: n.kind,
        ...(n.detail ? { detail: n.detail } : {}),
        range: n.range,
        selection_range: n.selectionRange,
        ...(children.length > 0 ? { children } : {}),
      });
    }
    return out;
  };
  const countRest = (list: readonly DocumentSymbolNode[]): void => {
    for (const n of list) {
      total++;
      countRest(n.children);
    }
  };
  const symbols = walk(nodes, 1);
  return { symbols, total, truncated };
}

export const symbolsTool = defineTool({
  name: 'symbols',
  title: 'Symbols of a file',
  description:
    'A file\'s outline from its language server, as a tree. A selection_range is the symbol\'s name: pass its start to ' +
    'definition, references, hover or rename_symbol.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    path: z.string().min(1),
  },
  output: {
    path: z.string(),
    symbols: z.array(symbolSchema),
    total: z.number(),
    truncated: z.boolean(),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs'>) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const file = await readWorkspaceFile(deps, ws, args.path);
    const tree = boundSymbols(await features.documentSymbols(file.abs));
    return { path: file.rel, ...tree };
  },
});

export const workspaceSymbolsTool = defineTool({
  name: 'workspace_symbols',
  title: 'Find symbols by name',
  description:
    'Finds symbols by name in the workspace. Matches outside the workspace folders are only counted (outside).',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    query: z.string().min(1).max(200),
  },
  output: {
    symbols: z.array(z.object({ name: z.string(), kind: z.string(), container: z.string().optional(), location: locationSchema })),
    outside: z.number().describe('Matches outside the workspace folders, dropped.'),
    truncated: z.boolean(),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs'>) => async (args) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const found = await features.workspaceSymbols(args.query);
    const mapper = new LocationMapper(deps);
    const symbols: { name: string; kind: string; container?: string; location: z.infer<typeof locationSchema> }[] = [];
    let truncated = false;
    let otherWorkspace = 0;
    for (const s of found) {
      const location = await mapper.map(s.location, false);
      if (!location) continue;
      if (location.workspace_id !== ws.id) {
        otherWorkspace++;
        continue;
      }
      if (symbols.length >= LANGUAGE_LIMITS.maxLocations) {
        truncated = true;
        break;
      }
      symbols.push({ name: s.name, kind: s.kind, ...(s.containerName ? { container: s.containerName } : {}), location });
    }
    return { symbols, outside: mapper.outside + otherWorkspace, truncated };
  },
});
