/**
 * Our MCP endpoint assembled in plain Node, as test/unit/helpers/httpFixture.ts does it, with adjustable limits,
 * plus a connected SDK client. Bench-only.
 */
import type * as http from 'node:http';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { silentLogger } from '../src/core/ports/logger';
import { InMemoryWorkspaceSource } from '../src/core/ports/workspaceSource';
import { WorkspaceRegistry } from '../src/core/policy/workspaces';
import { toolCatalogue } from '../src/core/tools/catalogue';
import type { CoreServices, Limits } from '../src/core/tools/tool';
import { DEFAULT_LIMITS } from '../src/core/tools/tool';
import { McpHttpHost } from '../src/mcp/httpHost';
import { createToolServer } from '../src/mcp/toolServer';
import { NodeWorkspaceFs } from '../src/node/nodeWorkspaceFs';

export const WORKSPACE_ID = 'bench';

export interface BenchHost {
  readonly host: McpHttpHost;
  readonly port: number;
  readonly token: string;
  readonly url: URL;
  readonly services: CoreServices;
  /** The host's node:http server, for counting connections and requests (diagnostics only). */
  readonly httpServer: http.Server | undefined;
  stop(): Promise<void>;
}

export function benchServices(root: string, limits: Partial<Limits> = {}): CoreServices {
  const effective: Limits = { ...DEFAULT_LIMITS, ...limits };
  return {
    workspaces: new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: path.basename(root), preferredId: WORKSPACE_ID, profile: 'read-only' }])),
    fs: new NodeWorkspaceFs(),
    logger: silentLogger,
    limits: () => effective,
  };
}

/** A real McpHttpHost on 127.0.0.1 (OS-assigned port) serving `root` as workspace "bench". */
export async function startBenchHost(root: string, limits: Partial<Limits> = {}): Promise<BenchHost> {
  const token = 'B'.repeat(43);
  const services = benchServices(root, limits);
  const tools = toolCatalogue();
  const host = new McpHttpHost({
    createServer: () => createToolServer({ tools, services, logger: silentLogger, version: '0.0.0-bench' }),
    token: () => token,
    logger: silentLogger,
  });
  const port = await host.start(0);
  // Private field, read for diagnostics only; undefined if the host is ever restructured.
  const httpServer = (host as unknown as { httpServer?: http.Server }).httpServer;
  return { host, port, token, url: new URL(`http://127.0.0.1:${port}/mcp`), services, httpServer, stop: () => host.stop() };
}

/** An SDK client over Streamable HTTP with the bearer header, connected and with the tool list cached. */
export async function connectHttpClient(url: URL, token: string, name = 'codespace-bench'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  // As an agent does: list tools once (this also makes the client validate structuredContent against outputSchema).
  await client.listTools();
  return client;
}
