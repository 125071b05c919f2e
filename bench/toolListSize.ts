/**
 * The size of `tools/list`: the context every session pays before its first call. Deterministic (bytes, not a
 * timing), so the unit suite asserts the budget too (test/unit/toolSurface.test.ts); `npm run bench` and
 * `npm run bench:editor` print it with the budget and a verdict.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { connectHttpClient, startBenchHost } from './host';
import type { BenchGroup, GroupResult } from './lib';
import { markdownTable } from './lib';

/** At most this many bytes of `tools/list` result with the default tool groups (about 6,000 tokens). */
export const TOOL_LIST_BUDGET_BYTES = 24_000;
/**
 * At most this many bytes with every group on, those served only on request included (about 8,700 tokens). The aim is
 * 32,000; the code, tasks and debug groups (13 tools, already terse) take the whole surface to 34,722: this bound keeps
 * it from growing until tools are merged.
 */
export const TOOL_LIST_ALL_GROUPS_BUDGET_BYTES = 35_000;

export interface ToolListSize {
  /** UTF-8 bytes of the JSON of the `tools/list` result, as the client's transport received it. */
  readonly bytes: number;
  /** Each tool's entry, in list order. */
  readonly tools: readonly { readonly name: string; readonly bytes: number }[];
}

const utf8 = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Lists the tools through a connected SDK client and measures the result as its transport received it (the
 * message before the client parses it; the server writes it as compact JSON, so its JSON is the bytes on the wire).
 */
export async function measureToolList(client: Client, transport: Transport): Promise<ToolListSize> {
  let received: { tools: { name: string }[] } | undefined;
  const deliver = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage, extra) => {
    const result = (message as { result?: { tools?: { name: string }[] } }).result;
    if (result && Array.isArray(result.tools)) received = result as { tools: { name: string }[] };
    deliver?.(message, extra);
  };
  try {
    await client.listTools();
  } finally {
    transport.onmessage = deliver;
  }
  if (!received) throw new Error('the tools/list result never reached the transport');
  return { bytes: utf8(received), tools: received.tools.map((t) => ({ name: t.name, bytes: utf8(t) })) };
}

export function verdict(bytes: number): string {
  return bytes <= TOOL_LIST_BUDGET_BYTES ? 'within target' : 'OVER target';
}

/** The per-tool table of a measurement, largest first. */
export function toolListTable(size: ToolListSize): string {
  const rows = [...size.tools].sort((a, b) => b.bytes - a.bytes).map((t) => [t.name, String(t.bytes)]);
  return markdownTable(['Tool', 'bytes'], [...rows, ['**all (tools/list result)**', `**${size.bytes}**`]], [1]);
}

/** The group's result: one budget line with its verdict, and the per-tool sizes. */
export function toolListResult(size: ToolListSize, where: string): GroupResult {
  return {
    title: 'tools/list size',
    description:
      `The \`tools/list\` result with the default tool groups (${size.tools.length} tools) ${where}, in UTF-8 bytes of its JSON: ` +
      `**${size.bytes} bytes** (about ${Math.round(size.bytes / 4)} tokens, ${(size.bytes / size.tools.length / 1000).toFixed(2)} KB a tool). ` +
      `Target ≤ ${TOOL_LIST_BUDGET_BYTES} bytes: **${verdict(size.bytes)}**. A size, not a timing (no timed rows).\n\n` +
      `Per tool, largest first:\n\n${toolListTable(size)}`,
    rows: [],
    ratios: [{ label: 'tools/list bytes / budget', value: size.bytes / TOOL_LIST_BUDGET_BYTES, target: 1 }],
    notes: [],
  };
}

/** `npm run bench toollist`: the plain-Node host over HTTP, with the default groups (what every session pays). */
export const toolListSize: BenchGroup = async (log) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-toollist-'));
  const host = await startBenchHost(root);
  try {
    const client = await connectHttpClient(host.url, host.token, 'codespace-bench-toollist');
    try {
      const size = await measureToolList(client, client.transport as Transport);
      log(`tools/list: ${size.bytes} bytes for ${size.tools.length} tools`);
      return toolListResult(size, 'served by the plain-Node host over HTTP to an SDK client');
    } finally {
      await client.close();
    }
  } finally {
    await host.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
};
