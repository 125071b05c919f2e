import { AGENT_TOKEN_ENV_VAR } from '../features/connect';
import type { Target } from './locate';

/**
 * The HTTP headers the bridge adds to every request it sends the window: the one place it turns its credential into
 * headers. An agent connected with "Connect an Agent…" has its own credential in CODESPACE_AGENT_TOKEN (the copied
 * configuration sets it): that is sent, so the window knows which agent calls. Without it, the window's token
 * (`target.token`: its token file, or CODESPACE_MCP_TOKEN from a terminal of the window; see locate.ts) is sent,
 * and the window knows no agent identity.
 */
export function upstreamHeaders(target: Target, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { Authorization: `Bearer ${agentCredential(env) ?? target.token}` };
}

/** The agent's own credential, when the bridge was started with one. */
export function agentCredential(env: NodeJS.ProcessEnv): string | undefined {
  return env[AGENT_TOKEN_ENV_VAR] || undefined;
}
