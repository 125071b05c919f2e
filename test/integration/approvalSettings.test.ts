import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, connectToFirstFolder, folder } from './helpers';

type Approvals = { patches: string; commands: string; agent_may_resolve: boolean };

/**
 * Settings that relax safety are honoured from user settings only: nothing a workspace carries (a cloned
 * repository's .vscode/settings.json, a .code-workspace file) turns approvals off or lets the agent decide.
 */
describe('approval settings come from the user, not the workspace', () => {
  let client: Client;
  let wsId: string;
  const config = () => vscode.workspace.getConfiguration('codespace');
  const keys = ['approvals.patches', 'approvals.commands', 'approvals.agentMayResolve'];
  const approvals = async (): Promise<Approvals> =>
    (await call<{ execution: { approvals: Approvals } }>(client, 'workspace_info', { workspace_id: wsId })).execution.approvals;
  const folderSettings = () => path.join(folder(0).uri.fsPath, '.vscode', 'settings.json');
  let savedFolderSettings: string | undefined;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    savedFolderSettings = fs.existsSync(folderSettings()) ? fs.readFileSync(folderSettings(), 'utf8') : undefined;
  });
  afterEach(async () => {
    for (const k of keys) await config().update(k, undefined, vscode.ConfigurationTarget.Global);
    if (savedFolderSettings === undefined) fs.rmSync(folderSettings(), { force: true });
    else fs.writeFileSync(folderSettings(), savedFolderSettings);
  });
  after(async () => {
    await client?.close();
  });

  it('defaults to holding sensitive patches, running commands, and only the developer deciding', async () => {
    assert.deepEqual(await approvals(), { patches: 'sensitive', commands: 'off', agent_may_resolve: false });
  });

  it('reports the user settings', async () => {
    await config().update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    await config().update('approvals.commands', 'confirm', vscode.ConfigurationTarget.Global);
    await config().update('approvals.agentMayResolve', true, vscode.ConfigurationTarget.Global);
    assert.deepEqual(await approvals(), { patches: 'confirm', commands: 'confirm', agent_may_resolve: true });
  });

  it('VS Code refuses to write them into workspace settings', async () => {
    for (const [k, v] of [['approvals.patches', 'off'], ['approvals.agentMayResolve', true]] as const) {
      await assert.rejects(Promise.resolve(config().update(k, v, vscode.ConfigurationTarget.Workspace)), /only into User settings/);
    }
  });

  it('ignores them in a folder\'s .vscode/settings.json', async () => {
    await config().update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    await config().update('approvals.commands', 'confirm', vscode.ConfigurationTarget.Global);
    fs.mkdirSync(path.dirname(folderSettings()), { recursive: true });
    fs.writeFileSync(folderSettings(), JSON.stringify({ 'codespace.approvals.patches': 'off', 'codespace.approvals.commands': 'off', 'codespace.approvals.agentMayResolve': true }));
    // Let the configuration service read the file (it would fire for a setting it honours).
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await approvals(), { patches: 'confirm', commands: 'confirm', agent_may_resolve: false });
  });
});
