import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import { PROGRESS_MIN_INTERVAL_MS, progressReporter } from '../../src/mcp/progress';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree } from './helpers/workspaceFixture';

const sha = (b: string) => 'sha256:' + createHash('sha256').update(b).digest('hex');
const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('progress notifications and cancellation of long tools', () => {
  let base: string;
  let root: string;
  let h: Harness;

  before(async () => {
    const files: Record<string, string> = { 'a.txt': 'alpha\n' };
    for (let i = 0; i < 4000; i++) files[`tree/d${i % 200}/e${i % 7}/f${i}.ts`] = 'x\n';
    base = await makeTree(Object.fromEntries(Object.entries(files).map(([k, v]) => [`proj/${k}`, v])), 'codespace-progress-');
    root = path.join(base, 'proj');
    h = await connectHarness([{ root, name: 'proj', profile: 'write' }]);
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('progressReporter: nothing without a token; only increasing values; spaced out, the last always sent', async () => {
    const sent: ServerNotification[] = [];
    const send = (n: ServerNotification) => {
      sent.push(n);
      return Promise.resolve();
    };
    assert.equal(progressReporter(undefined, send), undefined);
    const p = progressReporter('tok', send);
    assert.ok(p);
    p(0, 10, 'start');
    p(0, 10);
    p(1, 10); // too soon after the first
    p(10, 10, 'done'); // final: always
    p(5, 10); // backwards: never
    assert.deepEqual(sent.map((n) => n.params), [
      { progressToken: 'tok', progress: 0, total: 10, message: 'start' },
      { progressToken: 'tok', progress: 10, total: 10, message: 'done' },
    ]);
    const q = progressReporter(7, send);
    q?.(1);
    await sleep(PROGRESS_MIN_INTERVAL_MS + 10);
    q?.(2, 1); // a total below the value is left out rather than sent wrong
    assert.deepEqual(sent.slice(2).map((n) => n.params), [{ progressToken: 7, progress: 1 }, { progressToken: 7, progress: 2 }]);
    const failing = progressReporter('x', () => Promise.reject(new Error('closed')));
    failing?.(1); // a failed send never throws into the tool
  });

  it('find over a big tree reports progress to a client that asked', async () => {
    const seen: number[] = [];
    const r = await h.client.callTool({ name: 'find', arguments: { workspace_id: 'proj', pattern: '**/*.ts', max_results: 10 } }, CallToolResultSchema, { onprogress: (p) => seen.push(p.progress) });
    assert.equal((r.structuredContent as { truncated: boolean }).truncated, true);
    assert.ok(seen.length >= 1, 'at least one progress notification');
  });

  it('apply_patch reports preparing, prepared and done', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const r = await h.client.callTool(
      { name: 'apply_patch', arguments: { workspace_id: 'proj', patch: patch('*** Add File: added.txt', '+new'), expected_versions: {}, operation_key: 'progress-1' } },
      CallToolResultSchema,
      { onprogress: (p) => seen.push(p) },
    );
    assert.equal((r.structuredContent as { status: string }).status, 'applied');
    // "prepared" (1 of 2) may fall inside the spacing of notifications; the first and the last always go.
    assert.deepEqual(seen[0], { progress: 0, total: 2, message: 'preparing' });
    assert.deepEqual(seen[seen.length - 1], { progress: 2, total: 2, message: 'done' });
    assert.ok(seen.length <= 3);
  });

  it('a cancelled find stops walking: CANCELLED, with no result', async () => {
    const ac = new AbortController();
    let progressed = 0;
    const dispatcher = h.services.dispatcherWith([]);
    const r = await dispatcher.call('find', { workspace_id: 'proj', pattern: '**/*.ts' }, ac.signal, {
      progress: () => {
        progressed++;
        ac.abort();
      },
    });
    assert.ok(progressed >= 1);
    assert.equal(r.kind, 'error');
    assert.equal(r.kind === 'error' ? r.body.code : '', 'CANCELLED');
  });

  it('a cancelled read of a file stops before decoding it', async () => {
    const ac = new AbortController();
    ac.abort();
    const dispatcher = h.services.dispatcherWith([]);
    const r = await dispatcher.call('read', { workspace_id: 'proj', path: 'a.txt' }, ac.signal);
    assert.equal(r.kind === 'error' ? r.body.code : r.kind, 'CANCELLED');
  });

  it('apply_patch cancelled before its commit writes nothing (never half-applied)', async () => {
    const events: RunnerEvent[] = [];
    const listening = h.services.runner.onEvent((e) => events.push(e));
    // Hold the workspace's patch turn so the call waits in prepare; cancel it there; then let it go on.
    const release = await h.services.patches.lock('proj');
    const ac = new AbortController();
    const call = h.client.callTool(
      {
        name: 'apply_patch',
        arguments: {
          workspace_id: 'proj',
          patch: patch('*** Update File: a.txt', '@@', '-alpha', '+beta', '*** Add File: never.txt', '+never'),
          expected_versions: { 'a.txt': sha('alpha\n') },
          operation_key: 'cancel-1',
        },
      },
      CallToolResultSchema,
      { signal: ac.signal },
    );
    await sleep(50);
    ac.abort('changed my mind');
    await assert.rejects(call);
    await sleep(20);
    release();
    try {
      for (let i = 0; i < 200 && !events.some((e) => e.type === 'operation.failed'); i++) await sleep(10);
      const failed = events.find((e) => e.type === 'operation.failed');
      assert.equal(failed?.type === 'operation.failed' ? failed.code : undefined, 'CANCELLED');
      assert.ok(!events.some((e) => e.type === 'operation.committed'));
      assert.equal(await fsp.readFile(path.join(root, 'a.txt'), 'utf8'), 'alpha\n');
      await assert.rejects(fsp.access(path.join(root, 'never.txt')));
      // The same request, not cancelled, applies: the key was not used up by the cancelled call.
      const again = ok<{ status: string }>(await h.call('apply_patch', {
        workspace_id: 'proj',
        patch: patch('*** Update File: a.txt', '@@', '-alpha', '+beta', '*** Add File: never.txt', '+never'),
        expected_versions: { 'a.txt': sha('alpha\n') },
        operation_key: 'cancel-1',
      }));
      assert.equal(again.status, 'applied');
    } finally {
      listening.dispose();
    }
  });
});
