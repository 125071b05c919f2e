import type { Disposable } from '../base/disposable';
import { Emitter } from '../base/emitter';

/** A tool group's name (the catalogue's table, src/app/catalogue.ts, names them). */
export type ToolGroup = string;

/** The groups of a catalogue: their names in catalogue order, each group's tools, and the group of a tool. */
export interface ToolGroupTable {
  readonly names: readonly ToolGroup[];
  /** Groups served only when the operator turns them on (TOOL_GROUPS_ON_SETTING): off by default. */
  readonly optIn: readonly ToolGroup[];
  toolsOf(group: ToolGroup): readonly string[];
  groupOf(toolName: string): ToolGroup | undefined;
}

/** The operator setting that turns tool groups off (TOOLS.md "Tool groups"). */
export const TOOL_GROUPS_SETTING = 'codespace.tools.disabledGroups';
/** The operator setting that turns the groups served only on request on (TOOLS.md "Tool groups"). */
export const TOOL_GROUPS_ON_SETTING = 'codespace.tools.enabledGroups';

/** What the operator turned off, as workspace_info reports it. */
export interface ToolGroupsState {
  /** Groups not served (turned off, or served only on request and not turned on), in catalogue order. */
  readonly disabled: readonly ToolGroup[];
  /** Of those, the groups served only on request that are not turned on. */
  readonly notEnabled: readonly ToolGroup[];
  /** Their tools, in catalogue order. */
  readonly tools: readonly string[];
  /** Entries of the settings that name no group (ignored). */
  readonly unknown: readonly string[];
}

/** The group names of a setting's entries, and the entries that name none. */
function namedGroups(table: ToolGroupTable, entries: readonly unknown[], unknown: string[]): Set<string> {
  const named = new Set<string>();
  for (const raw of entries) {
    if (typeof raw !== 'string') continue;
    const name = raw.trim();
    if (table.names.includes(name)) named.add(name);
    else if (!unknown.includes(name)) unknown.push(name);
  }
  return named;
}

/**
 * Which tool groups are served, from the operator's setting (read fresh on every question, like the limits).
 * `refresh()` re-reads it and, when what is served changed, tells every listener: each MCP session then sends
 * notifications/tools/list_changed.
 */
export class ToolGroups implements Disposable {
  private readonly changes: Emitter<ToolGroupsState>;
  private last: string;

  constructor(
    private readonly table: ToolGroupTable,
    private readonly setting: () => readonly unknown[] = () => [],
    onListenerError?: (err: unknown) => void,
    private readonly enabledSetting: () => readonly unknown[] = () => [],
  ) {
    this.changes = new Emitter<ToolGroupsState>(onListenerError);
    this.last = this.state().disabled.join(',');
  }

  state(): ToolGroupsState {
    const unknown: string[] = [];
    const off = namedGroups(this.table, this.setting(), unknown);
    const on = namedGroups(this.table, this.enabledSetting(), unknown);
    // Turned off wins over turned on: a group both name is not served.
    const notEnabled = this.table.names.filter((g) => this.table.optIn.includes(g) && !on.has(g) && !off.has(g));
    const disabled = this.table.names.filter((g) => off.has(g) || notEnabled.includes(g));
    return { disabled, notEnabled, tools: disabled.flatMap((g) => this.table.toolsOf(g)), unknown };
  }

  /** What workspace_info notes: the groups turned off, and setting entries that name no group. */
  notes(): string[] {
    const { disabled, notEnabled, unknown } = this.state();
    const notes: string[] = [];
    const off = disabled.filter((g) => !notEnabled.includes(g));
    if (off.length > 0) notes.push(`Turned off by the operator (${TOOL_GROUPS_SETTING}): ${off.join(', ')}; those tools are not served.`);
    if (notEnabled.length > 0) notes.push(`Served only when the developer turns them on (${TOOL_GROUPS_ON_SETTING}): ${notEnabled.join(', ')}.`);
    if (unknown.length > 0) notes.push(`${TOOL_GROUPS_SETTING} or ${TOOL_GROUPS_ON_SETTING} names no group ${unknown.map((g) => JSON.stringify(g)).join(', ')} (ignored); the groups are ${this.table.names.join(', ')}.`);
    return notes;
  }

  /** Why this tool is not served now: its group, and the setting that would serve it (undefined: it is served). */
  offReason(toolName: string): { group: ToolGroup; setting: string; notEnabled: boolean } | undefined {
    const group = this.table.groupOf(toolName);
    if (group === undefined) return undefined;
    const state = this.state();
    if (!state.disabled.includes(group)) return undefined;
    const notEnabled = state.notEnabled.includes(group);
    return { group, setting: notEnabled ? TOOL_GROUPS_ON_SETTING : TOOL_GROUPS_SETTING, notEnabled };
  }

  /** Re-reads the settings; tells the listeners when the set of groups turned off changed. */
  refresh(): void {
    const now = this.state();
    const key = now.disabled.join(',');
    if (key === this.last) return;
    this.last = key;
    this.changes.emit(now);
  }

  onDidChange(listener: (state: ToolGroupsState) => void): Disposable {
    return this.changes.on(listener);
  }

  dispose(): void {
    this.changes.dispose();
  }
}
