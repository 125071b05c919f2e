import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { HostMessage, PanelState } from '../../src/shared/panelProtocol';
import { EXTENSION_ID, call, callError, connectToFirstFolder, folder } from './helpers';

/** The test-only part of the extension's exports (see PanelForTests in src/vscode/panel/panelView.ts). */
interface PanelForTests {
  handleMessage(message: unknown): Promise<HostMessage | undefined>;
  lastState(): PanelState | undefined;
  isReady(): boolean;
  badge(): { readonly value: number; readonly tooltip: string } | undefined;
  statusBarCount(): number;
}

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('CodeSpace panel', () => {
  let client: Client;
  let wsId: string;
  let panel: PanelForTests;
  const decoder = new TextDecoder();

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    const api = vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports;
    assert.ok(api?.panelForTests, 'the extension exports the panel test hook');
    panel = api.panelForTests;
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await client?.close();
  });

  const pendingIds = (): string[] => (panel.lastState()?.holds ?? []).filter((h) => h.state === 'pending').map((h) => h.approvalId);

  /** Writes `rel`, then asks for a patch of it over MCP; returns the hold's id and what the patch writes. */
  async function holdPatch(rel: string, key: string): Promise<{ approvalId: string; uri: vscode.Uri; before: string; after: string }> {
    const before = `export const value = '${key}';\n`;
    const after = `export const value = '${key} patched';\n`;
    const uri = vscode.Uri.joinPath(folder(0).uri, ...rel.split('/'));
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(before));
    const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', `-${before.trimEnd()}`, `+${after.trimEnd()}`, '*** End Patch'].join('\n');
    const e = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: sha256(before) }, operation_key: key });
    assert.equal(e.code, 'APPROVAL_REQUIRED', e.message);
    const approvalId = e.details?.approval_id;
    assert.equal(typeof approvalId, 'string');
    assert.equal(decoder.decode(await vscode.workspace.fs.readFile(uri)), before, 'nothing is written while held');
    return { approvalId: approvalId as string, uri, before, after };
  }

  it('Show Panel resolves the view and its page asks for the state', async () => {
    await vscode.commands.executeCommand('codespace.showPanel');
    await waitFor('the panel page has loaded and said ready', () => panel.isReady() && panel.lastState() !== undefined, 30_000);
    const state = panel.lastState();
    assert.ok(Array.isArray(state?.holds) && Array.isArray(state.activity) && Array.isArray(state.processes));
  });

  it('a posted approve with a forged id does nothing; one with a pending hold’s id grants it; the badge counts pending holds', async () => {
    const stamp = Date.now().toString(36);
    const first = await holdPatch(`src/panel-${stamp}-a.ts`, `panel-a-${stamp}`);
    const second = await holdPatch(`src/panel-${stamp}-b.ts`, `panel-b-${stamp}`);

    await waitFor('the page state shows both holds', () => pendingIds().includes(first.approvalId) && pendingIds().includes(second.approvalId));
    const count = pendingIds().length;
    assert.ok(count >= 2);
    // The badge also counts instructions queued for agents (panelBadge); earlier suites may leave some queued.
    const waiting = panel.lastState()?.waitingInstructionCount ?? 0;
    assert.equal(panel.lastState()?.pendingCount, count, 'the state counts the pending holds');
    assert.equal(panel.badge()?.value, count + waiting, 'the view badge counts pending holds (and queued instructions)');
    assert.equal(panel.statusBarCount(), count, 'so does the status bar item');
    const shown = panel.lastState()?.holds.find((h) => h.approvalId === first.approvalId);
    assert.deepEqual(shown?.files?.map((f) => [f.path, f.kind, f.added, f.removed]), [[`src/panel-${stamp}-a.ts`, 'update', 1, 1]]);

    // Forged, malformed and unknown messages: refused, nothing resolved.
    for (const forged of [`${first.approvalId}x`, `x${first.approvalId}`, 'forged']) {
      const reply = await panel.handleMessage({ type: 'approve', requestId: 'forged-1', approvalId: forged });
      assert.ok(reply?.type === 'reply' && !reply.ok && typeof reply.error === 'string', `approve ${forged} is refused`);
    }
    const typed = await panel.handleMessage({ type: 'approve', requestId: 'typed-1', approvalId: [first.approvalId] });
    assert.ok(typed?.type === 'reply' && !typed.ok);
    const extra = await panel.handleMessage({ type: 'approve', requestId: 'extra-1', approvalId: first.approvalId, by: 'agent' });
    assert.ok(extra?.type === 'reply' && !extra.ok);
    await new Promise((r) => setTimeout(r, 150));
    assert.ok(pendingIds().includes(first.approvalId), 'the hold is still pending');
    assert.equal(panel.badge()?.value, count + (panel.lastState()?.waitingInstructionCount ?? 0));
    assert.equal(decoder.decode(await vscode.workspace.fs.readFile(first.uri)), first.before, 'and nothing was written');

    // The agent waits for the decision while the reviewer approves in the panel.
    const resumed = call<{ status: string }>(client, 'operation_resume', { approval_id: first.approvalId, wait_ms: 30_000 });
    const reply = await panel.handleMessage({ type: 'approve', requestId: 'real-1', approvalId: first.approvalId });
    assert.deepEqual(reply, { type: 'reply', requestId: 'real-1', ok: true });
    assert.equal((await resumed).status, 'applied');
    assert.equal(decoder.decode(await vscode.workspace.fs.readFile(first.uri)), first.after, 'the granted patch was written');
    await waitFor('the granted hold leaves the pending list', () => !pendingIds().includes(first.approvalId));
    await waitFor('the badge counts one fewer', () => panel.badge()?.value === count - 1 + (panel.lastState()?.waitingInstructionCount ?? 0) && panel.statusBarCount() === count - 1);
    assert.ok(panel.lastState()?.activity.some((a) => a.kind === 'granted' && a.approvalId === first.approvalId), 'the grant is in the activity list');

    // Approving it again is refused: it is no longer pending.
    const again = await panel.handleMessage({ type: 'approve', requestId: 'again-1', approvalId: first.approvalId });
    assert.ok(again?.type === 'reply' && !again.ok);

    // Deny the second with a note: the agent gets APPROVAL_DENIED with it.
    const denied = callError(client, 'operation_resume', { approval_id: second.approvalId, wait_ms: 30_000 });
    const denyReply = await panel.handleMessage({ type: 'deny', requestId: 'deny-1', approvalId: second.approvalId, note: 'not this file, please' });
    assert.deepEqual(denyReply, { type: 'reply', requestId: 'deny-1', ok: true });
    const err = await denied;
    assert.equal(err.code, 'APPROVAL_DENIED');
    assert.match(JSON.stringify(err), /not this file, please/);
    assert.equal(decoder.decode(await vscode.workspace.fs.readFile(second.uri)), second.before, 'the denied patch was not written');
    await waitFor('the badge counts the rest', () => (panel.badge()?.value ?? 0) === count - 2 + (panel.lastState()?.waitingInstructionCount ?? 0) && panel.statusBarCount() === count - 2);
  });

  it('shows a held command in full, and a denied one never starts', async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.commands', 'confirm', vscode.ConfigurationTarget.Global);
    try {
      const argv = ['node', '-e', `console.log(${JSON.stringify('a long argument '.repeat(30))})`, ''];
      const e = await callError(client, 'exec_command', { workspace_id: wsId, command: argv });
      assert.equal(e.code, 'APPROVAL_REQUIRED', e.message);
      const approvalId = e.details?.approval_id as string;
      await waitFor('the page state shows the command hold', () => pendingIds().includes(approvalId));
      const hold = panel.lastState()?.holds.find((h) => h.approvalId === approvalId);
      assert.equal(hold?.tool, 'exec_command');
      assert.deepEqual(hold?.command?.argv, argv, 'every argument, untruncated');
      assert.equal(hold?.command?.cwd, '');
      assert.equal(hold?.canReview, false);
      const denied = callError(client, 'operation_resume', { approval_id: approvalId, wait_ms: 30_000 });
      const reply = await panel.handleMessage({ type: 'deny', requestId: 'deny-cmd', approvalId, note: '' });
      assert.deepEqual(reply, { type: 'reply', requestId: 'deny-cmd', ok: true });
      assert.equal((await denied).code, 'APPROVAL_DENIED');
      await waitFor('the hold leaves the list', () => !pendingIds().includes(approvalId));
      assert.ok(!panel.lastState()?.processes.some((p) => p.command?.[2] === argv[2]), 'no process was started');
    } finally {
      await vscode.workspace.getConfiguration('codespace').update('approvals.commands', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('lists agent processes with exit code and duration; openTerminal shows a known one and refuses an unknown id', async () => {
    const r = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['node', '-e', 'process.exit(3)'] });
    await waitFor('the process is listed as exited', () => panel.lastState()?.processes.some((p) => p.processId === r.process_id && p.state === 'exited') === true);
    const p = panel.lastState()?.processes.find((x) => x.processId === r.process_id);
    assert.equal(p?.exitCode, 3);
    assert.equal(typeof p?.durationMs, 'number');
    assert.deepEqual(p?.command, ['node', '-e', 'process.exit(3)']);
    const shown = await panel.handleMessage({ type: 'openTerminal', requestId: 'term-1', processId: r.process_id });
    assert.deepEqual(shown, { type: 'reply', requestId: 'term-1', ok: true });
    const unknown = await panel.handleMessage({ type: 'openTerminal', requestId: 'term-2', processId: `${r.process_id}-forged` });
    assert.ok(unknown?.type === 'reply' && !unknown.ok && typeof unknown.error === 'string');
  });
});
