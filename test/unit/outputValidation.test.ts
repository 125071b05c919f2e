/**
 * Results are checked against the tool's output schema before they leave (tools/call is served by our own handler, so
 * the SDK's check of McpServer does not run): a wrong result becomes a clear tool error for the client, and the
 * fault is logged. Checked with a real SDK client in-process, on test-only tools whose handlers return wrong results,
 * served beside the real catalogue (whose results keep passing). Both eras: the 2025 session server (v1 SDK client) and
 * the 2026-07-28 handler (v2 SDK client negotiating the modern era against `createMcpHandler`, in process).
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { InMemoryLogger } from '../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { defineTool } from '../../src/kernel/tool';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { createModernToolServer, createToolServer } from '../../src/mcp/toolServer';
import { makeTree, removeTree, toolError } from './helpers/workspaceFixture';

/** Declares a number, returns a string: the listed schema (top-level types) already says so. */
const wrongTypeTool = defineTool({
  name: 'wrong_type',
  title: 'Wrong type',
  description: 'Test only.',
  kind: 'inspect',
  input: {},
  output: { count: z.number() },
  create: () => () => Promise.resolve({ count: 'three' } as unknown as { count: number }),
});

/** Wrong deep inside an array: only the tool's full schema (not the compact listed one) sees it. */
const wrongItemTool = defineTool({
  name: 'wrong_item',
  title: 'Wrong item',
  description: 'Test only.',
  kind: 'inspect',
  input: {},
  output: { items: z.array(z.object({ path: z.string(), line: z.number().int() })) },
  create: () => () => Promise.resolve({ items: [{ path: 'a.ts', line: 1 }, { path: 'b.ts', line: 'two' }] } as unknown as { items: { path: string; line: number }[] }),
});

for (const era of ['2025-11-25', '2026-07-28'] as const)
describe(`output validation (tools/call checks every result against its output schema), ${era}`, () => {
  let root: string;
  let storage: string;
  let assembled: AssembledServices;
  let logger: InMemoryLogger;
  let client: Pick<Client, 'callTool' | 'listTools' | 'close'>;
  let close: () => Promise<void>;
  const call = async (name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => (await client.callTool({ name, arguments: args })) as CallToolResult;

  before(async () => {
    root = await makeTree({ 'a.txt': 'alpha\n' });
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-output-'));
    logger = new InMemoryLogger();
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'exec' }])), storage, {
        logger,
      }),
    );
    const dispatcher = assembled.dispatcherWith([wrongTypeTool.create(undefined), wrongItemTool.create(undefined)]);
    if (era === '2026-07-28') {
      const handler = createMcpHandler(() => createModernToolServer({ ...assembled.serving, dispatcher, version: '0.0.0-test' }), { legacy: 'reject' });
      const modern = new ClientV2({ name: 'unit-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await modern.connect(new StreamableHTTPClientTransport(new URL('http://in-process.invalid/mcp'), { fetch: (url, init) => handler.fetch(new Request(url, init)) }));
      assert.equal(modern.getProtocolEra(), 'modern');
      client = modern as unknown as Client;
      close = async () => {
        await modern.close();
        await handler.close();
      };
    } else {
      const server = createToolServer({ ...assembled.serving, dispatcher, version: '0.0.0-test' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const legacy = new Client({ name: 'unit-test', version: '1.0.0' });
      await server.connect(serverSide);
      await legacy.connect(clientSide);
      client = legacy;
      close = async () => {
        await legacy.close();
        await server.close();
      };
    }
    await client.listTools();
  });
  after(async () => {
    await close();
    await assembled.shutdown();
    await removeTree(root);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('a result of the wrong type: the client gets a tool error that names the field, and the fault is logged', async () => {
    const result = await call('wrong_type');
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent, undefined, 'no content that contradicts the schema leaves');
    const error = toolError(result);
    assert.equal(error.code, 'INTERNAL');
    assert.match(error.message, /^Output validation error: wrong_type produced a result that does not match its output schema \(count: Expected number, received string\)/);
    assert.match(error.hint ?? '', /CodeSpace log/);
    assert.ok(logger.lines.some((l) => l.startsWith('[error] [tools] wrong_type returned a result that does not match its output schema: count: Expected number')), logger.lines.join('\n'));
  });

  it('a result wrong deep inside (which the compact listed schema lets through) is caught by the full schema', async () => {
    const error = toolError(await call('wrong_item'));
    assert.equal(error.code, 'INTERNAL');
    assert.deepEqual(error.details?.output_errors, ['items.1.line: Expected number, received string']);
  });

  it('real results pass unchanged, with what the dispatcher adds', async () => {
    const read = await call('read', { workspace_id: 'proj', path: 'a.txt' });
    assert.equal(read.isError, undefined);
    assert.equal((read.structuredContent as { content: string }).content, 'alpha\n');
    const info = await call('workspace_info');
    assert.ok(!info.isError);
  });
});
