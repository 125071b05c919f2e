import type { Target } from './locate';

/**
 * The HTTP headers the bridge adds to every request it sends the window: the one place it turns its credential into
 * headers. The token is the window's (`target.token`: its token file, or CODESPACE_MCP_TOKEN from a terminal of the
 * window; see locate.ts), sent as the bearer token.
 */
export function upstreamHeaders(target: Target): Record<string, string> {
  return { Authorization: `Bearer ${target.token}` };
}
