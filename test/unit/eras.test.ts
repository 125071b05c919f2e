import * as assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningHost } from './helpers/httpFixture';
import { MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

type Era = 'modern' | 'legacy';

/** What a client of either SDK is asked in these tests (both SDKs' clients have these methods). */
interface AnyClient {
  listTools(): Promise<{ tools: { name: string; outputSchema?: unknown }[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResourceTemplates(): Promise<{ resourceTemplates: { uriTemplate: string }[] }>;
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; text?: string; _meta?: Record<string, unknown> }[] }>;
  listPrompts(): Promise<{ prompts: { name: string; arguments?: { name: string; description?: string }[] }[] }>;
  getPrompt(params: { name: string; arguments?: Record<string, string> }): Promise<{ messages: { content: unknown }[] }>;
  complete(params: unknown): Promise<{ completion: { values: string[] } }>;
  close(): Promise<void>;
}

interface Connected {
  readonly client: AnyClient;
  readonly era: Era;
}

async function connectV2(running: RunningHost, mode: 'auto' | 'legacy'): Promise<Connected> {
  const client = new ClientV2({ name: `v2-${mode}`, version: '1' }, mode === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new TransportV2(new URL(`http://127.0.0.1:${running.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${running.token.value}` } } });
  await client.connect(transport);
  return { client: client as unknown as AnyClient, era: client.getProtocolEra() as Era };
}

async function connectV1(running: RunningHost): Promise<Connected> {
  const client = new ClientV1({ name: 'v1', version: '1' });
  await client.connect(new TransportV1(new URL(`http://127.0.0.1:${running.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${running.token.value}` } } }));
  return { client: client as unknown as AnyClient, era: 'legacy' };
}

