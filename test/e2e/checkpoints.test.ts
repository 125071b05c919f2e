// End to end: checkpoints in a real workbench (code-server + headless Chromium) with a real MCP client. The agent
// applies three patches under a work; in the panel's activity the browser clicks Rewind to Here on the first one
// (two checkpoints back): the files go back on disk, the agent reads them as they are now and claims a `rewind`
// instruction naming the checkpoint and the files. Then Redo Rewind from the command palette puts them back, and the
// agent is told again. The screenshot after the rewind goes to docs/checkpoints.png.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Workbench } from './index';
import { screenshotForDocs, startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { call } from './mcpClient';
import { panelFrame, sha256, sleep } from './webview';

interface RewindInstruction {
  id: string;
  kind?: string;
  text: string;
  rewind?: { action: string; checkpoint: number; operation_id?: string; files: { path: string; version: string | null }[] };
}

describe('checkpoints: rewind a work two checkpoints back from the panel, and redo', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ wb, client, wsId } = await startWorkbenchWithAgent({ workspace: 'workspace' }, 'e2e-checkpoints'));
  });

  after(() => stopWorkbenchWithAgent(wb, client, 'e2e-checkpoints-final'));

  const disk = async (rel: string): Promise<string | null> => fsp.readFile(path.join(wb.workspaceDir, rel), 'utf8').catch(() => null);
  async function waitForDisk(rel: string, want: string | null): Promise<void> {
    for (let i = 0; i < 150; i++) {
      if ((await disk(rel)) === want) return;
      await sleep(200);
    }
    assert.equal(await disk(rel), want, `${rel} on disk`);
  }
  async function claim(workId: string): Promise<RewindInstruction> {
    for (let i = 0; i < 150; i++) {
      const r = await call<{ instruction?: RewindInstruction }>(client, 'steer_claim_next', { work_id: workId });
      if (r.instruction) return r.instruction;
      await sleep(200);
    }
    assert.fail('no instruction reached the agent');
  }

  it('the browser clicks Rewind to Here on the first of three operations; the agent sees the files and is told; Redo Rewind puts them back', async () => {
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'Greeting module' });
    const ops: string[] = [];
    const patch = async (key: string, lines: string[], expected: Record<string, string>): Promise<void> => {
      const r = await call<{ status: string; operation_id: string }>(client, 'apply_patch', { workspace_id: wsId, patch: ['*** Begin Patch', ...lines, '*** End Patch'].join('\n'), expected_versions: expected, operation_key: key, work_id: workId });
      assert.equal(r.status, 'applied');
      ops.push(r.operation_id);
    };
    const v1 = "export const greeting = 'hello';\n";
    const v2 = "export const greeting = 'hello, world';\n";
    const v3 = "export const greeting = (name: string): string => `hello, ${name}`;\n";
    const farewell = "export const farewell = 'bye';\n";
    await patch('e2e-cp-1', ['*** Add File: src/greeting.ts', `+${v1.trimEnd()}`], {});
    await patch('e2e-cp-2', ['*** Update File: src/greeting.ts', '@@', `-${v1.trimEnd()}`, `+${v2.trimEnd()}`], { 'src/greeting.ts': sha256(v1) });
    await patch('e2e-cp-3', ['*** Update File: src/greeting.ts', '@@', `-${v2.trimEnd()}`, `+${v3.trimEnd()}`, '*** Add File: src/farewell.ts', `+${farewell.trimEnd()}`], { 'src/greeting.ts': sha256(v2) });
    assert.equal(await disk('src/greeting.ts'), v3);

    // The panel's activity: Rewind to Here on the first operation.
    await wb.runCommand('CodeSpace: Show Panel');
    const frame = await panelFrame(wb, `button[data-action="rewind-work"][data-operation-id="${ops[0]}"]`);
    for (const op of ops) assert.equal(await frame.locator(`button[data-action="rewind-work"][data-operation-id="${op}"]`).count(), 1, `Rewind to Here on ${op}`);
    await frame.locator(`button[data-action="rewind-work"][data-operation-id="${ops[0]}"]`).click();
    await waitForDisk('src/greeting.ts', v1);
    await waitForDisk('src/farewell.ts', null);
    // The panel shows the instruction queued for the agent. (A notification says it too; VS Code 1.139 may keep it in
    // the notification center rather than show a toast, so the test does not wait for one.)
    await frame.getByText("The developer rewound this work's files to checkpoint 1").first().waitFor({ timeout: 30_000 });
    await sleep(500);
    await screenshotForDocs(wb, 'checkpoints', 'checkpoints.png');

    // The agent reads the file as it is now, and claims what happened.
    const read = await call<{ content: string }>(client, 'read', { workspace_id: wsId, path: 'src/greeting.ts' });
    assert.match(read.content, /'hello';/);
    const told = await claim(workId);
    assert.equal(told.kind, 'rewind');
    assert.deepEqual(told.rewind, {
      action: 'rewind',
      checkpoint: 1,
      operation_id: ops[0],
      files: [
        { path: 'src/farewell.ts', version: null },
        { path: 'src/greeting.ts', version: sha256(v1) },
      ],
    });
    await call(client, 'steer_complete', { instruction_id: told.id, status: 'done', note: 'Read the files again.' });

    // Redo from the command palette (the keyboard): the state before the rewind is back.
    await wb.runCommand('CodeSpace: Redo Rewind');
    await waitForDisk('src/greeting.ts', v3);
    await waitForDisk('src/farewell.ts', farewell);
    const redone = await claim(workId);
    assert.equal(redone.kind, 'rewind');
    assert.equal(redone.rewind?.action, 'redo');
    assert.equal(redone.rewind?.checkpoint, 3);
    assert.deepEqual(redone.rewind?.files, [
      { path: 'src/farewell.ts', version: sha256(farewell) },
      { path: 'src/greeting.ts', version: sha256(v3) },
    ]);
  });
});
