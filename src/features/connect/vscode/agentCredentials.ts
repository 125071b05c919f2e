import { randomBytes, timingSafeEqual } from 'node:crypto';
import type * as vscode from 'vscode';
import { secretDigest } from '../../../base/expectedSecret';
import type { AgentRef, AgentVerifier } from '../../../kernel/identity';
import { agentIdOf } from '../../../kernel/identity';
import type { VerifierStore } from '../../../kernel/vscode/tokenStore';
import { Emitter } from '../../../base/emitter';
import { SerialQueue } from '../../../base/serialQueue';

/** The global-state key of the agents' list: id, name, when issued, and each credential's SHA-256 (never the credential). */
export const AGENTS_KEY = 'codespace.agents';
/** SecretStorage keeps each agent's credential under this prefix and its id. */
export const AGENT_SECRET_PREFIX = 'codespace.agent.';
/** Every agent credential starts with this (tells it apart from the window's token in logs and redaction). */
export const AGENT_CREDENTIAL_PREFIX = 'csa_';

/** One agent as the global state keeps it. */
export interface AgentRecord {
  readonly id: string;
  readonly name: string;
  readonly issued_at: string;
  /** SHA-256 (hex) of its current credential. */
  readonly sha256: string;
}

function isRecord(v: unknown): v is AgentRecord {
  const r = v as Partial<AgentRecord> | null;
  return typeof r === 'object' && r !== null && typeof r.id === 'string' && typeof r.name === 'string' && typeof r.issued_at === 'string' && typeof r.sha256 === 'string' && /^[0-9a-f]{64}$/.test(r.sha256);
}

interface ParsedAgents {
  readonly raw: unknown;
  readonly records: AgentRecord[];
  readonly digests: { readonly record: AgentRecord; readonly digest: Buffer }[];
}

/** Raised for a name that gives no agent id, or an unknown agent: the message says which. */
export class AgentCredentialError extends Error {}

/**
 * The agents' own credentials ("CodeSpace: Connect an Agent…" issues one per agent; "CodeSpace: Revoke Agent…"
 * takes it back). Each credential is 256 random bits, kept in SecretStorage like the window's token; the extension's
 * global state keeps only the list of agents with each credential's SHA-256, and that is all `verify` needs: the
 * endpoint checks agent credentials from the moment it listens, without the keychain.
 *
 * The agent's id is its name, normalised (agentIdOf): issuing for a name that has a credential replaces it (the old
 * one stops working at once, and the listeners hear the agent was revoked so its sessions close). The identity
 * stays the same agent, so what it made stays its own.
 */
export class AgentCredentials implements AgentVerifier {
  /** Every listener hears of it even if one throws (reported, not thrown: the revocation stands either way). */
  private readonly revoked: Emitter<AgentRef>;
  private readonly changed: Emitter<void>;
  /** Parsed list, kept until the stored value changes (the Memento hands back the same value until an update). */
  private cache: ParsedAgents | undefined;
  /** One issue or revoke at a time: each rewrites the whole list. */
  private readonly serial = new SerialQueue();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly state: VerifierStore,
    onListenerError: (err: unknown) => void = () => undefined,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.revoked = new Emitter(onListenerError);
    this.changed = new Emitter(onListenerError);
  }

  private parsed(): ParsedAgents {
    const raw = this.state.get<unknown>(AGENTS_KEY);
    if (this.cache !== undefined && this.cache.raw === raw) return this.cache;
    const records = Array.isArray(raw) ? raw.filter(isRecord) : [];
    const parsed: ParsedAgents = { raw, records, digests: records.map((record) => ({ record, digest: Buffer.from(record.sha256, 'hex') })) };
    this.cache = parsed;
    return parsed;
  }

  /** The agents with a credential, in the order they were first issued. */
  list(): readonly AgentRecord[] {
    return this.parsed().records;
  }

  get(id: string): AgentRecord | undefined {
    return this.list().find((r) => r.id === id);
  }

  /** The agent whose credential this is: compared by SHA-256 digest, in constant time per agent. */
  verify(credential: string): AgentRef | undefined {
    if (!credential.startsWith(AGENT_CREDENTIAL_PREFIX)) return undefined;
    const given = secretDigest(credential);
    let found: AgentRecord | undefined;
    for (const { record, digest } of this.parsed().digests) if (digest.length === given.length && timingSafeEqual(digest, given)) found = record;
    return found ? { id: found.id, name: found.name } : undefined;
  }

  private async write(records: readonly AgentRecord[]): Promise<void> {
    await this.state.update(AGENTS_KEY, records.map((r) => ({ ...r })));
    this.cache = undefined;
  }

  /**
   * Issues a credential for the agent named `name` (a new agent, or a new credential for a known one, which
   * replaces the old). Throws AgentCredentialError for a name that gives no id.
   */
  issue(name: string): Promise<{ agent: AgentRef; credential: string; replaced: boolean }> {
    const made = agentIdOf(name);
    if ('error' in made) return Promise.reject(new AgentCredentialError(made.error));
    return this.serial.run(async () => {
      const credential = `${AGENT_CREDENTIAL_PREFIX}${randomBytes(32).toString('base64url')}`;
      const agent: AgentRef = { id: made.id, name: name.trim() };
      const before = this.list();
      const old = before.find((r) => r.id === agent.id);
      const record: AgentRecord = { id: agent.id, name: agent.name, issued_at: this.now().toISOString(), sha256: secretDigest(credential).toString('hex') };
      await this.secrets.store(AGENT_SECRET_PREFIX + agent.id, credential);
      // The verifier last: until it is written the new credential opens nothing, and from then on the old one neither.
      await this.write(old ? before.map((r) => (r.id === agent.id ? record : r)) : [...before, record]);
      if (old) this.revoked.emit({ id: old.id, name: old.name });
      this.changed.emit();
      return { agent, credential, replaced: old !== undefined };
    });
  }

  /**
   * Revokes an agent: its verifier goes first (its credential gets 401 from then on), then its secret; the
   * listeners hear of it (the endpoint closes its sessions). Throws AgentCredentialError for an unknown id.
   */
  revoke(id: string): Promise<AgentRef> {
    return this.serial.run(async () => {
      const before = this.list();
      const record = before.find((r) => r.id === id);
      if (!record) throw new AgentCredentialError(`No agent ${JSON.stringify(id)} has a credential${before.length > 0 ? ` (agents: ${before.map((r) => r.id).join(', ')})` : ''}.`);
      await this.write(before.filter((r) => r.id !== id));
      await this.secrets.delete(AGENT_SECRET_PREFIX + id);
      const agent = { id: record.id, name: record.name };
      this.revoked.emit(agent);
      this.changed.emit();
      return agent;
    });
  }

  /** Hears of every agent whose credential stopped working (revoked, or replaced by a new one). */
  onDidRevoke(listener: (agent: AgentRef) => void): vscode.Disposable {
    return this.revoked.on(listener);
  }

  /** Hears of every change of the list (issued, replaced, revoked). */
  onDidChange(listener: () => void): vscode.Disposable {
    return this.changed.on(listener);
  }

}
