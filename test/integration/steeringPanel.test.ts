import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { HostMessage, PanelState, PanelWork } from '../../src/shared/panelProtocol';
import { EXTENSION_ID, call, connectToFirstFolder } from './helpers';

// Steering from the editor, against the real steering service and the real MCP tools: an instruction sent with
// Send Instruction to Agent shows in the panel's state, an agent claims it over MCP and completes it with a note,
// and the panel shows the note; the composer's messages queue and edit drafts; the badge counts what waits.

interface PanelForTests {
  handleMessage(message: unknown): Promise<HostMessage | undefined>;
  lastState(): PanelState | undefined;
  isReady(): boolean;
  badge(): { readonly value: number; readonly tooltip: string } | undefined;
}

interface Instruction {
  id: string;
  text: string;
  status: string;
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('steering from the panel and the command', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let panel: PanelForTests;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    const api = vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports;
    assert.ok(api?.panelForTests);
    panel = api.panelForTests;
    await vscode.commands.executeCommand('codespace.showPanel');
    await waitFor('the panel page is ready', () => panel.isReady() && panel.lastState() !== undefined, 30_000);
  });
  after(async () => {
    await client?.close();
  });

  const work = (id: string): PanelWork | undefined => panel.lastState()?.works?.find((w) => w.id === id);

  it('an instruction queued with Send Instruction to Agent appears in the panel, is claimed over MCP, and its note shows', async () => {
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'steering integration' });
    await waitFor('the panel shows the open work', () => work(workId)?.status === 'open');
    const text = 'run the linter \u001b[31mnow\u001b[0m';
    const view = await vscode.commands.executeCommand<Instruction | undefined>('codespace.sendInstruction', workId, text);
    assert.equal(view?.status, 'queued');
    const shown = await waitFor('the panel shows the instruction queued', () => work(workId)?.instructions.find((i) => i.id === view?.id && i.status === 'queued'));
    assert.equal(shown.text, text, 'the exact text (the page escapes it when it renders)');
    assert.equal(panel.lastState()?.waitingInstructionCount !== undefined && (panel.lastState()?.waitingInstructionCount ?? 0) >= 1, true);
    await waitFor('the badge counts the waiting instruction', () => (panel.badge()?.tooltip ?? '').includes('waiting for the agent'));

    const claimed = await call<{ instruction?: { id: string; text: string } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction?.id, view?.id);
    assert.equal(claimed.instruction?.text, text);
    await waitFor('the panel shows it claimed', () => work(workId)?.instructions.find((i) => i.id === view?.id)?.status === 'claimed');
    await call(client, 'steer_complete', { instruction_id: view?.id, status: 'done', note: 'linted: 0 problems' });
    const done = await waitFor('the panel shows it done with the note', () => work(workId)?.instructions.find((i) => i.id === view?.id && i.status === 'done'));
    assert.equal(done.note, 'linted: 0 problems');
    await call(client, 'work_finish', { work_id: workId });
    await waitFor('the panel shows the work finished', () => work(workId)?.status === 'finished');
  });

  it('the composer saves a draft, edits it, queues it; an agent sees it at its next claim', async () => {
    const { work_id: workId } = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'composer integration' });
    await waitFor('the panel shows the work', () => work(workId));
    const saved = await panel.handleMessage({ type: 'saveDraft', requestId: 'c1', workId, text: 'first line\nsecond line' });
    assert.deepEqual(saved, { type: 'reply', requestId: 'c1', ok: true });
    const draft = await waitFor('the draft shows', () => work(workId)?.instructions.find((i) => i.status === 'draft'));
    assert.equal(draft.editable, true);
    const none = await call<{ instruction?: unknown }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(none.instruction, undefined, 'a draft is not for the agent yet');
    assert.deepEqual(await panel.handleMessage({ type: 'editDraft', requestId: 'c2', instructionId: draft.id, text: 'edited\ntwo lines', revision: draft.revision }), { type: 'reply', requestId: 'c2', ok: true });
    assert.deepEqual(await panel.handleMessage({ type: 'queueDraft', requestId: 'c3', instructionId: draft.id }), { type: 'reply', requestId: 'c3', ok: true });
    const claimed = await call<{ instruction?: { id: string; text: string } }>(client, 'steer_claim_next', { work_id: workId });
    assert.equal(claimed.instruction?.text, 'edited\ntwo lines');
    await call(client, 'steer_complete', { instruction_id: draft.id, status: 'blocked', note: 'needs a decision' });
    const blocked = await waitFor('the panel shows it blocked', () => work(workId)?.instructions.find((i) => i.id === draft.id && i.status === 'blocked'));
    assert.equal(blocked.note, 'needs a decision');
    const forged = await panel.handleMessage({ type: 'queueInstruction', requestId: 'c4', workId, text: 'x', approvalId: 'a1' });
    assert.ok(forged?.type === 'reply' && !forged.ok, 'smuggled fields are refused');
    await call(client, 'work_finish', { work_id: workId });
  });
});
