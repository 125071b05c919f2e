import * as vscode from 'vscode';
import type { AgentConnection, BridgeCommand, McpJsonTarget } from '../common/connection';
import { agentConnections, mergeMcpJson } from '../common/connection';
import type { ServerControl } from '../../../kernel/serverControl';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { endpointUrl } from '../../../kernel/serverControl';
import type { OutputLogger } from '../../../kernel/vscode/log';
import type { TokenStore } from '../../../kernel/vscode/tokenStore';
import type { AgentCredentials } from './agentCredentials';
import { agentIdOf } from '../../../kernel/identity';
import { describeError } from '../../../base/describeError';

/** What the command did; returned for tests and scripts (never the token). */
export interface ConnectAgentResult {
  readonly id: AgentConnection['id'];
  readonly copied: boolean;
  /** Absolute path of the project file written, when one was. */
  readonly wrote?: string;
  /** The agent the copied configuration connects as (its own credential is in what was copied, never here). */
  readonly agent?: { readonly id: string; readonly name: string };
}

/** Lets a test or a keybinding skip the pickers: which entry, and whether to write its project file (and where). */
export interface ConnectAgentArgs {
  readonly id?: AgentConnection['id'];
  readonly write?: boolean;
  /** Workspace folder (its fsPath) to write into; default the first folder. */
  readonly folder?: string;
  /** The agent's name (skips the name box); its credential is issued under it. */
  readonly name?: string;
}

export interface ConnectAgentDeps {
  readonly server: ServerControl;
  readonly tokens: TokenStore;
  readonly log: OutputLogger;
  readonly serverName: string;
  readonly bridge: BridgeCommand;
  /** Issues each agent's own credential (absent: the configuration uses the window's token, as before). */
  readonly credentials?: AgentCredentials;
}

/** The name an agent is offered under, per entry (the developer can type another). */
const DEFAULT_NAMES: Record<AgentConnection['id'], string> = {
  codex: 'codex',
  'codex-http': 'codex',
  claude: 'claude-code',
  'claude-http': 'claude-code',
  vscode: 'vscode-agent',
  cursor: 'cursor',
  gemini: 'gemini',
  antigravity: 'antigravity',
  http: 'agent',
  stdio: 'agent',
};

/** The agent's name: given, or asked for (undefined: the developer cancelled). */
async function agentName(connection: AgentConnection, args: ConnectAgentArgs | undefined, credentials: AgentCredentials): Promise<string | undefined> {
  if (args?.name !== undefined) return args.name;
  // Scripted (an entry named, no name): the entry's usual agent name, no box.
  if (args?.id !== undefined) return DEFAULT_NAMES[connection.id];
  const taken = new Set(credentials.list().map((r) => r.id));
  return vscode.window.showInputBox({
    title: `CodeSpace: Connect ${connection.label}`,
    prompt: 'The agent\'s name: it gets a credential of its own, and the panel shows what it does under this name. A name that has a credential gets a new one (the old one stops working).',
    value: DEFAULT_NAMES[connection.id],
    validateInput: (v) => {
      const made = agentIdOf(v);
      if ('error' in made) return made.error;
      return taken.has(made.id) ? { message: `"${made.id}" has a credential already: it is replaced.`, severity: vscode.InputBoxValidationSeverity.Warning } : undefined;
    },
  });
}

type Item = vscode.QuickPickItem & { readonly connection: AgentConnection; readonly write: boolean };

async function writeProjectFile(target: McpJsonTarget, folder: vscode.WorkspaceFolder, deps: ConnectAgentDeps): Promise<string> {
  const uri = vscode.Uri.joinPath(folder.uri, ...target.split('/'));
  let existing: string | undefined;
  try {
    existing = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch (err) {
    if (!(err instanceof vscode.FileSystemError && err.code === 'FileNotFound')) throw err;
  }
  const merged = mergeMcpJson(existing, target, deps.serverName, deps.bridge);
  if (!merged.ok) throw new Error(merged.reason);
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(merged.text));
  return uri.fsPath;
}

