/**
 * The `tools/list` size row of `npm run bench:editor`: the extension in VS Code with default settings, listed by a
 * fresh SDK client session over its HTTP endpoint (bench/toolListSize.ts measures and renders it).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { GroupResult } from '../lib';
import { TOOL_LIST_BUDGET_BYTES, measureToolList, toolListResult } from '../toolListSize';

/** The row: its summary-table verdict and its section. Shaped as run.ts's GroupOutput. */
export async function toolListGroup(endpoint: { readonly mcpUrl: string; readonly mcpToken: string }): Promise<{
  group: GroupResult;
  verdicts: { what: string; against: string; ours: string; baseline: string; result: string; target: string; pass: boolean; value: number }[];
}> {
  const client = new Client({ name: 'codespace-bench-toollist', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${endpoint.mcpToken}` } } });
  await client.connect(transport);
  try {
    const size = await measureToolList(client, transport);
    return {
      group: toolListResult(size, 'served by the extension in VS Code (default settings) to an SDK client over HTTP'),
      verdicts: [
        {
          what: `\`tools/list\` of the whole surface (${size.tools.length} tools), the context every session pays`,
          against: `the budget: ${(TOOL_LIST_BUDGET_BYTES / 1000).toFixed(1)} KB, about ${Math.round(TOOL_LIST_BUDGET_BYTES / 4 / 100) * 100} tokens`,
          ours: `${size.bytes} bytes`,
          baseline: `${TOOL_LIST_BUDGET_BYTES} bytes`,
          result: `${size.bytes} bytes`,
          target: `≤ ${TOOL_LIST_BUDGET_BYTES} bytes`,
          pass: size.bytes <= TOOL_LIST_BUDGET_BYTES,
          value: size.bytes,
        },
      ],
    };
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}
