// An agent in a process of its own, for the flood test in process.test.ts: the extension host's memory is then
// the extension's alone, not also the test's MCP client's. Starts `sh -c <script>` on a PTY over MCP, reads it
// to eof like an agent (by cursor, 1 MiB at most, wait_ms), and prints one JSON line with what it read.
// Usage: node floodReader.js <url> <token> <workspace_id> <script>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

async function main(): Promise<void> {
  const [url, token, workspaceId, script] = process.argv.slice(2) as [string, string, string, string];
  const client = new Client({ name: 'flood-reader', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
    return r.structuredContent as T;
  };
  const { process_id } = await call<{ process_id: string }>('exec_command', { workspace_id: workspaceId, command: ['sh', '-c', script], tty: true });
  let cursor = 0;
  let tail = '';
  let reads = 0;
  let retried = 0;
  for (;;) {
    let r: { chunk: string; cursor: number; eof: boolean };
    try {
      r = await call<{ chunk: string; cursor: number; eof: boolean }>('read_process', { process_id, cursor, max_bytes: 1024 * 1024, wait_ms: 2000 });
    } catch (err) {
      // A request can be lost on its way (a kept-alive connection the server closed as it was reused, on a loaded
      // machine): a read by cursor is safe to repeat, and an agent repeats it. Said on stderr, with the cause.
      if (retried++ >= 3 || !(err instanceof TypeError)) throw err;
      process.stderr.write(`read_process at cursor ${cursor} lost (${String((err as { cause?: unknown }).cause ?? err.message)}); reading again\n`);
      continue;
    }
    reads++;
    tail = (tail + r.chunk).slice(-64);
    cursor = r.cursor;
    if (r.eof) break;
  }
  const status = await call<{ exit_code?: number }>('process_status', { process_id });
  process.stdout.write(JSON.stringify({ process_id, cursor, tail, reads, exit_code: status.exit_code }) + '\n');
  await client.close();
}

main().catch((err: unknown) => {
  const cause = err instanceof Error && err.cause !== undefined ? `\ncause: ${err.cause instanceof Error ? (err.cause.stack ?? err.cause.message) : String(err.cause)}` : '';
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}${cause}\n`);
  process.exit(1);
});
