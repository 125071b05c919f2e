import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { HostMessage, PanelActivity, PanelState } from '../../src/shared/panelProtocol';
import { EXTENSION_ID, call, connectToFirstFolder, folder, pollFor } from './helpers';

// Checkpoints in the real editor: an agent applies three patches under a work over MCP; the panel's activity offers
// Rewind to Here on each; rewinding two checkpoints back from the panel writes the files back (the agent reads them
// and claims a `rewind` instruction), Redo Rewind puts them back, a file the developer changed refuses a rewind
// without a byte written, and the quick pick of Rewind Work to Checkpoint… lists the operations newest first.

interface PanelForTests {
  handleMessage(message: unknown): Promise<HostMessage | undefined>;
  lastState(): PanelState | undefined;
  isReady(): boolean;
}

interface CommandResult {
  ok: boolean;
  code?: string;
  message?: string;
  checkpoint?: number;
  files?: { path: string; version: string | null }[];
  told?: boolean;
}

const sha = (text: string): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('checkpoints: rewind a work and redo, from the panel and the commands', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let root: string;
  let panel: PanelForTests;
  let workId: string;
  const ops: string[] = [];
  const file = (rel: string): string => path.join(root, ...rel.split('/'));
  const disk = (rel: string): string | null => (fs.existsSync(file(rel)) ? fs.readFileSync(file(rel), 'utf8') : null);

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    root = folder(0).uri.fsPath;
    fs.rmSync(file('checkpoints'), { recursive: true, force: true });
    fs.mkdirSync(file('checkpoints'), { recursive: true });
    fs.writeFileSync(file('checkpoints/a.txt'), 'one\n');
    fs.writeFileSync(file('checkpoints/b.txt'), 'B\n');
    const api = vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports;
    assert.ok(api?.panelForTests);
    panel = api.panelForTests;
    await vscode.commands.executeCommand('codespace.showPanel');
    await pollFor('the panel page is ready', () => panel.isReady() && panel.lastState() !== undefined);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await client?.close();
    fs.rmSync(file('checkpoints'), { recursive: true, force: true });
  });

  const rewindRows = (): PanelActivity[] => (panel.lastState()?.activity ?? []).filter((a) => a.checkpoint?.workId === workId);

  it('the agent patches three times under a work; the panel offers Rewind to Here on each', async () => {
    ({ work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'checkpoints in the editor' }));
    const patch = async (key: string, text: string, expected: Record<string, string>): Promise<void> => {
      const r = await call<{ status: string; operation_id: string }>(client, 'apply_patch', { workspace_id: wsId, patch: text, expected_versions: expected, operation_key: key, work_id: workId });
      assert.equal(r.status, 'applied');
      ops.push(r.operation_id);
    };
    const tag = Date.now().toString(36);
    await patch(`cp-1-${tag}`, '*** Begin Patch\n*** Update File: checkpoints/a.txt\n@@\n-one\n+two\n*** End Patch', { 'checkpoints/a.txt': sha('one\n') });
    await patch(`cp-2-${tag}`, '*** Begin Patch\n*** Add File: checkpoints/c.txt\n+new file\n*** End Patch', {});
    await patch(`cp-3-${tag}`, '*** Begin Patch\n*** Update File: checkpoints/a.txt\n@@\n-two\n+three\n*** Update File: checkpoints/b.txt\n@@\n-B\n+BB\n*** End Patch', { 'checkpoints/a.txt': sha('two\n'), 'checkpoints/b.txt': sha('B\n') });
    const rows = await pollFor('the panel shows the three operations with Rewind to Here', () => (rewindRows().length === 3 ? rewindRows() : undefined));
    assert.deepEqual(rows.map((r) => r.checkpoint?.operationId).sort(), [...ops].sort());
  });

  it('Rewind to Here on the first operation (two checkpoints back) writes the files back and tells the agent; Redo Rewind puts them back', async () => {
    const reply = await panel.handleMessage({ type: 'rewindWork', requestId: 'cp-rewind-1', workId, operationId: ops[0] });
    assert.deepEqual(reply, { type: 'reply', requestId: 'cp-rewind-1', ok: true });
    assert.equal(disk('checkpoints/a.txt'), 'two\n');
    assert.equal(disk('checkpoints/b.txt'), 'B\n');
    assert.equal(disk('checkpoints/c.txt'), null);
    // The agent sees the files as they are now, and is told what happened.
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: 'checkpoints/a.txt' });
    assert.match(read.content, /two/);
    const claimed = await call<{ instruction: { kind: string; text: string; rewind: { action: string; checkpoint: number; operation_id: string; files: { path: string; version: string | null }[] } } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction.kind, 'rewind');
    assert.deepEqual(claimed.instruction.rewind, {
      action: 'rewind',
      checkpoint: 1,
      operation_id: ops[0],
      files: [
        { path: 'checkpoints/a.txt', version: sha('two\n') },
        { path: 'checkpoints/b.txt', version: sha('B\n') },
        { path: 'checkpoints/c.txt', version: null },
      ],
    });
    await call(client, 'steer_complete', { instruction_id: (claimed.instruction as unknown as { id: string }).id, status: 'done' });

    const redo = await vscode.commands.executeCommand<CommandResult>('codespace.redoRewind', workId);
    assert.equal(redo.ok, true, redo.message);
    assert.equal(redo.told, true);
    assert.equal(disk('checkpoints/a.txt'), 'three\n');
    assert.equal(disk('checkpoints/b.txt'), 'BB\n');
    assert.equal(disk('checkpoints/c.txt'), 'new file\n');
    const again = await vscode.commands.executeCommand<CommandResult>('codespace.redoRewind', workId);
    assert.equal(again.ok, false);
    assert.equal(again.code, 'NOTHING_TO_REDO');
    const told = await call<{ instruction: { id: string; kind: string; rewind: { action: string } } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(told.instruction.rewind.action, 'redo');
    await call(client, 'steer_complete', { instruction_id: told.instruction.id, status: 'done' });
  });

  it('refuses a rewind over a file the developer changed since, naming it; nothing is written', async () => {
    fs.writeFileSync(file('checkpoints/b.txt'), 'my own edit\n');
    const r = await vscode.commands.executeCommand<CommandResult>('codespace.rewindWork', workId, 0);
    assert.equal(r.ok, false);
    assert.equal(r.code, 'VERSION_CONFLICT');
    assert.match(r.message ?? '', /checkpoints\/b\.txt changed outside the work since its last operation on it; nothing was written/);
    assert.equal(disk('checkpoints/b.txt'), 'my own edit\n');
    assert.equal(disk('checkpoints/a.txt'), 'three\n');
    assert.equal(disk('checkpoints/c.txt'), 'new file\n');
    fs.writeFileSync(file('checkpoints/b.txt'), 'BB\n');
  });

  it('Rewind Work to Checkpoint… offers the work\'s operations newest first in a quick pick, taken with the keyboard', async () => {
    const api = vscode.extensions.getExtension<{ checkpointsForTests?: { openPick(): readonly string[] | undefined } }>(EXTENSION_ID)?.exports;
    assert.ok(api?.checkpointsForTests);
    const forTests = api.checkpointsForTests;
    const running = vscode.commands.executeCommand<CommandResult>('codespace.rewindWork', workId);
    const labels = await pollFor('the checkpoint pick is open', () => forTests.openPick());
    // Five checkpoints: the three patches, the rewind and the redo; newest first, then before the first operation.
    assert.deepEqual(labels, [
      '#5  Redo of a rewind',
      '#4  Rewind to checkpoint 1',
      '#3  update checkpoints/a.txt, update checkpoints/b.txt',
      '#2  add checkpoints/c.txt',
      '#1  update checkpoints/a.txt',
      '#0  Before the first operation',
    ]);
    for (let i = 0; i < 3; i++) await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    const result = await running;
    assert.equal(result.ok, true, result.message);
    assert.equal(result.checkpoint, 2);
    assert.equal(disk('checkpoints/a.txt'), 'two\n');
    assert.equal(disk('checkpoints/b.txt'), 'B\n');
    assert.equal(disk('checkpoints/c.txt'), 'new file\n');
    // The agent takes the news and finishes: nothing of this work is left waiting for the suites after this one.
    const told = await call<{ instruction: { id: string; rewind: { action: string; checkpoint: number } } }>(client, 'steer_claim_next', { work_id: workId });
    assert.deepEqual([told.instruction.rewind.action, told.instruction.rewind.checkpoint], ['rewind', 2]);
    await call(client, 'steer_complete', { instruction_id: told.instruction.id, status: 'done' });
    assert.equal((await call<{ closed: boolean }>(client, 'work_finish', { work_id: workId })).closed, true);
  });

  it('from a work review, Rewind Work to Checkpoint… rewinds the reviewed work (the review\'s title bar offers it)', async () => {
    const second = folder(1).uri.fsPath;
    const info = await call<{ workspaces: { id: string; name: string }[] }>(client, 'workspace_info', {});
    const ws2 = info.workspaces.find((w) => w.name === folder(1).name)?.id as string;
    assert.ok(!fs.existsSync(path.join(second, '.git')), 'the second folder is no git repository before this test');
    const git = (...args: string[]): void => void execFileSync('git', args, { cwd: second, stdio: 'ignore', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
    git('init', '-q');
    git('config', 'user.email', 'reviewer@example.invalid');
    git('config', 'user.name', 'Reviewer');
    git('add', '-A');
    git('commit', '-q', '--no-verify', '-m', 'fixture');
    let reviewWorkId: string | undefined;
    try {
      ({ work_id: reviewWorkId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: ws2, title: 'rewind from the review' }));
      await call(client, 'apply_patch', { workspace_id: ws2, patch: '*** Begin Patch\n*** Add File: cp-review.txt\n+reviewed\n*** End Patch', expected_versions: {}, operation_key: `cp-review-${Date.now().toString(36)}`, work_id: reviewWorkId });
      const review = await vscode.commands.executeCommand<{ ok: boolean; message?: string }>('codespace.reviewWork', reviewWorkId);
      assert.equal(review.ok, true, review.message);
      await pollFor('the work review is the active tab', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.startsWith('CodeSpace work review: rewind from the review') || undefined);
      // Two works have checkpoints now; the command goes straight to the reviewed one's checkpoints.
      const api = vscode.extensions.getExtension<{ checkpointsForTests?: { openPick(): readonly string[] | undefined } }>(EXTENSION_ID)?.exports;
      const running = vscode.commands.executeCommand<CommandResult>('codespace.rewindWork');
      const labels = await pollFor('the checkpoint pick of the reviewed work is open', () => api?.checkpointsForTests?.openPick());
      assert.deepEqual(labels, ['#1  add cp-review.txt', '#0  Before the first operation']);
      await vscode.commands.executeCommand('workbench.action.quickOpenSelectNext');
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      const result = await running;
      assert.equal(result.ok, true, result.message);
      assert.equal(result.checkpoint, 0);
      assert.equal(fs.existsSync(path.join(second, 'cp-review.txt')), false);
      const told = await call<{ instruction: { id: string } }>(client, 'steer_claim_next', { work_id: reviewWorkId });
      await call(client, 'steer_complete', { instruction_id: told.instruction.id, status: 'done' });
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      if (reviewWorkId) await call(client, 'work_finish', { work_id: reviewWorkId }).catch(() => undefined);
      fs.rmSync(path.join(second, '.git'), { recursive: true, force: true });
      fs.rmSync(path.join(second, 'cp-review.txt'), { force: true });
    }
  });
  it('a rewind restores files, not bytes: a deleted 0755 script is 0755 again, and exactly the folders a move created and left empty go', async () => {
    const dir = 'checkpoints/modes';
    fs.mkdirSync(file(`${dir}/empty-before`), { recursive: true });
    fs.writeFileSync(file(`${dir}/run.sh`), '#!/bin/sh\necho run\n', { mode: 0o755 });
    fs.chmodSync(file(`${dir}/run.sh`), 0o755);
    fs.writeFileSync(file(`${dir}/data.txt`), 'data\n');
    const { work_id: modesWork } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'modes come back' });
    try {
      const tag = Date.now().toString(36);
      const apply = async (key: string, text: string, expected: Record<string, string>): Promise<void> => {
        const r = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, patch: text, expected_versions: expected, operation_key: `${key}-${tag}`, work_id: modesWork });
        assert.equal(r.status, 'applied');
      };
      await apply('modes-delete', `*** Begin Patch\n*** Delete File: ${dir}/run.sh\n*** End Patch`, { [`${dir}/run.sh`]: sha('#!/bin/sh\necho run\n') });
      await apply('modes-move', `*** Begin Patch\n*** Update File: ${dir}/data.txt\n*** Move to: ${dir}/new/deep/data.txt\n@@\n-data\n+moved\n*** End Patch`, { [`${dir}/data.txt`]: sha('data\n') });
      assert.equal(fs.existsSync(file(`${dir}/run.sh`)), false);
      assert.equal(disk(`${dir}/new/deep/data.txt`), 'moved\n');
      // Someone puts a file in a folder the move created: that folder stays.
      fs.mkdirSync(file(`${dir}/new/keep`), { recursive: true });
      fs.writeFileSync(file(`${dir}/new/keep/mine.txt`), 'mine\n');
      const r = await vscode.commands.executeCommand<CommandResult>('codespace.rewindWork', modesWork, 0);
      assert.equal(r.ok, true, r.message);
      assert.equal(disk(`${dir}/run.sh`), '#!/bin/sh\necho run\n');
      assert.equal(fs.statSync(file(`${dir}/run.sh`)).mode & 0o777, 0o755, 'the script is executable again');
      assert.equal(disk(`${dir}/data.txt`), 'data\n');
      assert.equal(fs.statSync(file(`${dir}/data.txt`)).mode & 0o111, 0, 'the moved file comes back not executable');
      assert.equal(fs.existsSync(file(`${dir}/new/deep`)), false, 'the folder the move created, empty now, is removed');
      assert.equal(disk(`${dir}/new/keep/mine.txt`), 'mine\n', 'a folder that got something meanwhile stays');
      assert.ok(fs.statSync(file(`${dir}/empty-before`)).isDirectory(), 'an empty folder that was there before stays');
      const told = await call<{ instruction: { id: string; rewind: { action: string } } }>(client, 'steer_claim_next', { work_id: modesWork });
      assert.equal(told.instruction.rewind.action, 'rewind');
      await call(client, 'steer_complete', { instruction_id: told.instruction.id, status: 'done' });
      // Redo puts the change back: the script is gone again, the moved file is back in its new folder.
      const redo = await vscode.commands.executeCommand<CommandResult>('codespace.redoRewind', modesWork);
      assert.equal(redo.ok, true, redo.message);
      assert.equal(fs.existsSync(file(`${dir}/run.sh`)), false);
      assert.equal(disk(`${dir}/new/deep/data.txt`), 'moved\n');
    } finally {
      await call(client, 'work_finish', { work_id: modesWork }).catch(() => undefined);
      fs.rmSync(file(dir), { recursive: true, force: true });
    }
  });
});
