import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { activateExtension, call, callError, connectAfterRestart, connectClient, connectionFromCommand, folder } from './helpers';

describe('CodeSpace inside VS Code', () => {
  let client: Client;
  let url: string;
  let token: string;

  before(async () => {
    const api = await activateExtension();
    assert.match(api.endpointUrl() ?? '', /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    ({ url, token } = await connectionFromCommand());
    client = await connectClient(url, token);
  });
  after(async () => {
    await client?.close();
  });

  it('activates and contributes every command', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const id of ['codespace.copyConnectionSettings', 'codespace.showToken', 'codespace.rotateToken', 'codespace.restartServer', 'codespace.showLog']) {
      assert.ok(all.includes(id), id);
    }
  });

  it('copies ready-to-paste settings for Codex, Claude Code and VS Code', async () => {
    const text = await vscode.env.clipboard.readText();
    assert.match(text, /\[mcp_servers\.codespace\]/);
    assert.match(text, /claude mcp add --transport http codespace http:\/\/127\.0\.0\.1:\d+\/mcp --header "Authorization: Bearer /);
    assert.match(text, /"type": "http"/);
  });

  it('lists one workspace per folder of the multi-root window', async () => {
    const r = await call<{ workspaces: { id: string; name: string }[] }>(client, 'workspace_info', {});
    const names = (vscode.workspace.workspaceFolders ?? []).map((f) => f.name);
    assert.deepEqual(r.workspaces.map((w) => w.name), names);
    assert.equal(new Set(r.workspaces.map((w) => w.id)).size, names.length);
  });

  it('reads a file of the second folder through workspace.fs with the sha256 version', async () => {
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    const second = info.workspaces[1];
    assert.ok(second, 'a second folder is open');
    const r = await call<{ content: string; version: string }>(client, 'read', { workspace_id: second.id, path: 'README.md' });
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder(1).uri, 'README.md'));
    assert.equal(r.content, new TextDecoder().decode(bytes));
    assert.match(r.version, /^sha256:[0-9a-f]{64}$/);
  });

  it('sees a file written through workspace.fs at once, and finds it', async () => {
    const uri = vscode.Uri.joinPath(folder(0).uri, 'generated', 'fresh.ts');
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode('export const fresh = true;\n'));
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    const id = info.workspaces[0]!.id;
    const r = await call<{ content: string }>(client, 'read', { workspace_id: id, path: 'generated/fresh.ts' });
    assert.equal(r.content, 'export const fresh = true;\n');
    const found = await call<{ paths: string[] }>(client, 'find', { workspace_id: id, pattern: 'generated/**/*.ts' });
    assert.deepEqual(found.paths, ['generated/fresh.ts']);
  });

  it('reports dirty_in_editor while an editor holds unsaved changes', async () => {
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    const id = info.workspaces[0]!.id;
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder(0).uri, 'src', 'hello.ts'));
    const editor = await vscode.window.showTextDocument(doc);
    assert.ok(await editor.edit((e) => e.insert(new vscode.Position(0, 0), '// unsaved\n')), 'the edit applied');
    assert.equal(doc.isDirty, true, 'the document is dirty');
    try {
      const r = await call<{ dirty_in_editor: boolean; content: string }>(client, 'read', { workspace_id: id, path: 'src/hello.ts' });
      assert.equal(r.dirty_in_editor, true, `dirty docs: ${vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => d.uri.toString()).join(', ')}`);
      assert.ok(!r.content.startsWith('// unsaved'), 'read returns the bytes on disk, not the buffer');
    } finally {
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
  });

  it('refuses paths outside the workspace', async () => {
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    const e = await callError(client, 'read', { workspace_id: info.workspaces[0]!.id, path: '../workspace2/README.md' });
    assert.equal(e.code, 'PATH_OUTSIDE_WORKSPACE');
  });

  it('keeps the token out of settings', () => {
    const all = JSON.stringify(vscode.workspace.getConfiguration('codespace'));
    assert.ok(!all.includes(token));
  });

  it('restarts the server on command and keeps serving', async () => {
    const r = await vscode.commands.executeCommand<{ url: string | undefined }>('codespace.restartServer');
    assert.match(r.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const c = await connectAfterRestart(r.url as string, token);
    const info = await call<{ workspaces: unknown[] }>(c, 'workspace_info', {});
    assert.ok(info.workspaces.length >= 1);
    await c.close();
    ({ url } = await connectionFromCommand());
    client = await connectAfterRestart(url, token);
  });

  it('rotating the token locks out the old one', async () => {
    const rotated = await vscode.commands.executeCommand<boolean>('codespace.rotateToken', { confirm: false });
    assert.equal(rotated, true);
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(res.status, 401);
    const fresh = await connectionFromCommand();
    assert.notEqual(fresh.token, token);
    const c = await connectClient(fresh.url, fresh.token);
    await call(c, 'workspace_info', {});
    await c.close();
  });
});
