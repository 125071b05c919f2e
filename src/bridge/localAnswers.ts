import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ShippedCatalogue } from './catalogueSource';
import { PROTOCOL_VERSION_KEY } from './modernRelay';

const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
/** The revision of the window's stateless endpoint (docs/TOOLS.md "Protocol revisions"). */
const MODERN_VERSION = '2026-07-28';
/** What the window's 2026-07-28 answers add to a list: complete, not to be cached by anyone else. */
const MODERN_LIST_FIELDS = { resultType: 'complete', ttlMs: 0, cacheScope: 'private' } as const;

/** The 2026-07-28 envelope of a request (its `_meta` naming the revision), undefined for a 2025-era message. */
export function modernEnvelope(m: JSONRPCMessage): Record<string, unknown> | undefined {
  const meta = (m as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  return typeof meta?.[PROTOCOL_VERSION_KEY] === 'string' ? meta : undefined;
}

/**
 * The bridge's own answer to a request it can answer before it has found the window, exactly as the window answers
 * it (test/unit/bridgeStart.test.ts compares them): `initialize` (2025-11-25: the version negotiated as the window's
 * SDK does), `server/discover` (2026-07-28) and `tools/list` in either revision, from `tools`. Undefined for any
 * other request: that one waits for the window.
 */
export function localAnswer(m: JSONRPCRequest, catalogue: ShippedCatalogue, tools: readonly unknown[]): JSONRPCMessage | undefined {
  const modern = modernEnvelope(m) !== undefined;
  const info = { [SERVER_INFO_KEY]: catalogue.serverInfo };
  let result: Record<string, unknown> | undefined;
  if (m.method === 'initialize' && !modern) {
    const requested = (m.params as { protocolVersion?: unknown } | undefined)?.protocolVersion;
    const { supported, latest } = catalogue.protocolVersions;
    const protocolVersion = typeof requested === 'string' && supported.includes(requested) ? requested : latest;
    result = { protocolVersion, capabilities: catalogue.capabilities.legacy, serverInfo: catalogue.serverInfo, instructions: catalogue.instructions };
  } else if (m.method === 'server/discover' && modern) {
    result = { supportedVersions: [MODERN_VERSION], capabilities: catalogue.capabilities.modern, instructions: catalogue.instructions, ...MODERN_LIST_FIELDS, _meta: info };
  } else if (m.method === 'tools/list') {
    result = modern ? { _meta: info, tools, ...MODERN_LIST_FIELDS } : { tools };
  }
  return result === undefined ? undefined : { jsonrpc: '2.0', id: m.id, result };
}