describe('both protocol eras on /mcp (2026-07-28 beside 2025-11-25)', function () {
  this.timeout(60_000);
  let base: string;
  let running: RunningHost;
  before(async () => {
    base = await makeTree({ 'a.txt': 'alpha\n', 'src/b.ts': 'export const b = 1;\n' });
    running = await startHost(base);
  });
  after(async () => {
    await running.stop();
    await removeTree(base);
  });

  it('the v2 client in automatic negotiation speaks 2026-07-28; pinned to 2025-11-25 and the v1 client speak 2025 in a session', async () => {
    const auto = await connectV2(running, 'auto');
    const legacy = await connectV2(running, 'legacy');
    const v1 = await connectV1(running);
    try {
      assert.equal(auto.era, 'modern');
      assert.equal(legacy.era, 'legacy');
      // Only the 2025-era clients opened sessions on the server.
      assert.equal(running.host.sessionCount, 2);
    } finally {
      await Promise.all([auto.client.close(), legacy.client.close(), v1.client.close()]);
    }
  });

  for (const kind of ['v2 auto (2026-07-28)', 'v2 pinned to 2025-11-25', 'v1'] as const) {
    describe(kind, () => {
      let c: Connected;
      before(async () => {
        c = kind === 'v1' ? await connectV1(running) : await connectV2(running, kind.startsWith('v2 auto') ? 'auto' : 'legacy');
        assert.equal(c.era, kind.startsWith('v2 auto') ? 'modern' : 'legacy');
      });
      after(async () => c.client.close());

      it('lists the same tools with output schemas, and calls them', async () => {
        const tools = (await c.client.listTools()).tools;
        assert.ok(tools.some((t) => t.name === 'read' && t.outputSchema !== undefined));
        const result = (await c.client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'a.txt' } })) as { structuredContent?: { content?: string } };
        assert.equal(result.structuredContent?.content, 'alpha\n');
        const bad = (await c.client.callTool({ name: 'read', arguments: { workspace_id: 'demo' } })) as { isError?: boolean; content: { text: string }[] };
        assert.equal(bad.isError, true);
        assert.match(bad.content[0]?.text ?? '', /INVALID_ARGUMENTS/);
      });

      it('serves the resource templates, a file read, the prompt with its argument descriptions, and completions', async () => {
        const templates = (await c.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
        assert.deepEqual(templates, ['codespace://steering/{work_id}', 'codespace://workspace/{workspace_id}/{+path}']);
        const read = await c.client.readResource({ uri: 'codespace://workspace/demo/src/b.ts' });
        assert.equal(read.contents[0]?.text, 'export const b = 1;\n');
        assert.equal(typeof read.contents[0]?._meta?.version, 'string');
        const prompt = (await c.client.listPrompts()).prompts.find((p) => p.name === 'codespace_agent_loop');
        assert.ok(prompt);
        assert.match(prompt.arguments?.find((a) => a.name === 'workspace_id')?.description ?? '', /completes to the open folders/);
        const got = await c.client.getPrompt({ name: 'codespace_agent_loop', arguments: { workspace_id: 'demo', task: 'fix it' } });
        assert.match(JSON.stringify(got.messages[0]?.content), /work_open/);
        const ws = await c.client.complete({ ref: { type: 'ref/prompt', name: 'codespace_agent_loop' }, argument: { name: 'workspace_id', value: 'de' } });
        assert.deepEqual(ws.completion.values, ['demo']);
        const paths = await c.client.complete({ ref: { type: 'ref/resource', uri: 'codespace://workspace/{workspace_id}/{+path}' }, argument: { name: 'path', value: 's' }, context: { arguments: { workspace_id: 'demo' } } });
        assert.deepEqual(paths.completion.values, ['src/']);
      });
    });
  }

  it('2026-07-28: steering queue changes arrive through subscriptions/listen; coordination rides on calls that name the work_id', async () => {
    const client = new ClientV2({ name: 'listener', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(new URL(`http://127.0.0.1:${running.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${running.token.value}` } } }));
    try {
      assert.equal(client.getProtocolEra(), 'modern');
      const opened = (await client.callTool({ name: 'work_open', arguments: { workspace_id: 'demo', title: 'era test' } })) as { structuredContent: { work_id: string } };
      const workId = opened.structuredContent.work_id;
      const uri = `codespace://steering/${workId}`;
      const updated: string[] = [];
      let listChanged = 0;
      let heard: () => void = () => undefined;
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        updated.push(n.params.uri);
        heard();
      });
      client.setNotificationHandler('notifications/resources/list_changed', () => {
        listChanged++;
        heard();
      });
      const subscription = await client.listen({ resourceSubscriptions: [uri], resourcesListChanged: true });
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, [uri]);
      const arrived = new Promise<void>((resolve) => (heard = resolve));
      await running.services.steering.createDraft(workId, 'use tabs', { queue: true });
      await arrived;
      assert.deepEqual(updated, [uri]);
      // No session: a call that names the work gets its coordination; one that does not, none.
      const status = (await client.callTool({ name: 'steer_status', arguments: { work_id: workId } })) as { structuredContent: { coordination?: { work_id: string; queued_instructions: number } } };
      assert.deepEqual(status.structuredContent.coordination, { work_id: workId, queued_instructions: 1 });
      const unnamed = (await client.callTool({ name: 'workspace_info', arguments: {} })) as { structuredContent: { coordination?: unknown } };
      assert.equal(unnamed.structuredContent.coordination, undefined);
      // Finishing the work (after its instruction is done) changes the list of steering resources.
      const claimed = await running.services.steering.claimNext(workId);
      await running.services.steering.complete(claimed?.id ?? '', 'done');
      await running.services.steering.finishWork(workId);
      while (listChanged === 0) await new Promise<void>((resolve) => (heard = resolve));
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  it('a 2026-era request passes the same Host, Origin and token guards first', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } },
    });
    const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' };
    assert.equal((await rawRequest(running.port, { headers, body })).status, 401);
    assert.equal((await rawRequest(running.port, { headers: { ...headers, authorization: `Bearer ${running.token.value}`, origin: 'http://evil.example' }, body })).status, 403);
    assert.equal((await rawRequest(running.port, { headers: { ...headers, authorization: `Bearer ${running.token.value}` }, body, host: 'localhost' })).status, 200);
  });
});
