// Agent identities inside the real extension host: two agents' credentials issued through Connect an Agent (its
// copied configuration is how a developer hands one over), real MCP clients with them, "not your own review" across
// two sessions of one agent, the agents listed and one revoked (401 for its credential, its sessions closed).
import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { PanelState } from '../../src/shared/panelProtocol';
import { EXTENSION_ID, activateExtension, call, callError, connectClient, connectionFromCommand, folder, pollFor } from './helpers';

interface PanelForTests {
  handleMessage(raw: unknown): Promise<unknown>;
  lastState(): PanelState | undefined;
}

interface AgentEntry {
  id: string;
  name: string;
  sessions: number;
  connected_at?: string;
}

/** Connect an Agent's generic HTTP entry under `name`: the credential is what the clipboard then holds. */
async function issue(name: string): Promise<string> {
  const result = await vscode.commands.executeCommand<{ agent?: { id: string; name: string } }>('codespace.connectAgent', { id: 'http', name });
  assert.equal(result?.agent?.name, name);
  const credential = /^Header: Authorization: Bearer (csa_\S+)$/m.exec(await vscode.env.clipboard.readText())?.[1];
  assert.ok(credential, 'the clipboard holds the agent credential');
  return credential;
}

describe('agent identities (inside VS Code)', function () {
  this.timeout(180_000);
  let url: string;
  let token: string;
  let wsId: string;
  const clients: Client[] = [];
  const connect = async (credential: string): Promise<Client> => {
    const c = await connectClient(url, credential);
    clients.push(c);
    return c;
  };
  const config = () => vscode.workspace.getConfiguration('codespace');

  before(async () => {
    await activateExtension();
    ({ url, token } = await connectionFromCommand());
    await config().update('approvals.agentMayResolve', true, vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await config().update('approvals.agentMayResolve', undefined, vscode.ConfigurationTarget.Global);
    for (const id of ['it-author', 'it-reviewer']) await vscode.commands.executeCommand('codespace.revokeAgent', { id }).then(undefined, () => undefined);
  });

  it('one agent cannot resolve its own hold from a second session; another agent can; the panel lists both and revokes one: its sessions close and its credential gets 401', async () => {
    const author = await issue('it-author');
    const reviewer = await issue('it-reviewer');
    assert.notEqual(author, reviewer);
    const first = await connect(author);
    const second = await connect(author);
    const other = await connect(reviewer);
    const info = await call<{ workspaces: { id: string; name: string }[] }>(first, 'workspace_info', {});
    wsId = info.workspaces.find((w) => w.name === folder(0).name)?.id as string;
    assert.ok(wsId);

    const hold = await call<{ approval_id: string }>(first, 'approval_create', {
      workspace_id: wsId,
      request: { patch: '*** Begin Patch\n*** Add File: agents-held.txt\n+held\n*** End Patch\n', expected_versions: {}, operation_key: 'agents-it' },
    });
    const own = await callError(second, 'approval_resolve', { approval_id: hold.approval_id, decision: 'grant' });
    assert.equal(own.code, 'PERMISSION_DENIED', own.message);
    assert.equal(own.details?.reason, 'self_review');
    assert.equal(own.details?.by, 'agent');
    const denied = await call<{ state: string; decided_by: string }>(other, 'approval_resolve', { approval_id: hold.approval_id, decision: 'deny' });
    assert.equal(denied.state, 'denied');
    assert.equal(denied.decided_by, 'agent');

    const listed = await vscode.commands.executeCommand<AgentEntry[]>('codespace.listAgents', { quiet: true });
    const entry = listed.find((a) => a.id === 'it-author');
    assert.ok(entry && entry.sessions === 2 && entry.connected_at !== undefined, JSON.stringify(listed));
    assert.ok(!JSON.stringify(listed).includes(author), 'the list never carries a credential');

    // The panel shows both agents; its Revoke (the page's message) revokes through the same command.
    const panel = (vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports as { panelForTests?: PanelForTests }).panelForTests;
    assert.ok(panel);
    await vscode.commands.executeCommand('codespace.showPanel');
    await pollFor('the panel lists both agents with their sessions', () => {
      const agents = panel.lastState()?.agents ?? [];
      return agents.find((a) => a.id === 'it-author')?.sessions === 2 && agents.some((a) => a.id === 'it-reviewer') ? true : undefined;
    });
    const reply = await panel.handleMessage({ type: 'revokeAgent', requestId: 'it-revoke', agentId: 'it-author' });
    assert.deepEqual(reply, { type: 'reply', requestId: 'it-revoke', ok: true });
    await pollFor('the panel no longer lists the revoked agent', () => (panel.lastState()?.agents?.some((a) => a.id === 'it-author') === false ? true : undefined));
    const status = (await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${author}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })).status;
    assert.equal(status, 401);
    await assert.rejects(first.callTool({ name: 'workspace_info', arguments: {} }));
    assert.equal((await vscode.commands.executeCommand<AgentEntry[]>('codespace.listAgents', { quiet: true })).some((a) => a.id === 'it-author'), false);
    // The other agent and the window's token keep working.
    await call(other, 'workspace_info', {});
    await call(await connect(token), 'workspace_info', {});
  });
});
