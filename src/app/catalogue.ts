import { APPROVAL_TOOLS, operationResumeTool } from '../features/review/common/approvalTools';
import { CODE_TOOLS, EDITOR_TOOLS } from '../features/editor/common/editorTools';
import { DEBUG_TOOLS } from '../features/debug/common/debugTools';
import { FILE_TOOLS } from '../features/files/common/fileTools';
import { PATCH_TOOLS } from '../features/patches/common/patchTools';
import { PROCESS_TOOLS } from '../features/processes/common/tools/processTools';
import { TASK_TOOLS } from '../features/tasks/common/taskTools';
import { STEERING_TOOLS } from '../features/works/common/steeringTools';
import type { ToolGroupTable } from '../kernel/toolGroups';
import type { AnyTool, AnyToolFactory, ToolContract } from '../kernel/tool';
import { workspaceInfoTool } from '../features/files/common/workspaceInfo';

/**
 * The groups an operator can turn off (`codespace.tools.disabledGroups`), each with its tools. The tools of no group
 * are always served: workspace_info says what is off, and operation_resume finishes every held request (a held
 * apply_patch, rename_symbol or exec_command needs it whatever else is served). Static data: what each module
 * serves, without anything it runs with (the stdio bridge ships the catalogue computed from it at build time).
 */
export const TOOL_GROUPS = {
  /** find, read, search. */
  files: FILE_TOOLS,
  /** apply_patch and its record. */
  patch: PATCH_TOOLS,
  /** Holds the agent opens or decides itself. */
  approvals: APPROVAL_TOOLS,
  /** exec_command and the tools that act on its processes. */
  process: PROCESS_TOOLS,
  /** Works and the developer's instructions. */
  steering: STEERING_TOOLS,
  /** The editor's language features and what the developer looks at. */
  editor: EDITOR_TOOLS,
  /** Quick fixes, refactorings and formatting as patches, and call hierarchies (served on request). */
  code: CODE_TOOLS,
  /** The editor's tasks, run through exec_command (served on request). */
  tasks: TASK_TOOLS,
  /** The editor's debugger, driven in sessions the agent starts (served on request; its debuggee is not sandboxed). */
  debug: DEBUG_TOOLS,
} as const satisfies Record<string, readonly AnyToolFactory[]>;

export type ToolGroup = keyof typeof TOOL_GROUPS;

export const TOOL_GROUP_NAMES = Object.keys(TOOL_GROUPS) as ToolGroup[];

/**
 * The groups served only when the developer turns them on (`codespace.tools.enabledGroups`): what every session
 * pays for in its tool list stays within its budget (bench/toolListSize.ts), and the editor's runtime is offered to
 * agents only where the developer wants it.
 */
export const OPT_IN_GROUPS: readonly ToolGroup[] = ['code', 'tasks', 'debug'];

/** Every tool the server offers, in the order tools/list shows them, with its group (none: always served). */
function entries(): { tool: AnyToolFactory; group?: ToolGroup }[] {
  const of = (group: ToolGroup): { tool: AnyToolFactory; group: ToolGroup }[] => TOOL_GROUPS[group].map((tool) => ({ tool, group }));
  return [
    { tool: workspaceInfoTool },
    ...of('files'),
    ...of('patch'),
    ...of('approvals'),
    { tool: operationResumeTool },
    ...of('process'),
    ...of('steering'),
    ...of('editor'),
    ...of('code'),
    ...of('tasks'),
    ...of('debug'),
  ];
}

/** Every tool the server offers, in the order tools/list shows them: the contracts, creatable with their dependencies. */
export function toolCatalogue(): AnyToolFactory[] {
  return entries().map((e) => e.tool);
}

const GROUP_OF = new Map(entries().flatMap((e) => (e.group ? [[e.tool.name, e.group] as const] : [])));

/** The group a tool of the catalogue belongs to; undefined for a tool that is always served. */
export function toolGroupOf(name: string): ToolGroup | undefined {
  return GROUP_OF.get(name);
}

/** The catalogue's groups as the kernel's ToolGroups reads them. */
export const CATALOGUE_GROUPS: ToolGroupTable = {
  names: TOOL_GROUP_NAMES,
  optIn: OPT_IN_GROUPS,
  toolsOf: (group) => TOOL_GROUPS[group as ToolGroup].map((t) => t.name),
  groupOf: toolGroupOf,
};

/**
 * The catalogue's tools as the modules created them (each module's `tools(deps)`), in the catalogue's order; tools of
 * no catalogue entry (a test's own) follow in the order given. Fails when a catalogue tool is missing or created
 * twice, or when a created tool's contract is not its catalogue entry's: what is served is exactly what is listed.
 */
export function assembleCatalogue(created: readonly AnyTool[]): AnyTool[] {
  const byName = new Map<string, AnyTool>();
  for (const tool of created) {
    if (byName.has(tool.name)) throw new Error(`The tool ${tool.name} was created twice.`);
    byName.set(tool.name, tool);
  }
  const listed = toolCatalogue().map((entry: ToolContract) => {
    const tool = byName.get(entry.name);
    if (!tool) throw new Error(`No module created the tool ${entry.name} of the catalogue.`);
    if (tool.input !== entry.input || tool.output !== entry.output || tool.kind !== entry.kind) throw new Error(`The tool ${entry.name} was created with another contract than the catalogue's.`);
    return tool;
  });
  const names = new Set(listed.map((t) => t.name));
  return [...listed, ...created.filter((t) => !names.has(t.name))];
}
