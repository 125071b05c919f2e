import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import { McpHttpHost } from '../../../src/mcp/httpHost';
import { bothEras } from '../../../src/mcp/toolServer';
import { assembleServices } from '../../../src/app/assembleServices';
import type { AssembledServices } from '../../../src/app/assembleServices';
import { unitAssembleOptions } from './assembleOptions';
import type { ContentSearch } from '../../../src/features/files/common/contentSearch';
import type { ApprovalPolicy } from '../../../src/kernel/approvals/approvalService';
import type { LanguageFeatures } from '../../../src/features/editor/common/languageFeatures';
import type { AgentVerifier } from '../../../src/kernel/identity';
import { inboxRoute } from '../../../src/features/works/node';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with full control of the headers (fetch forbids setting Host). Loopback only. */
export function rawRequest(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string; host?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: options.host ?? '127.0.0.1', port, method: options.method ?? 'POST', path: options.path ?? '/mcp', headers: options.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export const INIT_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export interface RunningHost {
  host: McpHttpHost;
  port: number;
  token: { value: string };
  /** The /inbox token (a different secret). */
  inboxToken: { value: string };
  services: AssembledServices;
  stop(): Promise<void>;
}

/** A real host on 127.0.0.1 serving `root` as workspace "demo". */
export async function startHost(root: string, preferredPort = 0, options: { contentSearch?: ContentSearch; approvalPolicy?: () => ApprovalPolicy; language?: LanguageFeatures; diagnosticsSettleMs?: number; disabledToolGroups?: () => readonly unknown[]; agents?: AgentVerifier } = {}): Promise<RunningHost> {
  const token = { value: 'T'.repeat(43) };
  const inboxToken = { value: 'I'.repeat(43) };
  const storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-storage-'));
  const assembled = await assembleServices(
    unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: path.basename(root), preferredId: 'demo', profile: 'exec' }])), storage, {
      ...(options.contentSearch ? { contentSearch: options.contentSearch } : {}),
      ...(options.approvalPolicy ? { approvalPolicy: options.approvalPolicy } : {}),
      ...(options.disabledToolGroups ? { disabledToolGroups: options.disabledToolGroups } : {}),
      ...(options.language ? { language: options.language, diagnosticsSettleMs: () => options.diagnosticsSettleMs ?? 5000 } : {}),
    }),
  );
  const services = assembled;
  const host = new McpHttpHost({
    ...bothEras({ ...assembled.serving, version: '0.0.0-test' }),
    token: () => token.value,
    ...(options.agents ? { agents: options.agents } : {}),
    logger: silentLogger,
    routes: [inboxRoute({ steering: services.steering, token: () => inboxToken.value, logger: silentLogger })],
  });
  const port = await host.start(preferredPort);
  return {
    host,
    port,
    token,
    inboxToken,
    services,
    stop: async () => {
      await host.stop();
      await assembled.shutdown();
      await fsp.rm(storage, { recursive: true, force: true });
    },
  };
}
