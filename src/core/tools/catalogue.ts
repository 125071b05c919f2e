import { applyPatchTool } from './applyPatch';
import { approvalCreateTool, approvalResolveTool, operationResumeTool } from './approvalTools';
import { findTool } from './find';
import { operationStatusTool } from './operationStatus';
import { processTools } from './processTools';
import { readTool } from './read';
import { searchTool } from './search';
import { steeringTools } from './steeringTools';
import type { AnyTool } from './tool';
import { workspaceInfoTool } from './workspaceInfo';
import { editorTools } from './editorTools';

/**
 * The groups an operator can turn off (`codespace.tools.disabledGroups`), each with its tools. The tools of no group
 * are always served: workspace_info says what is off, and operation_resume finishes every held request (a held
 * apply_patch, rename_symbol or exec_command needs it whatever else is served).
 */
export const TOOL_GROUPS = {
  /** find, read, search. */
  files: [findTool, readTool, searchTool],
  /** apply_patch and its record. */
  patch: [applyPatchTool, operationStatusTool],
  /** Holds the agent opens or decides itself. */
  approvals: [approvalCreateTool, approvalResolveTool],
  /** exec_command and the tools that act on its processes. */
  process: processTools,
  /** Works and the developer's instructions. */
  steering: steeringTools,
  /** The editor's language features and what the developer looks at. */
  editor: editorTools,
} as const satisfies Record<string, readonly AnyTool[]>;

export type ToolGroup = keyof typeof TOOL_GROUPS;

export const TOOL_GROUP_NAMES = Object.keys(TOOL_GROUPS) as ToolGroup[];

/** Every tool the server offers, in the order tools/list shows them, with its group (none: always served). */
function entries(): { tool: AnyTool; group?: ToolGroup }[] {
  const of = (group: ToolGroup): { tool: AnyTool; group: ToolGroup }[] => TOOL_GROUPS[group].map((tool) => ({ tool, group }));
  return [
    { tool: workspaceInfoTool },
    ...of('files'),
    ...of('patch'),
    ...of('approvals'),
    { tool: operationResumeTool },
    ...of('process'),
    ...of('steering'),
    ...of('editor'),
  ];
}

/** Every tool the server offers, in the order tools/list shows them. */
export function toolCatalogue(): AnyTool[] {
  return entries().map((e) => e.tool);
}

const GROUP_OF = new Map(entries().flatMap((e) => (e.group ? [[e.tool.name, e.group] as const] : [])));

/** The group a tool of the catalogue belongs to; undefined for a tool that is always served. */
export function toolGroupOf(name: string): ToolGroup | undefined {
  return GROUP_OF.get(name);
}