async function pickFolder(args: ConnectAgentArgs | undefined): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (args?.folder !== undefined) return folders.find((f) => f.uri.fsPath === args.folder);
  if (folders.length <= 1 || args?.id !== undefined) return folders[0];
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which folder gets the file?' });
}

/**
 * "CodeSpace: Connect an Agent…": picks an agent and copies the exact command or configuration for it, the stdio
 * bridge first (no port or token in any file); for agents that read a project file, it can write that file
 * (merged with what is there, never with the token inline).
 */
export function registerConnectAgent(deps: ConnectAgentDeps): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.connectAgent, async (args?: ConnectAgentArgs): Promise<ConnectAgentResult | undefined> => {
    const url = endpointUrl(deps.server);
    const token = await deps.tokens.loaded();
    if (!url || !token) {
      void vscode.window.showWarningMessage('CodeSpace: the MCP endpoint is not running; restart it first.');
      return undefined;
    }
    const connections = agentConnections({ url, token, serverName: deps.serverName, bridge: deps.bridge });
    let item: Item | undefined;
    if (args?.id !== undefined) {
      const connection = connections.find((c) => c.id === args.id);
      if (!connection) throw new Error(`unknown agent ${JSON.stringify(args.id)}`);
      item = { label: connection.label, connection, write: args.write === true };
    } else {
      const items: Item[] = [];
      for (const c of connections) {
        items.push({ label: c.label, detail: c.detail, connection: c, write: false });
        if (c.projectFile && (vscode.workspace.workspaceFolders?.length ?? 0) > 0) {
          items.push({ label: `${c.label}: write ${c.projectFile}`, detail: `Adds the "${deps.serverName}" server (the bridge, no token) to the project's ${c.projectFile}.`, connection: c, write: true });
        }
      }
      item = await vscode.window.showQuickPick(items, { title: 'CodeSpace: Connect an Agent', placeHolder: 'Copies the command or configuration for this window', matchOnDetail: true });
    }
    if (!item) return undefined;
    let { connection } = item;
    if (item.write && connection.projectFile) {
      const folder = await pickFolder(args);
      if (!folder) return undefined;
      try {
        const wrote = await writeProjectFile(connection.projectFile, folder, deps);
        deps.log.info(`[connect] wrote the ${deps.serverName} server into ${wrote}`);
        void vscode.window.showInformationMessage(`CodeSpace: added "${deps.serverName}" to ${wrote}.`);
        return { id: connection.id, copied: false, wrote };
      } catch (err) {
        const message = describeError(err);
        await vscode.env.clipboard.writeText(connection.text);
        void vscode.window.showErrorMessage(`CodeSpace: ${message}`);
        return { id: connection.id, copied: true };
      }
    }
    // What is copied connects as an agent of its own: its credential, issued now, is in the text.
    let agent: { id: string; name: string } | undefined;
    if (deps.credentials) {
      const name = await agentName(connection, args, deps.credentials);
      if (name === undefined) return undefined;
      const issued = await deps.credentials.issue(name);
      agent = issued.agent;
      const again = agentConnections({ url, token, serverName: deps.serverName, bridge: deps.bridge, agentCredential: issued.credential }).find((c) => c.id === connection.id);
      if (again) connection = again;
      deps.log.info(`[connect] agent "${agent.name}" ${issued.replaced ? 'has a new credential (the old one no longer works)' : 'has a credential'}`);
    }
    await vscode.env.clipboard.writeText(connection.text);
    deps.log.info(`[connect] ${connection.label} configuration copied`);
    const warn = agent !== undefined ? ` It contains the credential of agent "${agent.name}": paste it only into that agent's configuration.` : connection.id === 'http' ? ' It contains the token: paste it only into your client.' : '';
    void vscode.window.showInformationMessage(`CodeSpace: ${connection.label} configuration copied.${warn}`);
    return { id: connection.id, copied: true, ...(agent !== undefined ? { agent } : {}) };
  });
}
