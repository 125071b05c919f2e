import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { AgentRef, AgentVerifier } from '../kernel/identity';
import { Emitter } from '../base/emitter';
import type { RequestCheck } from './security';

/**
 * Agent credentials on the HTTP endpoint. Each agent connected with "CodeSpace: Connect an Agent…" sends a
 * credential of its own instead of the window's token; the verifier (src/features/connect/vscode/agentCredentials.ts) knows only
 * their SHA-256 digests and names the agent a credential belongs to. The request is then handled with that agent as
 * its identity (requestAgent()), which the tools use for "not your own review" (src/kernel/identity.ts).
 */
export type { AgentVerifier } from '../kernel/identity';

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

/** The agent of each request that passed the check with an agent credential. */
const identified = new WeakMap<IncomingMessage, AgentRef>();

/**
 * The bearer check of /mcp: an agent credential the verifier knows passes (and names the request's agent);
 * anything else goes to `windowCheck` (the window's token, with its own 401).
 */
export function agentOrWindowCheck(verifier: AgentVerifier | undefined, windowCheck: RequestCheck): RequestCheck {
  if (!verifier) return windowCheck;
  return (req) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const agent = match !== null ? verifier.verify(match[1] as string) : undefined;
    if (agent === undefined) return windowCheck(req);
    identified.set(req, agent);
    return undefined;
  };
}

/** The agent a request authenticated as (undefined: the window's token). */
export function agentOfRequest(req: IncomingMessage): AgentRef | undefined {
  return identified.get(req);
}

const current = new AsyncLocalStorage<AgentRef | undefined>();

/** Runs the handling of one request with its agent as the identity every tool call in it sees. */
export function withRequestAgent<T>(agent: AgentRef | undefined, run: () => T): T {
  return current.run(agent, run);
}

/** The agent of the request being handled (undefined: the window's token, or outside a request). */
export function requestAgent(): AgentRef | undefined {
  return current.getStore();
}

/** What the endpoint knows of one agent's connections (in memory: since the window started). */
export interface AgentActivity {
  readonly id: string;
  readonly name: string;
  /** When its first request reached this window. */
  readonly connected_at: string;
  /** Its last request. */
  readonly last_activity: string;
  /** Its open 2025-era sessions. */
  readonly sessions: number;
}

/** The agents a window has seen: first and last request of each; listeners hear of connections, not of every request. */
export class AgentActivityLog {
  private readonly seenAt = new Map<string, { name: string; first: number; last: number }>();
  /** A listener's failure is its own (the panel re-reads the list on its next change). */
  private readonly changes = new Emitter<void>();

  seen(agent: AgentRef): void {
    const now = Date.now();
    const known = this.seenAt.get(agent.id);
    if (known) {
      known.last = now;
      known.name = agent.name;
      return;
    }
    this.seenAt.set(agent.id, { name: agent.name, first: now, last: now });
    this.changed();
  }

  forget(agentId: string): void {
    this.seenAt.delete(agentId);
    this.changed();
  }

  list(openSessions: ReadonlyMap<string, number>): AgentActivity[] {
    return [...this.seenAt].map(([id, a]) => ({ id, name: a.name, connected_at: new Date(a.first).toISOString(), last_activity: new Date(a.last).toISOString(), sessions: openSessions.get(id) ?? 0 }));
  }

  onDidChange(listener: () => void): { dispose(): void } {
    return this.changes.on(listener);
  }

  changed(): void {
    this.changes.emit();
  }
}
