// Restricted Mode in a real VS Code: an untrusted folder lets agents read but never write or run,
// whatever its own .vscode/settings.json says.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { connect, copyConnectionSettings } from './mcpClient';

describe('an untrusted workspace (Restricted Mode)', function () {
  this.timeout(5 * 60_000);
  let wb: Workbench;
  let client: Client;

  before(async () => {
    wb = await startWorkbench({ workspace: 'workspace', workspaceTrust: true });
    // The developer declines to trust the folder when VS Code asks (1.100); 1.139 opens in Restricted Mode unasked.
    await wb.declineTrustPrompt();
    await wb.waitForActivation();
    const { url, token } = await copyConnectionSettings(wb);
    client = await connect(url, token, 'e2e-restricted');
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-restricted').catch(() => undefined);
      await wb.stop();
    }
  });

  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const errorCode = (r: CallToolResult): string => {
    assert.equal(r.isError, true, 'expected a tool error');
    const first = r.content[0];
    assert.ok(first?.type === 'text');
    return (JSON.parse(first.text) as { error: { code: string } }).error.code;
  };

  it('says so in workspace_info and still reads', async () => {
    const all = (await call('workspace_info', {})).structuredContent as { workspaces: { id: string; trusted: boolean; profile: string }[] };
    const ws = all.workspaces[0]!;
    assert.equal(ws.trusted, false);
    assert.equal(ws.profile, 'read-only');
    const info = (await call('workspace_info', { workspace_id: ws.id })).structuredContent as { execution: { files: { write: { available: boolean } }; process: { available: boolean } }; notes: string[] };
    assert.equal(info.execution.files.write.available, false);
    assert.equal(info.execution.process.available, false);
    assert.ok(info.notes.some((n) => /Restricted Mode/.test(n)));
    const read = await call('read', { workspace_id: ws.id, path: 'README.md' });
    assert.equal(read.isError, undefined);
  });

  it('writes nothing and starts nothing, even when the folder settings ask for exec', async () => {
    const all = (await call('workspace_info', {})).structuredContent as { workspaces: { id: string }[] };
    const previousId = all.workspaces[0]!.id;
    await fsp.mkdir(path.join(wb.workspaceDir, '.vscode'), { recursive: true });
    // codespace.workspaceId is not restricted: once the served id changes, VS Code has read this very file, so the
    // exec profile next to it has been seen (and must have been ignored).
    await fsp.writeFile(path.join(wb.workspaceDir, '.vscode', 'settings.json'), JSON.stringify({ 'codespace.profile': 'exec', 'codespace.exec.env': { INJECTED: '1' }, 'codespace.workspaceId': 'settings-were-read' }));
    let ids: string[] = [];
    for (let i = 0; i < 200 && !ids.includes('settings-were-read'); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      ids = ((await call('workspace_info', {})).structuredContent as { workspaces: { id: string }[] }).workspaces.map((w) => w.id);
    }
    assert.deepEqual(ids, ['settings-were-read'], 'the folder settings were read');
    const id = ids[0] as string;
    assert.notEqual(id, previousId);
    const readme = (await call('read', { workspace_id: id, path: 'README.md' })).structuredContent as { content: string; version: string };
    const patch = `*** Begin Patch\n*** Add File: pwned.txt\n+x\n*** End Patch\n`;
    assert.equal(errorCode(await call('apply_patch', { workspace_id: id, patch, expected_versions: {}, operation_key: 'restricted-1' })), 'READ_ONLY');
    assert.equal(errorCode(await call('exec_command', { workspace_id: id, command: ['touch', 'pwned-by-exec'] })), 'EXEC_DISABLED');
    await assert.rejects(fsp.stat(path.join(wb.workspaceDir, 'pwned.txt')));
    await assert.rejects(fsp.stat(path.join(wb.workspaceDir, 'pwned-by-exec')));
    assert.equal(wb.readWorkspaceFile('README.md'), readme.content);
  });

  it('granting trust enables writes and commands without a reload', async () => {
    await wb.runCommand('Workspaces: Manage Workspace Trust');
    await wb.page.getByRole('button', { name: 'Trust', exact: true }).first().click({ timeout: 60_000 });
    const all = (await call('workspace_info', {})).structuredContent as { workspaces: { id: string; trusted: boolean }[] };
    let ws = all.workspaces[0]!;
    for (let i = 0; i < 50 && !ws.trusted; i++) {
      await new Promise((r) => setTimeout(r, 200));
      ws = ((await call('workspace_info', {})).structuredContent as { workspaces: { id: string; trusted: boolean }[] }).workspaces[0]!;
    }
    assert.equal(ws.trusted, true);
    const r = await call('apply_patch', { workspace_id: ws.id, patch: '*** Begin Patch\n*** Add File: trusted.txt\n+now allowed\n*** End Patch\n', expected_versions: {}, operation_key: 'trusted-1' });
    assert.equal((r.structuredContent as { status: string }).status, 'applied');
    assert.equal(wb.readWorkspaceFile('trusted.txt'), 'now allowed\n');
  });
});
