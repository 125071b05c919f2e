/** The Tasks extension's identifier, as clients declare it and servers answer it in server/discover. */
export const TASKS = 'io.modelcontextprotocol/tasks';

/** One JSON-RPC answer: a result or an error. */
export interface ModernAnswer {
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/**
 * A client of raw 2026-07-28 requests over HTTP, with the headers and `_meta` that revision requires. The v2 SDK
 * client does not take a task for an answer to tools/call, so a test of the Tasks extension speaks it itself.
 * `tasks: false` leaves the extension undeclared; `name` fills the Mcp-Name header (the tool or task the body names).
 */
export function modernRequester(url: string, token: () => string, clientName: string): (method: string, params: Record<string, unknown>, options?: { tasks?: boolean; name?: string }) => Promise<ModernAnswer> {
  let id = 0;
  return async (method, params, options = {}) => {
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: clientName, version: '1' },
      'io.modelcontextprotocol/clientCapabilities': options.tasks === false ? {} : { extensions: { [TASKS]: {} } },
    };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token()}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
    };
    if (options.name !== undefined) headers['mcp-name'] = options.name;
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta } }) });
    const text = await res.text();
    // A streamed answer is one SSE event whose data is the JSON-RPC response.
    return JSON.parse(res.headers.get('content-type')?.startsWith('text/event-stream') ? (/^data: (.*)$/m.exec(text)?.[1] ?? '') : text) as ModernAnswer;
  };
}
