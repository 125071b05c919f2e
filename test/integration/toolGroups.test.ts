import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { call, callError, connectToFirstFolder } from './helpers';

/**
 * `codespace.tools.disabledGroups` in the editor: changing the setting takes effect at once for a connected
 * session (notifications/tools/list_changed, a shorter tools/list, TOOL_DISABLED for a call anyway, workspace_info
 * saying what is off), and clearing it serves the group again.
 */
describe('tool groups the operator turns off (codespace.tools.disabledGroups)', () => {
  let client: Client;
  let wsId: string;
  let changes = 0;
  const config = () => vscode.workspace.getConfiguration('codespace');
  const listed = async (): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);
  const waitForChanges = async (n: number): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (changes < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(changes, n, 'notifications/tools/list_changed arrived');
  };

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
  });
  after(async () => {
    await config().update('tools.disabledGroups', undefined, vscode.ConfigurationTarget.Global);
    await client?.close();
  });

  it('turning the editor and steering tools off and on again applies to the connected session at once', async () => {
    const all = await listed();
    assert.ok(all.includes('hover') && all.includes('work_open'), all.join(', '));
    // Groups served only on request (codespace.tools.enabledGroups) are off already, and stay so.
    const offBefore = (await call<{ tools_off?: { groups: string[] } }>(client, 'workspace_info', { workspace_id: wsId })).tools_off;

    await config().update('tools.disabledGroups', ['editor', 'steering'], vscode.ConfigurationTarget.Global);
    await waitForChanges(1);
    const now = await listed();
    for (const gone of ['diagnostics', 'hover', 'rename_symbol', 'editor_context', 'work_open', 'steer_claim_next']) assert.ok(!now.includes(gone), `${gone} is not listed`);
    for (const kept of ['workspace_info', 'read', 'apply_patch', 'exec_command', 'operation_resume']) assert.ok(now.includes(kept), `${kept} is listed`);

    const err = await callError(client, 'hover', { workspace_id: wsId, path: 'a.txt', line: 1, character: 1 });
    assert.equal(err.code, 'TOOL_DISABLED');
    assert.match(err.message, /codespace\.tools\.disabledGroups includes "editor"/);

    const info = await call<{ tools_off?: { groups: string[] }; notes: string[] }>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual([...(info.tools_off?.groups ?? [])].sort(), [...(offBefore?.groups ?? []), 'steering', 'editor'].sort());

    await config().update('tools.disabledGroups', undefined, vscode.ConfigurationTarget.Global);
    await waitForChanges(2);
    assert.deepEqual(await listed(), all);
    assert.deepEqual((await call<{ tools_off?: unknown }>(client, 'workspace_info', { workspace_id: wsId })).tools_off, offBefore);
  });
});
