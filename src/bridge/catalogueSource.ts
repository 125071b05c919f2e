// What the bridge answers before it has found the window, from the one definition the window serves: the tool
// catalogue (src/app/catalogue.ts) with the schemas of src/mcp/toolSchemas.ts, and the server's identity. esbuild computes
// it once at build time (scripts/shippedCatalogue.mjs) and puts the result in dist/stdio.js as data; run from the
// sources (tests), shippedCatalogue.ts computes it here.
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { CATALOGUE_GROUPS, toolCatalogue } from '../app/catalogue';
import { ToolGroups } from '../kernel/toolGroups';
import { ADVERTISED_CAPABILITIES, INSTRUCTIONS, serverInfo } from '../mcp/serverIdentity';
import { listedTool } from '../mcp/toolSchemas';

export interface ShippedCatalogue {
  /** tools/list as a window with the default tool groups (`codespace.tools.disabledGroups` and `enabledGroups`: none) serves it. */
  readonly tools: readonly Tool[];
  readonly serverInfo: { readonly name: string; readonly title: string; readonly version: string };
  readonly instructions: string;
  readonly capabilities: typeof ADVERTISED_CAPABILITIES;
  /** The 2025-era versions the window's SDK (the same package) accepts in `initialize`, and the one it prefers. */
  readonly protocolVersions: { readonly supported: readonly string[]; readonly latest: string };
}

export function computeShippedCatalogue(version: string): ShippedCatalogue {
  const off = new Set(new ToolGroups(CATALOGUE_GROUPS, () => []).state().tools);
  return {
    tools: toolCatalogue()
      .filter((t) => !off.has(t.name))
      .map(listedTool),
    serverInfo: serverInfo(version),
    instructions: INSTRUCTIONS,
    capabilities: ADVERTISED_CAPABILITIES,
    protocolVersions: { supported: [...SUPPORTED_PROTOCOL_VERSIONS], latest: LATEST_PROTOCOL_VERSION },
  };
}
