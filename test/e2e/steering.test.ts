// End to end: steering in a real workbench (code-server + headless Chromium) with a real MCP client. The browser
// types an instruction into the panel's composer and queues it; the agent, in the middle of its loop, sees
// `queued_instructions: 1` in the coordination hint of its next `read`, claims the instruction and completes it
// with a note, and the panel shows "done" with that note. Then the work is reviewed from the panel's Review work
// button: the multi-file diff opens. Screenshots of both go to docs/ (composer.png, work-review.png).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Frame } from 'playwright-core';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { screenshotForDocs } from './agentWorkbench';
import { call, connect, copyConnectionSettings } from './mcpClient';
import { panelFrame, sha256, sleep } from './webview';

describe('steering from the panel', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    wb = await startWorkbench({ workspace: 'workspace' });
    await wb.waitForActivation();
    // The folder is a git repository before the work opens, so the work gets a baseline to review from.
    const git = (...args: string[]) => execFileSync('git', args, { cwd: wb.workspaceDir, stdio: 'ignore' });
    git('init', '-q');
    git('config', 'user.email', 'e2e@example.invalid');
    git('config', 'user.name', 'E2E');
    git('add', '-A');
    git('commit', '-q', '--no-verify', '-m', 'fixture');
    const { url, token } = await copyConnectionSettings(wb);
    client = await connect(url, token, 'e2e-steering');
    const all = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    wsId = all.workspaces[0]?.id as string;
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-steering-final').catch(() => undefined);
      await wb.stop();
    }
  });

  /** The agent's loop: one `read` of a file; returns the coordination hint of its result. */
  async function readOnce(): Promise<{ work_id: string; queued_instructions: number } | undefined> {
    const r = await call<{ coordination?: { work_id: string; queued_instructions: number } }>(client, 'read', { workspace_id: wsId, path: 'README.md' });
    return r.coordination;
  }

  it('queues an instruction typed in the composer; the agent sees it on its next read, claims and completes it; the panel shows done with the note', async () => {
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'Tidy the README' });
    assert.equal((await readOnce())?.queued_instructions, 0, 'nothing queued yet');

    await wb.runCommand('CodeSpace: Show Panel');
    const frame: Frame = await panelFrame(wb, `.work[data-work-id="${workId}"]`);
    const composer = frame.locator('[data-role="composer"]');
    await composer.waitFor();
    assert.equal(await composer.locator('select[data-role="work-select"]').inputValue(), workId, 'the only open work is chosen');
    const text = 'Fix the typo in the README,\nthen run the tests. \u001b[31m(red)\u001b[0m';
    await composer.locator('textarea[data-role="instruction-text"]').fill(text);
    await screenshotForDocs(wb, 'composer', 'composer.png');
    await composer.locator('button[data-action="queue-instruction"]').click();

    const item = frame.locator(`.work[data-work-id="${workId}"] .instruction`);
    await item.locator('[data-role="status"]', { hasText: 'queued' }).waitFor({ timeout: 30_000 });
    assert.equal(await composer.locator('textarea[data-role="instruction-text"]').inputValue(), '', 'the composer is cleared once queued');
    // Exact text: the ESC characters are shown escaped, as text.
    const shown = await item.locator('.instruction-text').innerText();
    assert.match(shown, /Fix the typo in the README,\nthen run the tests\. \\x1b\[31m\(red\)\\x1b\[0m/);
    assert.equal(await item.locator('.instruction-text .ctrl').count(), 2);

    // Mid-loop, the agent's next read carries the hint.
    let hint = await readOnce();
    for (let i = 0; i < 50 && hint?.queued_instructions !== 1; i++) {
      await sleep(200);
      hint = await readOnce();
    }
    assert.deepEqual(hint, { work_id: workId, queued_instructions: 1 });
    const claimed = await call<{ instruction?: { id: string; text: string } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction?.text, text, 'the agent gets the exact text');
    await item.locator('[data-role="status"]', { hasText: 'claimed' }).waitFor({ timeout: 30_000 });

    // The agent does the work (a patch under the work), then completes the instruction with a note.
    const readme = await fsp.readFile(path.join(wb.workspaceDir, 'README.md'), 'utf8');
    const first = readme.split('\n')[0] as string;
    const patch = ['*** Begin Patch', '*** Update File: README.md', '@@', `-${first}`, `+${first} (tidied)`, '*** End Patch'].join('\n');
    await call(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { 'README.md': sha256(readme) }, operation_key: 'e2e-steer-1', work_id: workId });
    // A change made outside the patch tools (as a command would) is part of the work's changes too.
    await fsp.writeFile(path.join(wb.workspaceDir, 'notes', 'steering.md'), '# Steering notes\n\n- README tidied\n');
    await call(client, 'steer_complete', { instruction_id: claimed.instruction?.id, status: 'done', note: 'Typo fixed; 12 tests pass.' });
    await item.locator('[data-role="status"]', { hasText: 'done' }).waitFor({ timeout: 30_000 });
    assert.equal(await item.locator('.instruction-note').innerText(), 'Typo fixed; 12 tests pass.');
    assert.equal((await readOnce())?.queued_instructions, 0);

    // Finished, the work is reviewed from the panel: one multi-file diff of what changed since work_open.
    const finished = await call<{ closed: boolean }>(client, 'work_finish', { work_id: workId });
    assert.equal(finished.closed, true);
    const workNode = frame.locator(`.work[data-work-id="${workId}"][data-status="finished"]`);
    await workNode.waitFor({ timeout: 30_000 });
    await workNode.locator('button[data-action="review-work"]').click();
    const tab = wb.page.locator('.tab', { hasText: 'CodeSpace work review: Tidy the README (2 files)' });
    await tab.first().waitFor({ timeout: 30_000 });
    await wb.page.locator('.monaco-diff-editor').first().waitFor({ timeout: 30_000 });
    await sleep(1500);
    await screenshotForDocs(wb, 'work-review', 'work-review.png');
  });
});
