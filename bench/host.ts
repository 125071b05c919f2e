/**
 * Our MCP endpoint assembled in plain Node, as test/unit/helpers/httpFixture.ts does it, with adjustable limits,
 * plus a connected SDK client. Bench-only.
 */
import * as fs from 'node:fs';
import type * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { silentLogger } from '../src/base/logger';
import { InMemoryWorkspaceSource } from '../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../src/kernel/workspaces';
import type { AnyTool, ToolContract } from '../src/kernel/tool';
import type { WorkspaceFs } from '../src/base/workspaceFs';
import type { Limits } from '../src/kernel/limits';
import { DEFAULT_LIMITS } from '../src/kernel/limits';
import { McpHttpHost } from '../src/mcp/httpHost';
import { createToolServer } from '../src/mcp/toolServer';
import { NodeWorkspaceFs } from '../src/kernel/node/nodeWorkspaceFs';
import type { AssembledServices } from '../src/app/assembleServices';
import { assembleServices } from '../src/app/assembleServices';
import { RipgrepContentSearch } from '../src/features/files/node/ripgrepContentSearch';

export const WORKSPACE_ID = 'bench';

export interface BenchHost {
  readonly host: McpHttpHost;
  readonly port: number;
  readonly token: string;
  readonly url: URL;
  readonly services: BenchServices;
  /** The host's node:http server, for counting connections and requests (diagnostics only). */
  readonly httpServer: http.Server | undefined;
  stop(): Promise<void>;
}

/** The assembled services, with the file system they were given. */
export type BenchServices = AssembledServices & { readonly fs: WorkspaceFs };

/** The tool `contract` as the assembly created it. */
export function benchTool(services: Pick<AssembledServices, 'tools'>, contract: Pick<ToolContract, 'name'>): AnyTool {
  const tool = services.tools.find((t) => t.name === contract.name);
  if (!tool) throw new Error(`no tool ${contract.name}`);
  return tool;
}

/** The services the extension assembles, serving `root` read-only as workspace "bench" (state in a temp folder). */
export async function benchServices(root: string, limits: Partial<Limits> = {}): Promise<BenchServices> {
  const effective: Limits = { ...DEFAULT_LIMITS, ...limits };
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-storage-'));
  const benchFs = new NodeWorkspaceFs();
  const assembled = await assembleServices({
    workspaces: new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: path.basename(root), preferredId: WORKSPACE_ID, profile: 'read-only' }])),
    fs: benchFs,
    logger: silentLogger,
    limits: () => effective,
    storageDir: storage,
    env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
    timeoutMs: () => 0,
    lifetime: 'bench',
    // Plain-Node host: the system's ripgrep, given explicitly (the extension uses VS Code's own).
    contentSearch: new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit' }),
  });
  return {
    ...assembled,
    fs: benchFs,
    shutdown: async () => {
      await assembled.shutdown();
      fs.rmSync(storage, { recursive: true, force: true });
    },
  };
}

/** A real McpHttpHost on 127.0.0.1 (OS-assigned port) serving `root` as workspace "bench". */
export async function startBenchHost(root: string, limits: Partial<Limits> = {}): Promise<BenchHost> {
  const token = 'B'.repeat(43);
  const assembled = await benchServices(root, limits);
  const services = assembled;
  const host = new McpHttpHost({
    createServer: () => createToolServer({ ...assembled.serving, version: '0.0.0-bench' }),
    token: () => token,
    logger: silentLogger,
  });
  const port = await host.start(0);
  // Private field, read for diagnostics only; undefined if the host is ever restructured.
  const httpServer = (host as unknown as { httpServer?: http.Server }).httpServer;
  const stop = async (): Promise<void> => {
    await host.stop();
    await assembled.shutdown();
  };
  return { host, port, token, url: new URL(`http://127.0.0.1:${port}/mcp`), services, httpServer, stop };
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
