// The bridge's HTTP side, loaded when the bridge first opens a session on the window (bridge.ts), not at start: the
// SDK's HTTP client and its message schemas take longer to load than a client waits for `initialize`.
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { modernRelayFetch } from './modernRelay';

export function httpTransport(url: string, headers: Record<string, string>): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, fetch: modernRelayFetch() });
}

/** A failure that proves the request never reached a session: refused connection, unknown session, bad token. */
export function notDelivered(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || err.code === 401 || err.code === 403;
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

/** A failure of the endpoint (gone, restarted, token rotated) rather than an answer to this request. */
export function endpointFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || err.code === 401 || err.code === 403 || (err.code ?? 0) >= 500;
  return err instanceof TypeError || (err as { cause?: unknown }).cause !== undefined || (err as { code?: string }).code === 'ECONNRESET';
}
