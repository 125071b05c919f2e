import type * as vscode from 'vscode';
import type { AgentRef } from '../../../kernel/identity';
import type { AgentCredentials } from './agentCredentials';
import type { Logger } from '../../../base/logger';
import { describeErrorWithStack } from '../../../base/describeError';
import { Emitter } from '../../../base/emitter';

/** One connected (or issued) agent as the panel and the commands show it. */
export interface AgentEntry {
  readonly id: string;
  readonly name: string;
  readonly issued_at: string;
  /** When its first request reached this window (absent: not connected since the window started). */
  readonly connected_at?: string;
  readonly last_activity?: string;
  /** Its open MCP sessions in this window. */
  readonly sessions: number;
}

/** What the endpoint knows of the agents' connections (McpHttpHost). */
export interface AgentConnections {
  agents(): readonly { readonly id: string; readonly connected_at: string; readonly last_activity: string; readonly sessions: number }[];
  onDidChangeAgents(listener: () => void): { dispose(): void };
  /** Closes the agent's sessions at once; returns how many. */
  closeAgent(agentId: string): Promise<number>;
}

/**
 * The agents with a credential (AgentCredentials) joined with what the endpoint saw of them. A revoked or replaced
 * credential closes the agent's sessions here at once; the endpoint is attached once it exists.
 */
export class AgentDirectory implements vscode.Disposable {
  private host: AgentConnections | undefined;
  private readonly changed: Emitter<void>;
  private readonly subs: { dispose(): void }[] = [];

  constructor(
    readonly credentials: AgentCredentials,
    private readonly log: Logger,
  ) {
    this.changed = new Emitter((err) => log.error('[agents] a listener failed', describeErrorWithStack(err)));
    this.subs.push(credentials.onDidChange(() => this.fire()));
    this.subs.push(credentials.onDidRevoke((agent) => void this.closeOut(agent)));
  }

  attach(host: AgentConnections): void {
    this.host = host;
    this.subs.push(host.onDidChangeAgents(() => this.fire()));
  }

  private async closeOut(agent: AgentRef): Promise<number> {
    try {
      const closed = (await this.host?.closeAgent(agent.id)) ?? 0;
      this.log.info(`[agents] "${agent.name}": credential no longer valid, ${closed} session(s) closed`);
      return closed;
    } catch (err) {
      this.log.error(`[agents] closing the sessions of "${agent.name}" failed`, describeErrorWithStack(err));
      return 0;
    }
  }

  list(): AgentEntry[] {
    const seen = new Map((this.host?.agents() ?? []).map((a) => [a.id, a]));
    return this.credentials.list().map((r) => {
      const a = seen.get(r.id);
      return { id: r.id, name: r.name, issued_at: r.issued_at, sessions: a?.sessions ?? 0, ...(a ? { connected_at: a.connected_at, last_activity: a.last_activity } : {}) };
    });
  }

  /** Revokes the agent: 401 for its credential from now on, its sessions closed before this returns. */
  async revoke(id: string): Promise<{ agent: AgentRef; closed: number }> {
    const before = this.host?.agents().find((a) => a.id === id)?.sessions ?? 0;
    const agent = await this.credentials.revoke(id);
    // onDidRevoke started the closing; wait for it so the caller's next look sees no session.
    const closed = (await this.host?.closeAgent(id)) ?? 0;
    return { agent, closed: Math.max(before, closed) };
  }

  onDidChange(listener: () => void): vscode.Disposable {
    return this.changed.on(listener);
  }

  private fire(): void {
    this.changed.emit();
  }

  dispose(): void {
    for (const s of this.subs.splice(0)) s.dispose();
    this.changed.dispose();
  }
}
