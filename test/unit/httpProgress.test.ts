import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import type { RunningHost } from './helpers/httpFixture';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

describe('HTTP endpoint: progress of a request streams on its own response', () => {
  let base: string;
  let running: RunningHost;
  let client: Client;

  before(async () => {
    // A small tree: how many notifications follow the first depends on how long the work takes, but the first one
    // goes when each tool starts, so the checks below hold on a fast machine and on a loaded one alike.
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`demo/d${i % 3}/f${i}.txt`] = 'needle\n'.repeat(3);
    base = await makeTree(files, 'codespace-http-progress-');
    running = await startHost(path.join(base, 'demo'), 0, { contentSearch: new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit' }) });
    client = new Client({ name: 'progress-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${running.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${running.token.value}` } } }));
  });
  after(async () => {
    await client.close();
    await running.stop();
    await removeTree(base);
  });

  it('find and search with a progress token: notifications arrive before the result, over real HTTP', async () => {
    for (const [name, args] of [
      ['find', { workspace_id: 'demo', pattern: '**/*.txt', max_results: 5 }],
      ['search', { workspace_id: 'demo', query: 'needle', max_results: 2000 }],
    ] as const) {
      const seen: number[] = [];
      const r = await client.callTool({ name, arguments: args }, CallToolResultSchema, { onprogress: (p) => seen.push(p.progress) });
      assert.equal(r.isError, undefined, name);
      // The client drops notifications that come after the result: what it saw arrived before it.
      assert.ok(seen.length >= 1, `${name}: ${seen.length} progress notification(s)`);
      assert.equal(seen[0], 0, `${name}: the first notification is the start`);
      assert.ok(seen.every((v, i) => i === 0 || v > (seen[i - 1] ?? -1)), `${name}: values only increase (${seen.join(', ')})`);
    }
  });

  it('without a progress token the answer stays one JSON body', async () => {
    const init = await rawRequest(running.port, { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${running.token.value}` }, body: INIT_BODY });
    const session = init.headers['mcp-session-id'] as string;
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${running.token.value}`, 'mcp-session-id': session };
    await rawRequest(running.port, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    const plain = await rawRequest(running.port, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'find', arguments: { workspace_id: 'demo', pattern: '**/*.txt', max_results: 5 } } }) });
    assert.match(String(plain.headers['content-type']), /^application\/json/);
    const withToken = await rawRequest(running.port, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'find', arguments: { workspace_id: 'demo', pattern: '**/*.txt', max_results: 5 }, _meta: { progressToken: 'p1' } } }),
    });
    assert.match(String(withToken.headers['content-type']), /^text\/event-stream/);
    const events = withToken.body.split('\n\n').filter((e) => e.trim() !== '').map((e) => JSON.parse(e.replace(/^event: message\ndata: /, '')) as { method?: string; id?: number });
    assert.ok(events.length >= 2, `progress, then the result: ${withToken.body}`);
    assert.ok(events.slice(0, -1).every((e) => e.method === 'notifications/progress'));
    assert.equal(events[events.length - 1]?.id, 3);
    const jsonOnly = await rawRequest(running.port, {
      method: 'POST',
      headers: { ...headers, accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'find', arguments: { workspace_id: 'demo', pattern: '**/*.txt', max_results: 5 }, _meta: { progressToken: 'p2' } } }),
    });
    assert.match(String(jsonOnly.headers['content-type']), /^application\/json/, 'a client that accepts only JSON gets JSON');
  });
});
