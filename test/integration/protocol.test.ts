import * as assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import * as vscode from 'vscode';
import { modernRequester, type ModernAnswer } from '../unit/helpers/modernRequest';
import { call, connectToFirstFolder, connectionFromCommand, folder } from './helpers';

// MCP 2026-07-28 beside 2025-11-25 in the real editor (the packaged bundle): the v2 SDK client negotiates the new
// revision, and a held patch asked for as a task is approved in the diff editor and read back from tasks/get.

const enc = new TextEncoder();
const dec = new TextDecoder();

describe('MCP 2026-07-28 in the editor', function () {
  this.timeout(120_000);
  let url: string;
  let token: string;
  let wsId: string;

  before(async () => {
    ({ url, token } = await connectionFromCommand());
    const { client, wsId: first } = await connectToFirstFolder();
    wsId = first;
    await client.close();
  });
  after(async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  /** One raw 2026-era request declaring the Tasks extension (the v2 SDK client refuses a task answer). */
  const modern = (method: string, params: Record<string, unknown>, name?: string): Promise<ModernAnswer> =>
    modernRequester(url, () => token, 'integration')(method, params, name !== undefined ? { name } : {});

  it('the v2 SDK client in automatic negotiation speaks 2026-07-28 and reads a file', async () => {
    const client = new ClientV2({ name: 'integration-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const rel = `protocol-${Date.now()}.txt`;
      await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder(0).uri, rel), enc.encode('hello 2026\n'));
      const r = (await client.callTool({ name: 'read', arguments: { workspace_id: wsId, path: rel } })) as { structuredContent: { content: string } };
      assert.equal(r.structuredContent.content, 'hello 2026\n');
    } finally {
      await client.close();
    }
  });

  it('a held patch is a task: approved in the diff editor, its applied result comes from tasks/get', async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    const rel = `task-${Date.now()}.txt`;
    const uri = vscode.Uri.joinPath(folder(0).uri, rel);
    await vscode.workspace.fs.writeFile(uri, enc.encode('one\n'));
    const client = await connectToFirstFolder();
    const version = (await call<{ version: string }>(client.client, 'read', { workspace_id: wsId, path: rel })).version;
    await client.client.close();
    const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '-one', '+two', '*** End Patch'].join('\n');
    const created = await modern('tools/call', { name: 'apply_patch', arguments: { workspace_id: wsId, patch, expected_versions: { [rel]: version }, operation_key: `task-${rel}` } }, 'apply_patch');
    assert.equal(created.result?.resultType, 'task', JSON.stringify(created));
    const taskId = created.result?.taskId as string;
    assert.equal((await modern('tasks/get', { taskId }, taskId)).result?.status, 'working');
    assert.equal(dec.decode(await vscode.workspace.fs.readFile(uri)), 'one\n');

    // The developer approves it from the review (the diff editor's Approve).
    const decision = await vscode.commands.executeCommand<{ ok: boolean }>('codespace.approveReview', taskId);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const done = await modern('tasks/get', { taskId }, taskId);
    assert.equal(done.result?.status, 'completed', JSON.stringify(done));
    assert.equal(((done.result?.result as { structuredContent: { status: string } }).structuredContent).status, 'applied');
    assert.equal(dec.decode(await vscode.workspace.fs.readFile(uri)), 'two\n');
  });
});
