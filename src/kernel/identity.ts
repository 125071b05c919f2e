import { ToolError } from '../base/errors';

/**
 * Who calls. An agent connected with a credential of its own ("CodeSpace: Connect an Agent…") is that agent in
 * every session it opens; a caller with the window's token has no agent identity, only its MCP session (if any).
 * The developer in the editor is neither: the editor's own paths never go through here.
 */
export interface AgentRef {
  /** Stable id: the agent's name, normalised (lower case, `[a-z0-9._-]`). The same name is the same agent. */
  readonly id: string;
  /** The name as the developer gave it ("codex", "claude-code", "my reviewer"). */
  readonly name: string;
}

/** Tells which agent a credential belongs to (the endpoint's check; src/features/connect/vscode/agentCredentials.ts). */
export interface AgentVerifier {
  /** The agent whose credential this is, or undefined (not a credential, or revoked). */
  verify(credential: string): AgentRef | undefined;
}

export interface Caller {
  /** The MCP session of the call (2025-era only). */
  readonly session?: string;
  /** The agent whose credential the call carried; absent with the window's token. */
  readonly agent?: AgentRef;
}

/** The caller of a call context (a tool's, a run's): its session and agent, only those that are set. */
export function callerOf(context: { readonly session?: string | undefined; readonly agent?: AgentRef | undefined }): Caller {
  return { ...(context.session !== undefined ? { session: context.session } : {}), ...(context.agent !== undefined ? { agent: context.agent } : {}) };
}

/** Who made something (a work, a hold): every session and every agent that opened, edited or requested it. */
export interface Authors {
  readonly sessions: readonly string[];
  /** Agent ids. */
  readonly agents: readonly string[];
}

/** What the caller tries: review (approve or reject) a work, commit a work, resolve (grant or deny) a hold. */
export type ReviewAction = 'review' | 'commit' | 'resolve';

/** What the check is about: named in the error. */
export interface Reviewed {
  readonly kind: 'work' | 'hold';
  readonly id: string;
  readonly action: ReviewAction;
}

/**
 * What a caller with the window's token (no agent identity) is held to, per action: the rules from before agent
 * identities, unchanged. `session`: refused when its session is one of the authors, or when it has no session (a
 * 2026-era request, which nothing tells apart from the authors); `none`: not checked (the window's token is the
 * developer's own tools; for a hold, `codespace.approvals.agentMayResolve` alone decides).
 */
export const WINDOW_TOKEN_RULES: Readonly<Record<ReviewAction, 'session' | 'none'>> = { review: 'session', commit: 'none', resolve: 'none' };

/** Most entries an author list keeps per kind (the newest). */
export const MAX_AUTHORS = 100;

/** The authors of a record with one more caller added (deduplicated, capped). */
export function withAuthor(authors: Authors, caller: Caller): Authors {
  const add = (list: readonly string[], v: string | undefined): readonly string[] => (v === undefined || list.includes(v) ? list : [...list, v].slice(-MAX_AUTHORS));
  const sessions = add(authors.sessions, caller.session);
  const agents = add(authors.agents, caller.agent?.id);
  // Unchanged: the same object, so a caller can tell that nothing needs storing.
  return sessions === authors.sessions && agents === authors.agents ? authors : { sessions, agents };
}

/** Whether `caller` is one of `authors`, and why: the same agent (any session) or the same session. */
export function ownership(caller: Caller, authors: Authors): 'agent' | 'session' | undefined {
  if (caller.agent !== undefined && authors.agents.includes(caller.agent.id)) return 'agent';
  if (caller.session !== undefined && authors.sessions.includes(caller.session)) return 'session';
  return undefined;
}

/**
 * The one self-review check ("not your own review"), for every agent path that approves, resolves or commits what
 * someone made: works (work_review approve/reject/commit, and the approval a commit relies on) and holds
 * (approval_resolve).
 *
 * - A caller with an agent identity is refused when that agent is one of the authors, whatever session it uses now
 *   or used then, and also when its session is one of the authors.
 * - A caller with the window's token (no agent identity) keeps the rules it had before: WINDOW_TOKEN_RULES.
 *
 * Refusal: PERMISSION_DENIED with `details.reason: "self_review"` and `details.by`: "agent" or "session" (or
 * "no_identity" for the last case).
 */
export function assertNotOwn(caller: Caller, authors: Authors, what: Reviewed): void {
  if (caller.agent === undefined && WINDOW_TOKEN_RULES[what.action] === 'none') return;
  const own = ownership(caller, authors);
  const anonymous = own === undefined && caller.agent === undefined && caller.session === undefined;
  if (own === undefined && !anonymous) return;
  const idField = what.kind === 'work' ? 'work_id' : 'approval_id';
  const thing = what.kind === 'work' ? `work ${what.id}` : `hold ${what.id}`;
  const message = anonymous
    ? `A ${what.action} of ${thing} needs a caller that can be told apart from its authors: connect with an agent credential ("CodeSpace: Connect an Agent…") or use an MCP session.`
    : own === 'agent'
      ? `Agent "${(caller.agent as AgentRef).name}" opened, edited or requested ${thing}, so it cannot ${what.action} it, from any session.`
      : `This session opened, edited or requested ${thing}, so it cannot ${what.action} it.`;
  throw new ToolError('PERMISSION_DENIED', message, {
    hint: 'Another agent (connected with its own credential), or the developer in the editor, does this.',
    details: { reason: 'self_review', by: anonymous ? 'no_identity' : (own as string), [idField]: what.id, ...(caller.agent !== undefined ? { agent: caller.agent.name } : {}) },
  });
}

/** How a caller is named in records (`by` of a review): `agent:<id>`, else `session:<id>`. */
export function callerLabel(caller: Caller): string {
  if (caller.agent !== undefined) return `agent:${caller.agent.id}`;
  return `session:${caller.session ?? 'none'}`;
}

/** The caller fields a record keeps: `session`, `agent_id` and `agent` (the name), each only when known. */
export function callerFields(caller: Caller): { session?: string; agent_id?: string; agent?: string } {
  return {
    ...(caller.session !== undefined ? { session: caller.session } : {}),
    ...(caller.agent !== undefined ? { agent_id: caller.agent.id, agent: caller.agent.name } : {}),
  };
}

/** Most characters of an agent's name. */
export const MAX_AGENT_NAME_CHARS = 60;

/**
 * An agent's id from its name: trimmed, lower case, runs of anything but `[a-z0-9._-]` as one `-`, no `-` at either
 * end. Returns an error message for a name that gives no id or is too long.
 */
export function agentIdOf(name: string): { id: string } | { error: string } {
  const trimmed = name.trim();
  if (trimmed.length === 0) return { error: 'An agent needs a name (for example "codex" or "claude-code").' };
  if (trimmed.length > MAX_AGENT_NAME_CHARS) return { error: `An agent's name has at most ${MAX_AGENT_NAME_CHARS} characters.` };
  // eslint-disable-next-line no-control-regex -- control characters are what is refused here
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) return { error: 'An agent\'s name cannot contain control characters.' };
  const id = trimmed.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  if (id === '' || id === '.' || id === '..') return { error: `The name ${JSON.stringify(trimmed)} has no letters or digits to make an id from.` };
  return { id };
}
