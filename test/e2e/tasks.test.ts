// End to end: MCP 2026-07-28 and held operations as Tasks, the way a 2026-era agent and a reviewer meet them. A real
// v2 SDK client negotiates the revision on its own (automatic negotiation) against the extension in a real workbench
// (code-server + headless Chromium); a held patch called with the Tasks extension declared answers with a task;
// the review opens on its own (the default `codespace.review.openOnHold`); the reviewer clicks Approve Patch in the
// diff editor's title bar; the agent reads the applied result from tasks/get. A second held patch is withdrawn with
// tasks/cancel: its review closes, the task reads `cancelled`, and nothing is written.
//
// Screenshot: test-results/tasks-review.png.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { copyConnectionSettings } from './mcpClient';
import type { Json } from './mcpClient';
import { sha256, sleep } from './webview';
import { modernRequester } from '../unit/helpers/modernRequest';

const FILE = 'notes/windows.txt';

interface Answer {
  readonly result?: Json;
  readonly error?: { code: number; message: string };
}

describe('MCP 2026-07-28: a held patch as a task, approved in the diff editor', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let url: string;
  let token: string;
  let wsId: string;

  before(async () => {
    wb = await startWorkbench({
      workspace: 'workspace',
      userSettings: { 'codespace.approvals.patches': 'confirm', 'codespace.review.notify': false, 'workbench.startupEditor': 'none' },
    });
    await wb.waitForActivation();
    ({ url, token } = await copyConnectionSettings(wb));
  });

  after(async () => {
    if (wb) {
      await wb.screenshot('e2e-tasks-final').catch(() => undefined);
      await wb.stop();
    }
  });

  /** One 2026-07-28 request declaring the Tasks extension, as raw HTTP (as an agent that uses tasks speaks it). */
  const modern = (method: string, params: Json, name?: string): Promise<Answer> =>
    modernRequester(url, () => token, 'e2e-tasks')(method, params, name !== undefined ? { name } : {}) as Promise<Answer>;

  /** Polls tasks/get as the extension asks (at its pollIntervalMs) until the task is terminal. */
  async function awaitTask(taskId: string, timeoutMs = 150_000): Promise<Json> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = await modern('tasks/get', { taskId }, taskId);
      assert.equal(got.error, undefined, JSON.stringify(got.error));
      const task = got.result as Json;
      if (task.status !== 'working') return task;
      if (Date.now() > deadline) throw new Error(`task ${taskId} still working after ${timeoutMs} ms: ${JSON.stringify(task)}`);
      await sleep(Math.min(Number(task.pollIntervalMs ?? 1000), 1000));
    }
  }

  /** The tab of the review that opens on a hold of FILE (a diff editor of the proposal). */
  const proposalTab = () => wb.page.locator('.tabs-container .tab', { hasText: `${FILE} (proposal)` });

  async function heldPatch(from: string, to: string, key: string): Promise<string> {
    const version = sha256(await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8'));
    const patch = ['*** Begin Patch', `*** Update File: ${FILE}`, '@@', `-${from}`, `+${to}`, '*** End Patch'].join('\n');
    const created = await modern('tools/call', { name: 'apply_patch', arguments: { workspace_id: wsId, patch, expected_versions: { [FILE]: version }, operation_key: key } }, 'apply_patch');
    assert.equal(created.result?.resultType, 'task', `a held call answers with a task: ${JSON.stringify(created)}`);
    assert.equal(created.result?.status, 'working');
    assert.match(String(created.result?.statusMessage), /review/i, 'the task says it waits for review');
    return created.result?.taskId as string;
  }

  it('the v2 SDK client negotiates 2026-07-28 on its own and works the workspace', async () => {
    const client = new ClientV2({ name: 'e2e-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      assert.equal(client.getProtocolEra(), 'modern', 'the client and the extension agreed on the 2026 revision');
      const info = (await client.callTool({ name: 'workspace_info', arguments: {} })) as { structuredContent: { workspaces: { id: string }[] } };
      wsId = info.structuredContent.workspaces[0]?.id as string;
      assert.ok(wsId);
      const read = (await client.callTool({ name: 'read', arguments: { workspace_id: wsId, path: FILE } })) as { structuredContent: { content: string } };
      assert.equal(read.structuredContent.content, await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8'));
    } finally {
      await client.close();
    }
  });

  it('a held patch is a task: the reviewer clicks Approve Patch in the diff editor, the agent reads the applied result from tasks/get', async () => {
    const original = await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8');
    const taskId = await heldPatch('line two', 'line two, approved as a task', 'e2e-task-approve');
    assert.equal((await modern('tasks/get', { taskId }, taskId)).result?.status, 'working');
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8'), original, 'a held patch writes nothing');

    // The review opened on its own (a one-file patch: a diff editor of the proposal); bring its tab forward and
    // approve from the editor's title bar.
    const tab = proposalTab();
    await tab.first().waitFor({ timeout: 60_000 });
    assert.equal(await tab.count(), 1, 'one review is open');
    await tab.first().click();
    await wb.page.locator('.editor .view-line', { hasText: 'line two, approved as a task' }).first().waitFor({ timeout: 60_000 });
    const approve = wb.page.locator('.editor-group-container.active .title .editor-actions .action-label[aria-label^="Approve Patch"]');
    await approve.first().waitFor({ timeout: 30_000 });
    await sleep(500); // let the last paint settle for the picture
    await wb.screenshot('tasks-review');
    await approve.first().click();

    const task = await awaitTask(taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    const result = task.result as { isError?: boolean; structuredContent?: { status: string; files: { path: string; after_version: string }[] } };
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(result.structuredContent?.status, 'applied');
    const onDisk = await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8');
    assert.equal(onDisk, original.replace('line two', 'line two, approved as a task'));
    assert.equal(result.structuredContent?.files[0]?.after_version, sha256(onDisk));
    // It ran once: asking again gives the same stored outcome.
    const again = await awaitTask(taskId);
    assert.deepEqual((again.result as Json).structuredContent, result.structuredContent);
    await tab.first().waitFor({ state: 'detached', timeout: 30_000 });
  });

  it('tasks/cancel withdraws a pending hold: its review closes, the task reads cancelled, nothing is written', async () => {
    const before = await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8');
    const taskId = await heldPatch('line three', 'line three, never written', 'e2e-task-cancel');
    const tab = proposalTab();
    await tab.first().waitFor({ timeout: 60_000 });
    const cancelled = await modern('tasks/cancel', { taskId }, taskId);
    assert.equal(cancelled.error, undefined, JSON.stringify(cancelled));
    const task = await awaitTask(taskId);
    assert.equal(task.status, 'cancelled', JSON.stringify(task));
    await tab.first().waitFor({ state: 'detached', timeout: 30_000 });
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, FILE), 'utf8'), before);
  });
});
