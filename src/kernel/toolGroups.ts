import type { Disposable } from '../base/disposable';
import { Emitter } from '../base/emitter';

/** A tool group's name (the catalogue's table, src/app/catalogue.ts, names them). */
export type ToolGroup = string;

/** The groups of a catalogue: their names in catalogue order, each group's tools, and the group of a tool. */
export interface ToolGroupTable {
  readonly names: readonly ToolGroup[];
  toolsOf(group: ToolGroup): readonly string[];
  groupOf(toolName: string): ToolGroup | undefined;
  /** Groups served only when the operator turns them on (TOOL_GROUPS_ON_SETTING). */
  readonly optIn?: readonly ToolGroup[];
}

/** The operator setting that turns tool groups off (TOOLS.md "Tool groups"). */
export const TOOL_GROUPS_SETTING = 'codespace.tools.disabledGroups';
/** The operator setting that turns on the groups served only on request (the table's `optIn`). */
export const TOOL_GROUPS_ON_SETTING = 'codespace.tools.enabledGroups';

/** What the operator turned off, as workspace_info reports it. */
export interface ToolGroupsState {
  /** Groups turned off, in catalogue order. */
  readonly disabled: readonly ToolGroup[];
  /** Their tools, in catalogue order. */
  readonly tools: readonly string[];
  /** Entries of the setting that name no group (ignored). */
  readonly unknown: readonly string[];
  /** Groups served only on request that the operator has not turned on (and not turned off either). */
  readonly notEnabled: readonly ToolGroup[];
  /** Every tool not served: those of `disabled` and of `notEnabled`. */
  readonly unserved: readonly string[];
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
    this.last = this.key(this.state());
  }

  private key(state: ToolGroupsState): string {
    return `${state.disabled.join(',')};${state.notEnabled.join(',')}`;
  }

  state(): ToolGroupsState {
    const named = new Set<string>();
    const unknown: string[] = [];
    for (const raw of this.setting()) {
      if (typeof raw !== 'string') continue;
      const name = raw.trim();
      if (this.table.names.includes(name)) named.add(name);
      else if (!unknown.includes(name)) unknown.push(name);
    }
    const disabled = this.table.names.filter((g) => named.has(g));
    const on = new Set(this.enabledSetting().filter((x): x is string => typeof x === 'string').map((x) => x.trim()));
    const notEnabled = (this.table.optIn ?? []).filter((g) => !named.has(g) && !on.has(g));
    const tools = disabled.flatMap((g) => this.table.toolsOf(g));
    return { disabled, tools, unknown, notEnabled, unserved: [...tools, ...notEnabled.flatMap((g) => this.table.toolsOf(g))] };
  }

  /** What workspace_info notes: the groups turned off, and setting entries that name no group. */
  notes(): string[] {
    const { disabled, unknown } = this.state();
    const notes: string[] = [];
    if (disabled.length > 0) notes.push(`Turned off by the operator (${TOOL_GROUPS_SETTING}): ${disabled.join(', ')}; those tools are not served.`);
    if (unknown.length > 0) notes.push(`${TOOL_GROUPS_SETTING} names no group ${unknown.map((g) => JSON.stringify(g)).join(', ')} (ignored); the groups are ${this.table.names.join(', ')}.`);
    return notes;
  }

  /** The group that turns this tool off, when it is off now; undefined when it is served. */
  disabledGroupOf(toolName: string): ToolGroup | undefined {
    const group = this.table.groupOf(toolName);
    const state = this.state();
    return group !== undefined && (state.disabled.includes(group) || state.notEnabled.includes(group)) ? group : undefined;
  }

  /** Re-reads the setting; tells the listeners when the set of groups turned off changed. */
  refresh(): void {
    const now = this.state();
    const key = this.key(now);
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
