import * as vscode from 'vscode';
import type { AgentDirectory, AgentEntry } from './agentDirectory';
import { COMMANDS } from '../../../kernel/vscode/commandIds';

/** One line about an agent: connected or not, sessions, last activity. */
export function describeAgent(a: AgentEntry): string {
  if (a.connected_at === undefined) return `not connected to this window since it started · credential issued ${a.issued_at}`;
  return `${a.sessions} session${a.sessions === 1 ? '' : 's'} · connected ${a.connected_at} · last activity ${a.last_activity ?? a.connected_at}`;
}

type AgentItem = vscode.QuickPickItem & { readonly agent: AgentEntry };

async function pickAgent(directory: AgentDirectory, title: string): Promise<AgentEntry | undefined> {
  const agents = directory.list();
  if (agents.length === 0) {
    void vscode.window.showInformationMessage('CodeSpace: no agent has a credential. "CodeSpace: Connect an Agent…" issues one.');
    return undefined;
  }
  const items: AgentItem[] = agents.map((a) => ({ label: a.name, description: a.id !== a.name ? a.id : '', detail: describeAgent(a), agent: a }));
  return (await vscode.window.showQuickPick(items, { title, matchOnDetail: true }))?.agent;
}

/**
 * "CodeSpace: List Connected Agents" (returns the list, for tests and scripts; never a credential) and
 * "CodeSpace: Revoke Agent…" (`{ id }` skips the picker and the confirmation).
 */
export function registerAgentCommands(directory: AgentDirectory): vscode.Disposable[] {
  const revoke = async (id: string, confirm: boolean): Promise<{ revoked: string; closed_sessions: number } | undefined> => {
    if (confirm) {
      const answer = await vscode.window.showWarningMessage(`Revoke agent "${id}"? Its sessions close now and its credential stops working.`, { modal: true }, 'Revoke');
      if (answer !== 'Revoke') return undefined;
    }
    const { agent, closed } = await directory.revoke(id);
    void vscode.window.showInformationMessage(`CodeSpace: agent "${agent.name}" revoked; ${closed} session(s) closed. Connect it again with "CodeSpace: Connect an Agent…".`);
    return { revoked: agent.id, closed_sessions: closed };
  };
  return [
    vscode.commands.registerCommand(COMMANDS.listAgents, async (args?: { quiet?: boolean }): Promise<AgentEntry[]> => {
      const agents = directory.list();
      if (args?.quiet === true) return agents;
      const picked = await pickAgent(directory, 'CodeSpace: Connected Agents (pick one to revoke it)');
      if (picked) await revoke(picked.id, true);
      return agents;
    }),
    vscode.commands.registerCommand(COMMANDS.revokeAgent, async (args?: { id?: string }) => {
      if (args?.id !== undefined) return revoke(args.id, false);
      const picked = await pickAgent(directory, 'CodeSpace: Revoke Agent');
      return picked ? revoke(picked.id, true) : undefined;
    }),
  ];
}
