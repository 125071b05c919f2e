// End to end: reviewing held requests the way a developer does, in a real workbench (code-server + headless
// Chromium) with `codespace.approvals.patches` and `codespace.approvals.commands` = `confirm` in the user settings.
// A real MCP client sends a two-file patch and waits in operation_resume; the browser opens the review from the
// CodeSpace panel, edits one line of the proposal in the multi-file diff editor with the keyboard and clicks Approve
// Patch in the editor's title bar; the agent gets the applied result with the reviewer's change. Then a command
// hold is denied from the panel with a typed note, and the command never runs.
//
// Screenshots: test-results/review-multi-diff.png and test-results/review-panel.png; with
// CODESPACE_UPDATE_DOCS_SCREENSHOTS=1 also docs/review.png and docs/panel.png (the README's pictures).
import * as assert from 'node:assert/strict';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Frame, Locator } from 'playwright-core';
import type { Workbench } from './index';
import { screenshotForDocs, startWorkbenchWithAgent, stopWorkbenchWithAgent } from './agentWorkbench';
import { awaitDecision, call, callError } from './mcpClient';
import type { Json } from './mcpClient';
import { panelFrame, sha256, sleep } from './webview';

const UPDATED = 'src/util/math.ts';
const ADDED = 'src/util/format.ts';
/** The line of the agent's proposal the reviewer replaces, and what the reviewer types instead (indent kept). */
const PROPOSED_LINE = '  return a * b; // product';
const REVIEWED_TEXT = 'return b * a; // reviewed in the diff editor';
const REVIEWED_LINE = `  ${REVIEWED_TEXT}`;
const ADDED_CONTENT = ['export function formatSum(a: number, b: number): string {', '  return String(a + b);', '}', ''].join('\n');
const COMMAND = ['sh', '-c', 'echo should-not-run > ran.txt'];
const NOTE = 'Please do not write files from a shell; use apply_patch.';

interface PatchResult {
  status: string;
  files: { path: string; kind: string; after_version?: string }[];
  reviewer_changes?: { path: string; diff: string }[];
}

/** Text of a Monaco line as shown (the view renders spaces as no-break spaces). */
const lineText = (raw: string): string => raw.replace(/\u00a0/g, ' ');

