// A workbench with an agent connected to it, as most end-to-end tests begin: VS Code started on a fixture and
// activated, a real MCP client connected with the settings Copy Connection Settings puts on the clipboard, and the
// first folder's workspace id, as the agent learns it from workspace_info.
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { REPO_ROOT, startWorkbench } from './index';
import type { StartWorkbenchOptions, Workbench } from './index';
import { call, connect, copyConnectionSettings } from './mcpClient';

export async function startWorkbenchWithAgent(options: StartWorkbenchOptions, clientName: string): Promise<{ wb: Workbench; client: Client; wsId: string }> {
  const wb = await startWorkbench(options);
  try {
    const t0 = Date.now();
    await wb.waitForActivation();
    const t1 = Date.now();
    const { url, token } = await copyConnectionSettings(wb);
    const client = await connect(url, token, clientName);
    const all = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    console.log(`      [e2e] agent connected: activation ${((t1 - t0) / 1000).toFixed(1)} s, connection settings and workspace_info ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    return { wb, client, wsId: all.workspaces[0]?.id as string };
  } catch (error) {
    // The caller never gets `wb` to stop: a workbench left running would keep this test run from ending.
    await wb.screenshot('e2e-start-failed').catch(() => undefined);
    await wb.stop();
    throw error;
  }
}

/** The after hook: the client closed, a last screenshot named `screenshot`, VS Code stopped. */
export async function stopWorkbenchWithAgent(wb: Workbench | undefined, client: Client | undefined, screenshot: string): Promise<void> {
  await client?.close().catch(() => undefined);
  if (!wb) return;
  await wb.screenshot(screenshot).catch(() => undefined);
  await wb.stop();
}

/**
 * The screenshot `name` in test-results/, copied to docs/<docsName> (a picture the README shows) only when asked to
 * with CODESPACE_UPDATE_DOCS_SCREENSHOTS=1: a plain test run leaves the committed pictures alone.
 */
export async function screenshotForDocs(wb: Workbench, name: string, docsName: string): Promise<string> {
  const shot = await wb.screenshot(name);
  if (process.env.CODESPACE_UPDATE_DOCS_SCREENSHOTS === '1') await fsp.copyFile(shot, path.join(REPO_ROOT, 'docs', docsName));
  return shot;
}
