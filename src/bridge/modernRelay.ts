/** The `_meta` key by which a 2026-07-28 message names its protocol revision (the per-request envelope). */
export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

interface Message {
  readonly id?: string | number;
  readonly method?: string;
  readonly params?: { _meta?: Record<string, unknown>; name?: unknown; uri?: unknown; requestId?: unknown };
}

/**
 * A header value as MCP 2026-07-28 carries names in headers: as it is when it is plain printable ASCII without
 * surrounding blanks, else UTF-8 in base64 between `=?base64?` and `?=`.
 */
export function headerValue(value: string): string {
  return /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith('=?') ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function parse(body: RequestInit['body']): Message | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const m = JSON.parse(body) as unknown;
    return m !== null && typeof m === 'object' && !Array.isArray(m) ? (m as Message) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The bridge's upstream fetch, for 2026-07-28 messages a stdio client sends (recognised by their `_meta`
 * envelope; 2025-era messages pass untouched):
 * - it adds the headers that revision requires to match the body: `MCP-Protocol-Version`, `Mcp-Method`, and
 *   `Mcp-Name` (the tool or prompt name, or the resource URI);
 * - on stdio a client cancels with `notifications/cancelled`, but over HTTP that revision cancels by closing the
 *   request's response stream: so the notification is not sent on, it aborts the POST of the request it names.
 */
export function modernRelayFetch(inner: Fetch = fetch): Fetch {
  const inFlight = new Map<string | number, AbortController>();
  return async (url, init) => {
    const m = parse(init?.body);
    const version = m?.params?._meta?.[PROTOCOL_VERSION_KEY];
    if (!m || typeof version !== 'string' || m.method === undefined) return inner(url, init);
    if (m.id === undefined && m.method === 'notifications/cancelled') {
      const id = m.params?.requestId;
      if (typeof id === 'string' || typeof id === 'number') inFlight.get(id)?.abort();
      return new Response(null, { status: 202 });
    }
    const headers = new Headers(init?.headers);
    headers.set('mcp-protocol-version', version);
    headers.set('mcp-method', m.method);
    const name = m.method === 'resources/read' ? m.params?.uri : m.params?.name;
    if (typeof name === 'string') headers.set('mcp-name', headerValue(name));
    if (m.id === undefined) return inner(url, { ...init, headers });
    const abort = new AbortController();
    const id = m.id;
    inFlight.set(id, abort);
    const signal = init?.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    try {
      const response = await inner(url, { ...init, headers, signal });
      if (!response.body) {
        inFlight.delete(id);
        return response;
      }
      // The answer may still stream (progress, then the result): cancellable until its body ends.
      const done = (): void => {
        inFlight.delete(id);
      };
      const body = response.body.pipeThrough(new TransformStream({ flush: done }));
      abort.signal.addEventListener('abort', done, { once: true });
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } catch (err) {
      inFlight.delete(id);
      throw err;
    }
  };
}
