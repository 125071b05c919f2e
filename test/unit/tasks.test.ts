/**
 * Held operations as MCP Tasks (the io.modelcontextprotocol/tasks extension of 2026-07-28), over real loopback
 * HTTP against the real host: raw JSON-RPC, because the v2 SDK client refuses a `resultType: "task"` answer.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalPolicy } from '../../src/kernel/approvals/approvalService';
import { DEFAULT_APPROVAL_POLICY } from '../../src/kernel/approvals/approvalService';
import { sha256 } from './helpers/patchWorld';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';
import { TASKS, modernRequester, type ModernAnswer } from './helpers/modernRequest';
import { ReportingLanguage } from './helpers/reportingLanguage';
import { makeTree, removeTree, toolError } from './helpers/workspaceFixture';

type Answer = ModernAnswer;

describe('held operations as MCP Tasks (2026-07-28)', function () {
  this.timeout(60_000);
  let base: string;
  let running: RunningHost;
  let policy: ApprovalPolicy;

  /** One 2026-era request to this test's host; `tasks: false` leaves the extension undeclared. */
  let modern: (method: string, params: Record<string, unknown>, options?: { tasks?: boolean; name?: string }) => Promise<Answer>;

  const patchOf = (from: string, to: string) => `*** Begin Patch\n*** Update File: a.txt\n@@\n-${from}\n+${to}\n*** End Patch\n`;
  const call = (args: Record<string, unknown>, tasks = true) => modern('tools/call', { name: 'apply_patch', arguments: { workspace_id: 'demo', expected_versions: { 'a.txt': sha256('alpha\n') }, ...args } }, { tasks, name: 'apply_patch' });
  const getTask = (taskId: string) => modern('tasks/get', { taskId }, { name: taskId });
  const pendingIds = () => running.services.approvals.pending().map((h) => h.approval_id);

  beforeEach(async () => {
    base = await makeTree({ 'a.txt': 'alpha\n' });
    policy = { ...DEFAULT_APPROVAL_POLICY, patches: 'confirm' };
    running = await startHost(base, 0, { approvalPolicy: () => policy, language: new ReportingLanguage() });
    modern = modernRequester(`http://127.0.0.1:${running.port}/mcp`, () => running.token.value, 'tasks-test');
  });
  afterEach(async () => {
    await running.stop();
    await removeTree(base);
  });

  it('server/discover declares the extension', async () => {
    const r = await modern('server/discover', {});
    assert.deepEqual((r.result?.capabilities as { extensions?: unknown }).extensions, { [TASKS]: {} });
  });

  it('a held patch answers with a task; tasks/get says it waits for review, then gives the applied result with diagnostics and reviewer_changes', async () => {
    const r = await call({ patch: patchOf('alpha', 'beta'), operation_key: 'k1' });
    assert.equal(r.result?.resultType, 'task', JSON.stringify(r));
    const taskId = r.result?.taskId as string;
    assert.deepEqual(pendingIds(), [taskId], 'the task id is the hold in the approvals ledger');
    assert.equal(r.result?.status, 'working');
    assert.match(String(r.result?.statusMessage), /Waiting for review in the editor/);
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'alpha\n', 'nothing written before review');

    const waiting = await getTask(taskId);
    assert.equal(waiting.result?.status, 'working');
    assert.equal(waiting.result?.taskId, taskId);

    // The developer edits the proposal in the diff editor, then approves.
    running.services.approvals.setReviewed(taskId, 'a.txt', new TextEncoder().encode('gamma\n'));
    await running.services.approvals.resolve(taskId, 'grant', { by: 'reviewer', note: 'gamma reads better' });
    const done = await getTask(taskId);
    assert.equal(done.result?.status, 'completed', JSON.stringify(done));
    const result = done.result?.result as CallToolResult & { structuredContent: Record<string, unknown> };
    assert.equal(result.isError, undefined);
    assert.equal(result.structuredContent.status, 'applied');
    assert.match(JSON.stringify(result.structuredContent.diagnostics), /reported by the test language server/, `a resumed held patch carries diagnostics: ${JSON.stringify(result.structuredContent)}`);
    assert.ok(Array.isArray(result.structuredContent.reviewer_changes) && result.structuredContent.reviewer_changes.length === 1, JSON.stringify(result.structuredContent));
    assert.equal(result.structuredContent.reviewer_note, 'gamma reads better');
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'gamma\n');
    // Asking again replays the stored outcome; the operation ran once.
    const again = await getTask(taskId);
    assert.deepEqual((again.result?.result as { structuredContent: unknown }).structuredContent, result.structuredContent);
  });

  it('a denial completes the task with the tool error and the reviewer\'s note', async () => {
    const r = await call({ patch: patchOf('alpha', 'beta'), operation_key: 'k2' });
    const taskId = r.result?.taskId as string;
    await running.services.approvals.resolve(taskId, 'deny', { by: 'reviewer', note: 'keep alpha' });
    const done = await getTask(taskId);
    assert.equal(done.result?.status, 'completed');
    const error = toolError(done.result?.result as CallToolResult);
    assert.equal(error.code, 'APPROVAL_DENIED');
    assert.equal(error.details?.note, 'keep alpha');
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'alpha\n');
  });

  it('Request Changes completes the task with a changes_requested result carrying the line comments; nothing is written', async () => {
    const r = await call({ patch: patchOf('alpha', 'beta'), operation_key: 'k-comments' });
    const taskId = r.result?.taskId as string;
    const comment = { path: 'a.txt', range: { start_line: 1, end_line: 1 }, quoted: 'beta', body: 'Call it gamma.' };
    await running.services.approvals.requestChanges(taskId, [comment]);
    const done = await getTask(taskId);
    assert.equal(done.result?.status, 'completed', JSON.stringify(done));
    const result = done.result?.result as CallToolResult & { structuredContent: Record<string, unknown> };
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.structuredContent, { status: 'changes_requested', comments: [{ ...comment, side: 'new' }] });
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'alpha\n');
  });

  it('tasks/cancel withdraws a pending hold: the task reads cancelled and nothing runs; a decided task is acknowledged and ends as decided', async () => {
    const r = await call({ patch: patchOf('alpha', 'beta'), operation_key: 'k3' });
    const taskId = r.result?.taskId as string;
    const cancelled = await modern('tasks/cancel', { taskId }, { name: taskId });
    assert.deepEqual(Object.keys(cancelled.result ?? {}).filter((k) => k !== '_meta' && k !== 'resultType'), []);
    assert.deepEqual(pendingIds(), []);
    assert.equal(running.services.approvals.get(taskId)?.state, 'denied');
    const gone = await modern('tasks/get', { taskId }, { name: taskId });
    assert.equal(gone.result?.status, 'cancelled', JSON.stringify(gone));
    assert.match(String(gone.result?.statusMessage), /nothing ran/);
    const again = await modern('tasks/cancel', { taskId }, { name: taskId });
    assert.equal(again.error, undefined, 'cancellation is cooperative: acknowledged');
    assert.equal((await modern('tasks/get', { taskId }, { name: taskId })).result?.status, 'cancelled');
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'alpha\n', 'the withdrawn patch wrote nothing');

    // A hold the developer granted: tasks/cancel is acknowledged, and the task completes with the applied patch.
    const granted = await call({ patch: patchOf('alpha', 'gamma'), operation_key: 'k3b' });
    const grantedId = granted.result?.taskId as string;
    await running.services.approvals.resolve(grantedId, 'grant', { by: 'reviewer' });
    assert.equal((await modern('tasks/cancel', { taskId: grantedId }, { name: grantedId })).error, undefined);
    const done = await modern('tasks/get', { taskId: grantedId }, { name: grantedId });
    assert.equal(done.result?.status, 'completed', JSON.stringify(done));
    assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'gamma\n');
    assert.equal((await modern('tasks/get', { taskId: 'no-such-task' }, { name: 'no-such-task' })).error?.code, -32602);
    assert.equal((await modern('tasks/cancel', { taskId: 'no-such-task' }, { name: 'no-such-task' })).error?.code, -32602);
  });

  it('without the extension a 2026-era client, and a 2025-era client, keep APPROVAL_REQUIRED + operation_resume (with diagnostics)', async () => {
    const r = await call({ patch: patchOf('alpha', 'beta'), operation_key: 'k4' }, false);
    const held = toolError(r.result as unknown as CallToolResult);
    assert.equal(held.code, 'APPROVAL_REQUIRED');

    const v1 = new ClientV1({ name: 'v1', version: '1' });
    await v1.connect(new TransportV1(new URL(`http://127.0.0.1:${running.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${running.token.value}` } } }));
    try {
      const legacy = toolError((await v1.callTool({ name: 'apply_patch', arguments: { workspace_id: 'demo', patch: patchOf('alpha', 'delta'), expected_versions: { 'a.txt': sha256('alpha\n') }, operation_key: 'k5' } })) as CallToolResult);
      assert.equal(legacy.code, 'APPROVAL_REQUIRED');
      const approvalId = legacy.details?.approval_id as string;
      await running.services.approvals.resolve(approvalId, 'grant', { by: 'reviewer' });
      const resumed = (await v1.callTool({ name: 'operation_resume', arguments: { approval_id: approvalId } })) as CallToolResult & { structuredContent: Record<string, unknown> };
      assert.equal(resumed.structuredContent.status, 'applied', JSON.stringify(resumed.content));
      assert.match(JSON.stringify(resumed.structuredContent.diagnostics), /reported by the test language server/, 'a held patch resumed in the 2025 era carries diagnostics');
    } finally {
      await v1.close();
    }
  });
});
