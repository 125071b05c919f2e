/**
 * The tool surface as a real SDK client sees it: the size of tools/list against its budget, what the served
 * schemas keep (every result field, strict arguments, the kind table's annotations), and the operator setting that
 * turns tool groups off (listing, calling, workspace_info, and notifications/tools/list_changed when it changes).
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { OPT_IN_GROUPS, TOOL_GROUPS, TOOL_GROUP_NAMES, toolCatalogue } from '../../src/app/catalogue';
import { kindFlags } from '../../src/kernel/toolKinds';
import { TOOL_LIST_BUDGET_BYTES, measureToolList } from '../../bench/toolListSize';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

describe('tool surface: the tools/list budget and the served schemas', () => {
  let base: string;
  let h: Harness;
  let enabled: readonly string[] = [];

  before(async () => {
    base = await makeTree({ 'proj/a.txt': 'a\n' }, 'codespace-toolsurface-');
    h = await connectHarness([{ root: path.join(base, 'proj'), name: 'proj', profile: 'exec' }], { enabledToolGroups: () => enabled });
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });
  afterEach(() => {
    enabled = [];
    h.services.toolGroups.refresh();
  });

  it(`tools/list for the surface served by default is at most ${TOOL_LIST_BUDGET_BYTES} bytes`, async () => {
    const size = await measureToolList(h.client, h.client.transport as Transport);
    const optIn = OPT_IN_GROUPS.flatMap((g) => TOOL_GROUPS[g].map((t) => t.name));
    assert.deepEqual(size.tools.map((t) => t.name), toolCatalogue().map((t) => t.name).filter((n) => !optIn.includes(n)), 'every tool but those of the groups served on request is listed');
    assert.ok(size.bytes <= TOOL_LIST_BUDGET_BYTES, `tools/list is ${size.bytes} bytes, over the budget of ${TOOL_LIST_BUDGET_BYTES}: ${size.tools.map((t) => `${t.name} ${t.bytes}`).join(', ')}`);
  });

  it('serves every result field, strict arguments and the kind table\'s annotations', async () => {
    enabled = [...OPT_IN_GROUPS];
    h.services.toolGroups.refresh();
    const { tools } = await h.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const def of toolCatalogue()) {
      const t = byName.get(def.name);
      assert.ok(t, def.name);
      assert.equal(t.title, def.title);
      assert.deepEqual(Object.keys(t.outputSchema?.properties ?? {}), Object.keys(def.output), `${def.name}: the output schema names every field`);
      assert.equal(t.outputSchema?.additionalProperties, undefined, `${def.name}: results may carry coordination`);
      assert.equal(t.inputSchema.additionalProperties, false, `${def.name}: unknown arguments are refused`);
      assert.deepEqual(Object.keys(t.inputSchema.properties ?? {}), Object.keys(def.input));
      assert.ok(!('$schema' in t.inputSchema) && !('$schema' in (t.outputSchema ?? {})), `${def.name}: no $schema key`);
      const flags = kindFlags(def.kind);
      // destructiveHint and idempotentHint are defined only for tools that are not read-only.
      assert.deepEqual(t.annotations, flags.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: flags.destructive, idempotentHint: flags.idempotent });
    }
    // A fixed set of values is spelled out in the output schema.
    assert.deepEqual(byName.get('process_status')?.outputSchema?.properties?.termination, { enum: ['exited', 'timeout', 'terminated', 'window_closed', 'unknown'] });
  });

  it('a bound the served input schema states is the one the server checks', async () => {
    const { tools } = await h.client.listTools();
    const search = tools.find((t) => t.name === 'search');
    assert.deepEqual(search?.inputSchema.properties?.max_results, { type: 'integer', minimum: 1, maximum: 2000 });
    assert.equal(toolError(await h.call('search', { workspace_id: 'proj', query: 'a', max_results: 2001 })).code, 'INVALID_ARGUMENTS');
  });
});

describe('tool surface: tool groups the operator turns off (codespace.tools.disabledGroups)', () => {
  let base: string;
  let h: Harness;
  let setting: unknown[] = [];
  const listed = async (): Promise<string[]> => (await h.client.listTools()).tools.map((t) => t.name);

  before(async () => {
    base = await makeTree({ 'proj/a.txt': 'a\n' }, 'codespace-toolgroups-');
    h = await connectHarness([{ root: path.join(base, 'proj'), name: 'proj', profile: 'exec' }], { disabledToolGroups: () => setting });
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });
  afterEach(() => {
    setting = [];
    h.services.toolGroups.refresh();
  });

  it('the manifest offers exactly the catalogue\'s groups', async () => {
    const manifest = JSON.parse(await fsp.readFile(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { items: { enum: string[] }; default: unknown }> } | { properties: Record<string, { items: { enum: string[] }; default: unknown }> }[] };
    };
    const sections = Array.isArray(manifest.contributes.configuration) ? manifest.contributes.configuration : [manifest.contributes.configuration];
    const entry = sections.map((s) => s.properties['codespace.tools.disabledGroups']).find((e) => e !== undefined);
    assert.ok(entry, 'codespace.tools.disabledGroups is contributed');
    assert.deepEqual(entry.items.enum, TOOL_GROUP_NAMES);
    assert.deepEqual(entry.default, []);
  });

  it('a turned-off group is not listed; workspace_info and operation_resume always are', async () => {
    const all = await listed();
    setting = ['editor', 'steering'];
    h.services.toolGroups.refresh();
    const now = await listed();
    const off = [...TOOL_GROUPS.editor, ...TOOL_GROUPS.steering].map((t) => t.name);
    assert.deepEqual(now, all.filter((n) => !off.includes(n)));
    setting = [...TOOL_GROUP_NAMES];
    h.services.toolGroups.refresh();
    assert.deepEqual(await listed(), ['workspace_info', 'operation_resume']);
  });

  it('calling a turned-off tool is a tool error naming the setting and the group, before its arguments are looked at', async () => {
    setting = ['process'];
    h.services.toolGroups.refresh();
    const err = toolError(await h.call('exec_command', { workspace_id: 'proj', command: ['true'], bogus: 1 }));
    assert.equal(err.code, 'TOOL_DISABLED');
    assert.match(err.message, /exec_command is turned off: the operator's setting codespace\.tools\.disabledGroups includes "process"/);
    assert.deepEqual(err.details, { group: 'process', setting: 'codespace.tools.disabledGroups' });
    // Other groups still answer.
    assert.equal(ok<{ content: string }>(await h.call('read', { workspace_id: 'proj', path: 'a.txt' })).content, 'a\n');
  });

  it('workspace_info says what is off, in both forms, and names entries that are no group', async () => {
    const before = ok<Record<string, unknown>>(await h.call('workspace_info', { workspace_id: 'proj' }));
    assert.equal(before.tools_off, undefined);
    setting = ['patch', ' editr ', 7];
    h.services.toolGroups.refresh();
    const info = ok<{ tools_off: { groups: string[]; tools: string[] }; notes: string[] }>(await h.call('workspace_info', { workspace_id: 'proj' }));
    assert.deepEqual(info.tools_off, { groups: ['patch'], tools: ['apply_patch', 'operation_status'] });
    assert.ok(info.notes.some((n) => n.includes('codespace.tools.disabledGroups') && n.includes('patch')), info.notes.join(' | '));
    assert.ok(info.notes.some((n) => n.includes('"editr"') && n.includes('files, patch, approvals, process, steering, editor')), info.notes.join(' | '));
    const list = ok<{ tools_off: { groups: string[] } }>(await h.call('workspace_info', {}));
    assert.deepEqual(list.tools_off.groups, ['patch']);
  });

  it('a change of the setting sends notifications/tools/list_changed to the session; the same setting again sends none', async () => {
    const seen: string[][] = [];
    let notified = 0;
    h.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++;
      seen.push(await listed());
    });
    setting = ['approvals'];
    h.services.toolGroups.refresh();
    h.services.toolGroups.refresh();
    const deadline = Date.now() + 10_000;
    while (seen.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(seen.length, 1, 'one notification');
    assert.ok(!seen[0]?.includes('approval_create') && seen[0]?.includes('operation_resume'), String(seen[0]));
    // An unchanged set of groups (an unknown name added) is no change.
    setting = ['approvals', 'nope'];
    h.services.toolGroups.refresh();
    setting = [];
    h.services.toolGroups.refresh();
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await listed(); // a round trip: any notification sent before it has arrived
    assert.equal(notified, 2, 'a notification for the change back only');
    assert.ok(seen[1]?.includes('approval_create'));
  });

  it('groups partition the catalogue: each tool in at most one, and only workspace_info and operation_resume in none', () => {
    const grouped = Object.values(TOOL_GROUPS).flatMap((tools) => tools.map((t) => t.name));
    assert.equal(new Set(grouped).size, grouped.length);
    assert.deepEqual(toolCatalogue().map((t) => t.name).filter((n) => !grouped.includes(n)), ['workspace_info', 'operation_resume']);
  });
});