/** Polls `check` until it returns true (or a value), for what the page or the disk shows a moment later. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

describe('reviewing held patches and commands in the workbench', function () {
  this.timeout(6 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ wb, client, wsId } = await startWorkbenchWithAgent({
      workspace: 'workspace',
      userSettings: {
        'codespace.approvals.patches': 'confirm',
        'codespace.approvals.commands': 'confirm',
        // The review is opened from the panel here, and no toast covers the screenshots.
        'codespace.review.openOnHold': false,
        'codespace.review.notify': false,
        'workbench.startupEditor': 'none',
      },
    }, 'e2e-review'));
    const info = await call<{ execution: { approvals: { patches: string; commands: string } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.execution.approvals.patches, 'confirm', 'the user setting written before start is in effect');
    assert.equal(info.execution.approvals.commands, 'confirm');
  });

  after(() => stopWorkbenchWithAgent(wb, client, 'e2e-review-final'));

  /** Saves a screenshot to test-results/<name>.png and, when asked to (CODESPACE_UPDATE_DOCS_SCREENSHOTS=1), to docs/. */
  async function screenshot(name: string, docsName: string): Promise<void> {
    await sleep(800); // let the last paint settle
    await screenshotForDocs(wb, name, docsName);
  }

  /** Shows the CodeSpace view container (its activity-bar icon; the palette command if the click did not show it). */
  async function showPanel(selector: string): Promise<Frame> {
    const icon = wb.page.locator('.activitybar .action-item .action-label[aria-label^="CodeSpace"]').first();
    const sidebarTitle = wb.page.locator('.part.sidebar .composite.title');
    // The title is upper-cased by VS Code 1.100's CSS ("CODESPACE") and shown as written by 1.139 ("CodeSpace"):
    // clicking the icon of a container already shown would hide it.
    if (!(await sidebarTitle.innerText().catch(() => '')).toUpperCase().includes('CODESPACE')) {
      await icon.click();
      // 1.139 keeps the icon's hover ("CodeSpace - 1 agent request …") open over the panel while the pointer rests
      // on the icon, and it takes the panel's clicks: rest the pointer on the editor instead.
      await wb.page.locator('.part.editor').hover();
    }
    // That hover can also stay up after the pointer left (seen on 1.139, where it then took every click in the panel
    // for 30 s): wait for it to go, and close it with Escape when it does not.
    const hover = wb.page.locator('.context-view .hover-contents');
    if (!(await hover.first().waitFor({ state: 'hidden', timeout: 5_000 }).then(() => true, () => false))) {
      await wb.page.keyboard.press('Escape');
      await hover.first().waitFor({ state: 'hidden', timeout: 10_000 });
    }
    try {
      return await panelFrame(wb, selector, 20_000);
    } catch {
      await wb.runCommand('CodeSpace: Show Panel');
      return panelFrame(wb, selector);
    }
  }

  /** Drags the sash at the side bar's right edge so the side bar is about `width` px wide (for a readable panel). */
  async function widenSidebar(width: number): Promise<void> {
    const box = await wb.page.locator('.part.sidebar').first().boundingBox();
    if (!box || box.width >= width) return;
    const x = box.x + box.width;
    const y = box.y + box.height / 2;
    await wb.page.mouse.move(x, y);
    await wb.page.mouse.down();
    await wb.page.mouse.move(box.x + width, y, { steps: 10 });
    await wb.page.mouse.up();
  }

  const holdIn = (frame: Frame, approvalId: string): Locator => frame.locator(`.hold[data-approval-id="${approvalId}"]`);

  async function expectHeld(name: string, args: Json): Promise<string> {
    const e = await callError(client, name, args);
    assert.equal(e.code, 'APPROVAL_REQUIRED', `${name} is held`);
    const approvalId = e.details?.approval_id;
    assert.equal(typeof approvalId, 'string');
    return approvalId as string;
  }

  it('a two-file patch: Open Review from the panel, edit a line of the proposal, Approve Patch in the title bar', async () => {
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: UPDATED });
    const original = await fsp.readFile(path.join(wb.workspaceDir, UPDATED), 'utf8');
    assert.equal(read.content, original);
    assert.equal(read.version, sha256(original));
    const patch = [
      '*** Begin Patch',
      `*** Update File: ${UPDATED}`,
      '@@',
      ' export function add(a: number, b: number): number {',
      '-  return a + b;',
      '+  return a + b; // sum',
      ' }',
      '@@',
      ' export function multiply(a: number, b: number): number {',
      '-  return a * b;',
      `+${PROPOSED_LINE}`,
      ' }',
      '+',
      '+export function subtract(a: number, b: number): number {',
      '+  return a - b;',
      '+}',
      `*** Add File: ${ADDED}`,
      ...ADDED_CONTENT.replace(/\n$/, '').split('\n').map((l) => `+${l}`),
      '*** End Patch',
    ].join('\n');
    const proposed = original.replace('  return a + b;\n', '  return a + b; // sum\n').replace('  return a * b;\n}\n', `${PROPOSED_LINE}\n}\n\nexport function subtract(a: number, b: number): number {\n  return a - b;\n}\n`);
    const reviewed = proposed.replace(PROPOSED_LINE, REVIEWED_LINE);
    assert.notEqual(proposed, original);

    const approvalId = await expectHeld('apply_patch', { workspace_id: wsId, patch, expected_versions: { [UPDATED]: read.version }, operation_key: 'e2e-review-two-files' });
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, UPDATED), 'utf8'), original, 'a held patch writes nothing');
    assert.equal(existsSync(path.join(wb.workspaceDir, ADDED)), false, 'a held patch adds nothing');
    const decision = awaitDecision(client, approvalId);

    // The panel shows the hold with both files; Open Review opens the multi-file diff editor.
    const frame = await showPanel(`.hold[data-approval-id="${approvalId}"]`);
    const hold = holdIn(frame, approvalId);
    const files = await hold.locator('.file').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')));
    assert.deepEqual([...files].sort(), [ADDED, UPDATED].sort());
    await hold.locator('button[data-action="open-review"]').click();

    const tab = wb.page.locator('.tabs-container .tab', { hasText: `CodeSpace review ${approvalId.slice(0, 12)}` });
    await tab.first().waitFor({ timeout: 60_000 });
    const multiDiff = wb.page.locator('.multiDiffEditor');
    await multiDiff.first().waitFor({ timeout: 60_000 });
    const entry = (file: string): Locator => multiDiff.locator('.multiDiffEntry', { has: wb.page.locator('.header', { hasText: path.posix.basename(file) }) });
    await entry(UPDATED).first().waitFor({ timeout: 60_000 });
    await entry(ADDED).first().waitFor({ timeout: 60_000 });
    assert.equal(await multiDiff.locator('.multiDiffEntry').count(), 2, 'the review shows the two files');

    // The right (proposed) side of the updated file: click into the line, select it, type the replacement.
    const modified = entry(UPDATED).locator('.editor.modified');
    const line = modified.locator('.view-line', { hasText: 'return a * b; // product' });
    await line.waitFor({ timeout: 60_000 });
    assert.equal(await entry(ADDED).locator('.editor.modified .view-line', { hasText: 'formatSum' }).count(), 1, 'the added file shows its content');
    await line.click();
    await wb.page.keyboard.press('End');
    await wb.page.keyboard.press('Home'); // to the first non-blank character: the indent stays
    await wb.page.keyboard.press('Shift+End');
    await wb.page.keyboard.type(REVIEWED_TEXT, { delay: 15 });
    await wb.page.keyboard.press('Escape'); // closes a suggestion list, if one opened
    await until('the edited line in the modified editor', async () =>
      (await modified.locator('.view-line').allInnerTexts()).map(lineText).includes(REVIEWED_LINE) || undefined,
    );
    assert.equal(
      (await modified.locator('.view-line').allInnerTexts()).map(lineText).some((t) => t.includes('// product')),
      false,
      'the proposed line is replaced, not added to',
    );
    await screenshot('review-multi-diff', 'review.png');

    // Approve Patch in the editor's title bar (not the palette).
    const approve = wb.page.locator('.editor-group-container.active .title .editor-actions .action-label[aria-label^="Approve Patch"]');
    await approve.first().waitFor({ timeout: 30_000 });
    await approve.first().click();

    const d = await decision;
    if (!d.ok) {
      // What the window said about it: its notifications (an approve that did not happen always shows one) and the
      // extension's review log lines, so a failure here names its cause.
      await wb.runCommand('Notifications: Show Notifications').catch(() => undefined);
      const notes = await wb.page.locator('.notifications-center .notification-list-item-message').allInnerTexts().catch(() => []);
      const log = wb.readExtensionLog().split('\n').filter((l) => l.includes('[review]')).slice(-20);
      const windowLog = wb.logs.filter((l) => /save|error|conflict/i.test(l)).slice(-15);
      assert.fail(`operation_resume returned ${JSON.stringify(d)}, not the result. Notifications: ${JSON.stringify(notes)}. Review log: ${JSON.stringify(log)}. Window log: ${JSON.stringify(windowLog)}`);
    }
    const result = d.result as unknown as PatchResult;
    assert.equal(result.status, 'applied');
    const onDisk: Record<string, string> = {
      [UPDATED]: await fsp.readFile(path.join(wb.workspaceDir, UPDATED), 'utf8'),
      [ADDED]: await fsp.readFile(path.join(wb.workspaceDir, ADDED), 'utf8'),
    };
    assert.equal(onDisk[UPDATED], reviewed, 'the updated file holds the reviewed bytes');
    assert.equal(onDisk[ADDED], ADDED_CONTENT, 'the added file holds the proposal');
    assert.deepEqual(result.files.map((f) => f.path).sort(), [ADDED, UPDATED].sort());
    for (const f of result.files) assert.equal(f.after_version, sha256(onDisk[f.path] as string), `after_version of ${f.path} is the version on disk`);
    const changes = result.reviewer_changes ?? [];
    assert.deepEqual(changes.map((c) => c.path), [UPDATED], 'reviewer_changes names the edited file only');
    const diffLines = (changes[0]?.diff ?? '').split('\n');
    assert.ok(diffLines.includes(`-${PROPOSED_LINE}`) && diffLines.includes(`+${REVIEWED_LINE}`), `the diff shows the reviewer's line: ${changes[0]?.diff}`);
    const reread = await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: UPDATED });
    assert.equal(reread.version, result.files.find((f) => f.path === UPDATED)?.after_version);

    // The decided review closes, and the panel no longer lists the hold.
    await tab.first().waitFor({ state: 'detached', timeout: 30_000 });
    await hold.waitFor({ state: 'detached', timeout: 30_000 });
  });

  it('a command hold shows its full argv in the panel; Deny with a typed note reaches the agent and nothing runs', async () => {
    const commandId = await expectHeld('exec_command', { workspace_id: wsId, command: COMMAND });
    const commandDecision = awaitDecision(client, commandId);
    // A second, small patch hold, so the panel shows both kinds; it is denied afterwards.
    const readme = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: 'README.md' });
    const firstLine = readme.content.split('\n')[0] as string;
    const patchId = await expectHeld('apply_patch', {
      workspace_id: wsId,
      patch: ['*** Begin Patch', '*** Update File: README.md', '@@', `-${firstLine}`, `+${firstLine} (edited by an agent)`, '*** End Patch'].join('\n'),
      expected_versions: { 'README.md': readme.version },
      operation_key: 'e2e-review-readme',
    });
    const patchDecision = awaitDecision(client, patchId);

    const frame = await showPanel(`.hold[data-approval-id="${commandId}"]`);
    const commandHold = holdIn(frame, commandId);
    const patchHold = holdIn(frame, patchId);
    await patchHold.waitFor({ timeout: 30_000 });
    await widenSidebar(480);
    // The README patch's review (one file: the side-by-side diff editor) beside the panel, for the screenshot.
    await patchHold.locator('button[data-action="open-review"]').click();
    const readmeTab = wb.page.locator('.tabs-container .tab', { hasText: 'README.md (proposal)' });
    await readmeTab.first().waitFor({ timeout: 60_000 });
    await wb.page.locator('.monaco-diff-editor .editor.modified .view-line', { hasText: '(edited by an agent)' }).first().waitFor({ timeout: 60_000 });
    assert.deepEqual(await commandHold.locator('.argv li').allInnerTexts(), COMMAND, 'the hold shows the full argv');
    assert.equal(await commandHold.locator('button[data-action="open-review"]').count(), 0, 'a command has no diff to review');
    assert.match(await patchHold.locator('.file').innerText(), /README\.md/);
    await commandHold.locator('textarea[data-role="note"]').click();
    await wb.page.keyboard.type(NOTE, { delay: 10 });
    assert.equal(await commandHold.locator('textarea[data-role="note"]').inputValue(), NOTE);
    await screenshot('review-panel', 'panel.png');

    await commandHold.locator('button[data-action="deny"]').click();
    const c = await commandDecision;
    assert.ok(!c.ok, `the command was denied, not ${JSON.stringify(c)}`);
    assert.equal(c.code, 'APPROVAL_DENIED');
    assert.equal(c.details?.note, NOTE, 'the agent gets the typed note');
    await commandHold.waitFor({ state: 'detached', timeout: 30_000 });
    assert.equal(existsSync(path.join(wb.workspaceDir, 'ran.txt')), false, 'a denied command never runs');

    await patchHold.locator('button[data-action="deny"]').click();
    const p = await patchDecision;
    assert.ok(!p.ok && p.code === 'APPROVAL_DENIED', `the README patch was denied, not ${JSON.stringify(p)}`);
    assert.equal(await fsp.readFile(path.join(wb.workspaceDir, 'README.md'), 'utf8'), readme.content);
    await frame.locator('[data-section="holds"] .empty').waitFor({ timeout: 30_000 });
    await readmeTab.first().waitFor({ state: 'detached', timeout: 30_000 });
    assert.equal(existsSync(path.join(wb.workspaceDir, 'ran.txt')), false);
  });
});
