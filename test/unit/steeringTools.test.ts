/**
 * Steering through the MCP endpoint with real SDK clients over HTTP: coordination on every tool result of a
 * session with an open work (and not on another session's), adoption by work_id after a "reload", the claim race
 * between two sessions, work_finish refusing, work_id recorded with operations, the steering resource's update
 * notification reaching a subscribed client, and the agent-loop prompt.
 */
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';
import { makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

interface Coordination {
  work_id: string;
  queued_instructions: number;
}

describe('steering tools over MCP (real SDK clients, real port)', function () {
  this.timeout(120000);
  let root: string;
  let h: RunningHost;
  const clients: Client[] = [];

  async function connect(): Promise<{ client: Client; call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult> }> {
    const client = new Client({ name: 'steer-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${h.port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${h.token.value}` } } }));
    clients.push(client);
    return { client, call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult };
  }
  const coordinationOf = (r: CallToolResult): Coordination | undefined => {
    if (r.isError) {
      const first = r.content[0];
      return first?.type === 'text' ? ((JSON.parse(first.text) as { error: { details?: { coordination?: Coordination } } }).error.details?.coordination) : undefined;
    }
    return (r.structuredContent as { coordination?: Coordination }).coordination;
  };

  before(async () => {
    root = await makeTree({ 'a.txt': 'one\n' }, 'codespace-steer-');
    h = await startHost(root);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h.stop();
    await removeTree(root);
  });

  it('lists the steering tools with their annotations and the agent-loop prompt', async () => {
    const { client } = await connect();
    const tools = (await client.listTools()).tools;
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of ['work_open', 'steer_status', 'steer_claim_next', 'steer_complete', 'work_finish']) assert.ok(byName.has(n), n);
    assert.equal(byName.get('steer_status')?.annotations?.readOnlyHint, true);
    for (const n of ['work_open', 'steer_claim_next', 'steer_complete', 'work_finish']) assert.equal(byName.get(n)?.annotations?.readOnlyHint, false, n);
    // Any result may carry coordination and diagnostics_update: every output schema accepts them, as the SDK client validates results.
    const ajv = new AjvJsonSchemaValidator();
    const extra = { coordination: { work_id: 'work-1', queued_instructions: 2 }, diagnostics_update: [{ workspace_id: 'w', path: 'a.ts', version: 'sha256:0', settled: true, counts: { error: 1 }, items: [] }] };
    for (const t of tools) {
      assert.ok(t.outputSchema, t.name);
      const check = ajv.getValidator(t.outputSchema)(extra);
      assert.ok(check.valid, `${t.name} allows coordination and diagnostics_update: ${check.errorMessage ?? ''}`);
    }
    const prompts = (await client.listPrompts()).prompts;
    assert.deepEqual(prompts.map((p) => p.name), ['codespace_agent_loop']);
    const text = JSON.stringify((await client.getPrompt({ name: 'codespace_agent_loop' })).messages);
    for (const word of ['work_open', 'check_only', 'process_status', 'steer_claim_next', 'work_finish', 'diagnostics_update', 'diagnostics \\{ paths \\}']) assert.match(text, new RegExp(word));
    // Its arguments: both optional; workspace_id completes to the window's folders; given, the loop starts there.
    assert.deepEqual(prompts[0]?.arguments?.map((a) => [a.name, a.required ?? false]), [['workspace_id', false], ['task', false]]);
    const completed = await client.complete({ ref: { type: 'ref/prompt', name: 'codespace_agent_loop' }, argument: { name: 'workspace_id', value: 'de' } });
    assert.deepEqual(completed.completion.values, ['demo']);
    const opened = JSON.stringify((await client.getPrompt({ name: 'codespace_agent_loop', arguments: { workspace_id: 'demo', task: 'Fix the parser' } })).messages);
    assert.match(opened, /work_open \{ workspace_id: \\"demo\\", title: \\"Fix the parser\\" \}/);
  });

  it('coordination rides on every result of the session with the open work, errors included, and on no other session', async () => {
    const a = await connect();
    const b = await connect();
    const opened = ok<{ work_id: string; coordination: Coordination }>(await a.call('work_open', { workspace_id: 'demo', title: 'Coordinated' }));
    const workId = opened.work_id;
    assert.deepEqual(opened.coordination, { work_id: workId, queued_instructions: 0 });
    await h.services.steering.createDraft(workId, 'please also update the docs', { queue: true });
    await h.services.steering.createDraft(workId, 'a draft is not counted');
    // Tools that know nothing of works still carry it (output validated by the SDK client against each schema).
    for (const [name, args] of [
      ['workspace_info', {}],
      ['read', { workspace_id: 'demo', path: 'a.txt' }],
      ['find', { workspace_id: 'demo', pattern: '*.txt' }],
      ['steer_status', { work_id: workId }],
    ] as const) {
      const r = await a.call(name, args);
      assert.equal(r.isError, undefined, `${name}: ${JSON.stringify(r.content)}`);
      assert.deepEqual(coordinationOf(r), { work_id: workId, queued_instructions: 1 }, name);
    }
    const err = await a.call('read', { workspace_id: 'demo', path: 'missing.txt' });
    assert.equal(toolError(err).code, 'NOT_FOUND');
    assert.deepEqual(coordinationOf(err), { work_id: workId, queued_instructions: 1 }, 'an error tells it too');
    // The other session has no open work: nothing leaks to it.
    const other = await b.call('workspace_info', {});
    assert.equal(coordinationOf(other), undefined);
    assert.equal(coordinationOf(await b.call('read', { workspace_id: 'demo', path: 'missing.txt' })), undefined);

    const claim = ok<{ instruction: { id: string; text: string } }>(await a.call('steer_claim_next', { work_id: workId }));
    assert.equal(claim.instruction.text, 'please also update the docs');
    assert.deepEqual(coordinationOf(await a.call('workspace_info', {})), { work_id: workId, queued_instructions: 0 });
    const refused = ok<{ closed: boolean; reason: string; counts: { claimed: number } }>(await a.call('work_finish', { work_id: workId }));
    assert.equal(refused.closed, false);
    assert.equal(refused.reason, 'pending_user_input');
    assert.equal(refused.counts.claimed, 1);
    ok(await a.call('steer_complete', { instruction_id: claim.instruction.id, status: 'done', note: 'docs updated' }));
    assert.equal(h.services.steering.instruction(claim.instruction.id)?.note, 'docs updated');
    const closed = ok<{ closed: boolean; coordination?: unknown }>(await a.call('work_finish', { work_id: workId }));
    assert.equal(closed.closed, true);
    assert.equal(closed.coordination, undefined, 'a finished work is no longer the session\'s open work');
    assert.equal(coordinationOf(await a.call('workspace_info', {})), undefined);
  });

  it('after a reload a new session adopts the work by passing work_id, and operations record it', async () => {
    const first = await connect();
    const workId = ok<{ work_id: string }>(await first.call('work_open', { workspace_id: 'demo', title: 'Survives' })).work_id;
    await first.client.close();
    const next = await connect();
    assert.equal(coordinationOf(await next.call('workspace_info', {})), undefined, 'not its work yet');
    const read = ok<{ version: string }>(await next.call('read', { workspace_id: 'demo', path: 'a.txt' }));
    const patch = '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch';
    const applied = await next.call('apply_patch', { workspace_id: 'demo', patch, expected_versions: { 'a.txt': read.version }, operation_key: 'steer-op-1', work_id: workId });
    assert.equal(ok<{ status: string }>(applied).status, 'applied');
    assert.deepEqual(coordinationOf(applied), { work_id: workId, queued_instructions: 0 });
    assert.deepEqual(coordinationOf(await next.call('workspace_info', {})), { work_id: workId, queued_instructions: 0 }, 'adopted');
    const proc = ok<{ process_id: string }>(await next.call('exec_command', { workspace_id: 'demo', command: ['true'], work_id: workId }));
    for (let i = 0; i < 100 && h.services.steering.operations(workId).processes.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(h.services.steering.operations(workId), { patches: ['steer-op-1'], processes: [proc.process_id] });
    assert.equal(toolError(await next.call('exec_command', { workspace_id: 'demo', command: ['true'], work_id: 'work_nope' })).code, 'WORK_NOT_FOUND');
    assert.equal(toolError(await next.call('apply_patch', { workspace_id: 'demo', patch, expected_versions: {}, operation_key: 'k2', work_id: 'work_nope' })).code, 'WORK_NOT_FOUND');
  });

  it('two sessions racing steer_claim_next: each instruction goes to exactly one', async () => {
    const a = await connect();
    const b = await connect();
    const workId = ok<{ work_id: string }>(await a.call('work_open', { workspace_id: 'demo', title: 'Race' })).work_id;
    const n = 20;
    for (let i = 0; i < n; i++) await h.services.steering.createDraft(workId, `task ${i}`, { queue: true });
    const results = await Promise.all(Array.from({ length: n * 2 }, (_, i) => (i % 2 === 0 ? a : b).call('steer_claim_next', { work_id: workId })));
    const ids = results.map((r) => ok<{ instruction?: { id: string } }>(r).instruction?.id).filter((x) => x !== undefined);
    assert.equal(ids.length, n);
    assert.equal(new Set(ids).size, n);
  });

  it('review comments reach the agent as one review_comments instruction with each comment\'s path, range and quoted lines', async () => {
    const a = await connect();
    const workId = ok<{ work_id: string }>(await a.call('work_open', { workspace_id: 'demo', title: 'Comments' })).work_id;
    await h.services.steering.createDraft(workId, 'typed by the developer', { queue: true });
    const comments = [
      { path: 'src/b.ts', range: { start_line: 4, end_line: 6 }, quoted: 'x\ny\nz', body: 'Split this.' },
      { path: 'a.txt', range: { start_line: 1, end_line: 1 }, quoted: 'one', body: ' Say two. ' },
      { path: 'a.txt', side: 'old' as const, range: { start_line: 3, end_line: 3 }, quoted: 'gone', body: '    keep()\r\n\t\u{1F600}' },
    ];
    await assert.rejects(h.services.steering.queueReviewComments(workId, []), /at least one comment/);
    await assert.rejects(h.services.steering.queueReviewComments(workId, [{ ...comments[0], range: { start_line: 2, end_line: 1 } }] as never), /end_line/);
    const queued = await h.services.steering.queueReviewComments(workId, comments);
    assert.equal(queued.status, 'queued');
    const typed = ok<{ instruction: Record<string, unknown> }>(await a.call('steer_claim_next', { work_id: workId })).instruction;
    assert.equal(typed.text, 'typed by the developer');
    assert.equal(typed.kind, undefined, 'typed text carries no kind');
    const claimed = ok<{ instruction: { id: string; text: string; kind?: string; comments?: unknown } }>(await a.call('steer_claim_next', { work_id: workId })).instruction;
    assert.equal(claimed.id, queued.id);
    assert.equal(claimed.kind, 'review_comments');
    assert.deepEqual(claimed.comments, [
      { path: 'a.txt', side: 'old', range: { start_line: 3, end_line: 3 }, quoted: 'gone', body: '    keep()\r\n\t\u{1F600}' },
      { path: 'a.txt', side: 'new', range: { start_line: 1, end_line: 1 }, quoted: 'one', body: ' Say two. ' },
      { path: 'src/b.ts', side: 'new', range: { start_line: 4, end_line: 6 }, quoted: 'x\ny\nz', body: 'Split this.' },
    ]);
    assert.equal(
      claimed.text,
      'Review comments from the developer (3 on 2 files; each with its lines in "comments"):\n- a.txt:3 (old side): keep() \u{1F600}\n- a.txt:1: Say two.\n- src/b.ts:4-6: Split this.',
    );
  });

  it('no steering tool can approve: instruction text cannot reach approval_resolve, and there is no approve tool', async () => {
    const { client } = await connect();
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of names) assert.doesNotMatch(n, /^(work|steer)_.*(approve|grant|commit)/);
    const complete = (await client.listTools()).tools.find((t) => t.name === 'steer_complete');
    assert.deepEqual(Object.keys(complete?.inputSchema.properties ?? {}).sort(), ['instruction_id', 'note', 'status']);
  });

  it('a subscribed SDK client gets notifications/resources/updated when an instruction is queued; reads the queue', async () => {
    const { client, call } = await connect();
    const workId = ok<{ work_id: string }>(await call('work_open', { workspace_id: 'demo', title: 'Subscribed' })).work_id;
    const listed = (await client.listResources()).resources.map((r) => r.uri);
    const uri = `codespace://steering/${workId}`;
    assert.ok(listed.includes(uri), JSON.stringify(listed));
    const updates: string[] = [];
    let wake: () => void = () => undefined;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      wake();
    });
    await client.subscribeResource({ uri });
    // The standalone stream is opened by the client after initialize; give it until the first update arrives.
    const arrived = new Promise<void>((resolve) => (wake = resolve));
    await h.services.steering.createDraft(workId, 'a draft is no news');
    await h.services.steering.createDraft(workId, 'now queued', { queue: true });
    await Promise.race([arrived, new Promise((_, reject) => setTimeout(() => reject(new Error('no resources/updated notification arrived')), 20000))]);
    assert.deepEqual(updates, [uri]);
    const read = await client.readResource({ uri });
    const first = read.contents[0] as { text: string; mimeType: string };
    assert.equal(first.mimeType, 'application/json');
    const body = JSON.parse(first.text) as { counts: { queued: number; draft: number }; instructions: { text: string }[] };
    assert.equal(body.counts.queued, 1);
    assert.deepEqual(body.instructions.map((i) => i.text), ['now queued'], 'drafts are not shown to the agent');
    await assert.rejects(client.subscribeResource({ uri: 'codespace://steering/work_nope' }));
    await client.unsubscribeResource({ uri });
    await h.services.steering.createDraft(workId, 'after unsubscribe', { queue: true });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(updates.length, 1, 'no update after unsubscribe');
  });
});
