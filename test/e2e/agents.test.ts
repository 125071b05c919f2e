// End to end: an agent identity in a real workbench (code-server + headless Chromium). Connect an Agent is driven
// through its quick pick and name box; the credential it copies connects a real MCP client; the CodeSpace panel lists
// the agent with its session, and its Revoke button closes that session and makes the credential fail.
import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Workbench } from './index';
import { startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { call, connect, copyConnectionSettings } from './mcpClient';
import { panelFrame } from './webview';

describe('agent identities in the panel', function () {
  this.timeout(5 * 60_000);
  let wb: Workbench;
  let client: Client;
  let url: string;
  const agents: Client[] = [];

  before(async () => {
    ({ wb, client } = await startWorkbenchWithAgent({ workspace: 'workspace' }, 'e2e-agents'));
    ({ url } = await copyConnectionSettings(wb));
  });
  after(async () => {
    for (const a of agents) await a.close().catch(() => undefined);
    await stopWorkbenchWithAgent(wb, client, 'e2e-agents-final');
  });

  /** Connect an Agent → Generic HTTP client → the name typed in its box; returns the credential copied. */
  async function connectAgent(name: string): Promise<string> {
    const { page } = wb;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(wb.url).origin });
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await wb.runCommand('CodeSpace: Connect an Agent…');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 30_000 });
    await input.fill('Generic HTTP client');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Generic HTTP client' }).first().click({ timeout: 30_000 });
    // The name box follows, offering "agent".
    await page.locator('.quick-input-widget .quick-input-message', { hasText: /name/ }).first().waitFor({ timeout: 30_000 }).catch(() => undefined);
    await input.fill(name);
    await input.press('Enter');
    let text = '';
    for (let i = 0; i < 150 && !/Bearer csa_\S+/.test(text); i++) {
      await new Promise((r) => setTimeout(r, 200));
      text = await page.evaluate(() => navigator.clipboard.readText());
    }
    const credential = /^Header: Authorization: Bearer (csa_\S+)$/m.exec(text)?.[1];
    assert.ok(credential, `the clipboard holds the agent credential: ${text.slice(0, 40)}`);
    return credential;
  }

  it('lists a connected agent with its session and revokes it from the panel', async () => {
    const credential = await connectAgent('e2e-reviewer');
    const agent = await connect(url, credential, 'e2e-reviewer');
    agents.push(agent);
    await call(agent, 'workspace_info', {});

    await wb.runCommand('CodeSpace: Show Panel');
    const frame = await panelFrame(wb, '.agent[data-agent-id="e2e-reviewer"]');
    const row = frame.locator('.agent[data-agent-id="e2e-reviewer"]');
    await row.locator('.meta', { hasText: /^1 session · connected/ }).waitFor({ timeout: 30_000 });
    assert.equal(await row.locator('.name').innerText(), 'e2e-reviewer');
    assert.ok(!(await frame.locator('[data-section="agents"]').innerText()).includes(credential), 'no credential in the panel');
    await frame.locator('[data-section="agents"]').scrollIntoViewIfNeeded();
    await wb.screenshot('e2e-agents-listed');

    await row.locator('button[data-action="revokeAgent"]').click();
    await row.waitFor({ state: 'detached', timeout: 30_000 });
    await assert.rejects(call(agent, 'workspace_info', {}), 'its session is closed and its credential refused');
    await assert.rejects(connect(url, credential, 'e2e-reviewer-again'), /401|Unauthorized|invalid_token/i);
    // The window's token keeps working.
    await call(client, 'workspace_info', {});
    await wb.screenshot('e2e-agents-revoked');
  });
});
