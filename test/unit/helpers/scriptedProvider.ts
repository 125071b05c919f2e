// A model provider on 127.0.0.1 for agent CLIs that speak the OpenAI Responses API (Codex): it records each
// request's tools and answers every turn with one assistant message, streamed as the API streams it.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderTool {
  readonly type?: string;
  readonly name?: string;
  readonly tools?: readonly ProviderTool[];
}

export interface ScriptedProvider {
  readonly baseUrl: string;
  /** The tools of every request received, in order. */
  readonly requests: ProviderTool[][];
  close(): Promise<void>;
}

export async function startScriptedProvider(answer = 'done'): Promise<ScriptedProvider> {
  const requests: ProviderTool[][] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { tools?: ProviderTool[] } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        res.writeHead(400).end('not JSON');
        return;
      }
      requests.push(body.tools ?? []);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (e: { type: string } & Record<string, unknown>): void => {
        res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      };
      const id = `resp_${requests.length}`;
      event({ type: 'response.created', response: { id } });
      event({ type: 'response.output_item.done', item: { type: 'message', role: 'assistant', id: `msg_${requests.length}`, content: [{ type: 'output_text', text: answer }] } });
      event({ type: 'response.completed', response: { id, usage: { input_tokens: 1, input_tokens_details: null, output_tokens: 1, output_tokens_details: null, total_tokens: 2 } } });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The tool names a request offers under an MCP server's namespace (Codex: `mcp__<server>`). */
export function namespaceTools(tools: readonly ProviderTool[], namespace: string): string[] {
  return (tools.find((t) => t.type === 'namespace' && t.name === namespace)?.tools ?? []).map((t) => t.name ?? '');
}
