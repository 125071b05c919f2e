/**
 * Cancellation over real loopback HTTP in both protocol revisions: on 2026-07-28 the v2 client cancels by closing
 * the request's response stream, on 2025-11-25 the v1 client sends notifications/cancelled. A patch cancelled
 * before its commit point leaves nothing behind; a patch or command cancelled after it is recorded and can be read
 * back with operation_status / process_status.
 */
import * as assert from 'node:assert/strict';
import type * as http from 'node:http';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';
import { sha256 } from './helpers/patchWorld';
import { makeTree, removeTree } from './helpers/workspaceFixture';

interface Caller {
  /** Resolves once the server has received this client's cancellation of its in-flight request. */
  cancelDelivered(): Promise<void>;
  /** Calls a tool; `onprogress` hears its progress notifications (asking for them). */
  call(name: string, args: Record<string, unknown>, options?: { signal?: AbortSignal; onprogress?: () => void }): Promise<{ structuredContent?: Record<string, unknown>; isError?: boolean }>;
  close(): Promise<void>;
}

async function connect(running: RunningHost, era: '2026-07-28' | '2025-11-25'): Promise<Caller> {
  const url = new URL(`http://127.0.0.1:${running.port}/mcp`);
  const requestInit = { headers: { Authorization: `Bearer ${running.token.value}` } };
  let delivered!: () => void;
  let cancelled = new Promise<void>((resolve) => (delivered = resolve));
  const cancelDelivered = async () => {
    await cancelled;
    cancelled = new Promise<void>((resolve) => (delivered = resolve));
  };
  if (era === '2026-07-28') {
    // The revision cancels by closing the response stream: the server has seen it once the tools/call response
    // closes on its side (the SDK's Node adapter aborts the request in that same 'close' event).
    const server = (running.host as unknown as { httpServer: http.Server }).httpServer;
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      if (req.headers['mcp-method'] === 'tools/call') res.on('close', () => delivered());
    });
    const client = new ClientV2({ name: 'cancel-2026', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(url, { requestInit }));
    assert.equal(client.getProtocolEra(), 'modern');
    return { cancelDelivered, call: (name, args, options = {}) => client.callTool({ name, arguments: args }, options) as never, close: () => client.close() };
  }
  // notifications/cancelled is a POST of its own; the server has acted on it once that POST is answered.
  const observed: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"')) delivered();
    return response;
  };
  const client = new ClientV1({ name: 'cancel-2025', version: '1' });
  await client.connect(new TransportV1(url, { requestInit, fetch: observed }));
  return { cancelDelivered, call: (name, args, options = {}) => client.callTool({ name, arguments: args }, undefined, options) as never, close: () => client.close() };
}

for (const era of ['2026-07-28', '2025-11-25'] as const) {
  describe(`cancellation on both sides of the commit point over HTTP, ${era}`, function () {
    this.timeout(60_000);
    let base: string;
    let running: RunningHost;
    let caller: Caller;
    const events: RunnerEvent[] = [];
    let listening: { dispose(): void };
    const patchOf = (to: string) => `*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+${to}\n*** Add File: added-${to}.txt\n+${to}\n*** End Patch\n`;
    const patchArgs = (to: string, key: string) => ({ workspace_id: 'demo', patch: patchOf(to), expected_versions: { 'a.txt': sha256('alpha\n') }, operation_key: key });

    async function until(condition: () => boolean, what: string): Promise<void> {
      const deadline = Date.now() + 30_000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((resolve) => setTimeout(resolve, 10));
      }
    }

    beforeEach(async () => {
      base = await makeTree({ 'a.txt': 'alpha\n' });
      running = await startHost(base);
      caller = await connect(running, era);
      events.length = 0;
      listening = running.services.runner.onEvent((e) => events.push(e));
    });
    afterEach(async () => {
      listening.dispose();
      await caller.close();
      await running.stop();
      await removeTree(base);
    });

    it('a patch cancelled before its commit point leaves nothing behind, and its key stays unused', async () => {
      // The workspace's patch turn is taken, so the call waits in prepare; it is cancelled there.
      const release = await running.services.patches.lock('demo');
      const ac = new AbortController();
      let started = false;
      const call = caller.call('apply_patch', patchArgs('beta', 'before-1'), { signal: ac.signal, onprogress: () => (started = true) });
      try {
        await until(() => started, 'the call to start preparing');
        const seen = caller.cancelDelivered();
        ac.abort('changed my mind');
        await assert.rejects(call);
        await seen;
      } finally {
        release();
      }
      await until(() => events.some((e) => e.type === 'operation.failed'), 'the cancelled call to end');
      const failed = events.find((e) => e.type === 'operation.failed');
      assert.equal(failed?.type === 'operation.failed' ? failed.code : undefined, 'CANCELLED');
      assert.ok(!events.some((e) => e.type === 'operation.committed'));
      assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'alpha\n');
      await assert.rejects(fsp.access(path.join(base, 'added-beta.txt')));
      const status = await caller.call('operation_status', { operation_key: 'before-1' });
      assert.equal(status.isError, true, 'nothing was recorded under the key');
      // The same request, not cancelled, applies.
      const again = await caller.call('apply_patch', patchArgs('beta', 'before-1'));
      assert.equal(again.structuredContent?.status, 'applied');
    });

    it('a patch cancelled after its commit point is applied and recorded: operation_status reads it back', async () => {
      const ac = new AbortController();
      // Cancel the moment the server commits (before its answer can reach the client).
      const onCommit = running.services.runner.onEvent((e) => {
        if (e.type === 'operation.committed') ac.abort('too late');
      });
      try {
        await assert.rejects(caller.call('apply_patch', patchArgs('gamma', 'after-1'), { signal: ac.signal }));
      } finally {
        onCommit.dispose();
      }
      assert.equal(await fsp.readFile(path.join(base, 'a.txt'), 'utf8'), 'gamma\n');
      assert.equal(await fsp.readFile(path.join(base, 'added-gamma.txt'), 'utf8'), 'gamma\n');
      const status = await caller.call('operation_status', { operation_key: 'after-1' });
      assert.equal(status.isError, undefined, JSON.stringify(status));
      assert.equal(status.structuredContent?.status, 'applied');
    });

    it('a command cancelled after its commit point (the spawn) runs and is recorded: process_status reads it back', async () => {
      const ac = new AbortController();
      let processId: string | undefined;
      const onCommit = running.services.runner.onEvent((e) => {
        if (e.type === 'operation.committed' && e.process_id !== undefined) {
          processId = e.process_id;
          ac.abort('too late');
        }
      });
      try {
        await assert.rejects(caller.call('exec_command', { workspace_id: 'demo', command: ['sh', '-c', 'echo done > ran.txt'] }, { signal: ac.signal }));
      } finally {
        onCommit.dispose();
      }
      assert.ok(processId);
      let status: { structuredContent?: Record<string, unknown> } = {};
      const deadline = Date.now() + 30_000;
      for (;;) {
        status = await caller.call('process_status', { process_id: processId });
        if (status.structuredContent?.state !== 'running' || Date.now() > deadline) break;
        await new Promise<void>((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(status.structuredContent?.exit_code, 0, JSON.stringify(status));
      assert.equal(await fsp.readFile(path.join(base, 'ran.txt'), 'utf8'), 'done\n');
    });
  });
}
