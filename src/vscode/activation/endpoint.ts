import * as vscode from 'vscode';
import type { Disposable } from '../../base/disposable';
import type { AssembledServices } from '../../app/assembleServices';
import { McpHttpHost } from '../../mcp/httpHost';
import { SERVER_NAME, bothEras } from '../../mcp/toolServer';
import { discoveryDir } from '../../features/connect/node';
import { WindowPublisher } from '../../features/connect/node';
import { installBridgeLauncher } from '../../features/connect/node';
import { registerCommands } from '../commands';
import { registerAgentCommands } from '../../features/connect/vscode';
import { registerConnectAgent } from '../../features/connect/vscode';
import { registerPortAttributes } from '../../features/connect/vscode';
import { PortMemory } from '../../features/connect/vscode';
import { registerTerminalEnvironment } from '../../features/connect/vscode';
import { registerInboxCommands } from '../inboxCommands';
import type { OutputLogger } from '../../kernel/vscode/log';
import { registerMcpDefinitionProvider } from '../mcpDefinitionProvider';
import { settings } from '../../kernel/vscode/settings';
import { ServerStatusBar } from '../statusBar';
import type { Credentials } from './credentials';
import { reactToTokenChanges } from './credentials';
import { reactToSettings } from './settingsWiring';
import { ownFolders } from './windowContinuity';
import { inboxRoute } from '../../features/works/node';

/** The MCP endpoint and what connects agents to it. */
export interface Endpoint {
  readonly host: McpHttpHost;
  readonly ports: PortMemory;
  readonly discovery: WindowPublisher;
}

/**
 * Builds the endpoint (not started) on the tokens' verifiers and the agents' credentials, and what connects agents
 * to it: the discovery record (for the stdio bridge), the terminals' environment, a stable port, the commands, the
 * status bar and VS Code's own MCP client. Everything it registers goes to `owned`.
 */
export function buildEndpoint(context: vscode.ExtensionContext, core: AssembledServices, credentials: Credentials, log: OutputLogger, owned: Disposable[]): Endpoint {
  const version = (context.extension.packageJSON as { version: string }).version;
  const { tokens, inboxTokens, agentCredentials } = credentials;
  const host = new McpHttpHost({
    ...bothEras({ ...core.serving, version }),
    token: () => tokens.expected(),
    agents: agentCredentials,
    logger: log,
    routes: [inboxRoute({ steering: core.steering, token: () => inboxTokens.expected(), logger: log })],
  });
  credentials.agentDirectory.attach(host);
  const ports = new PortMemory(context.workspaceState, host);
  const discovery = new WindowPublisher({ server: host, dir: discoveryDir(), folders: ownFolders, token: () => tokens.get(), publishToken: settings.discoveryTokenFile, version, logger: log });
  const bridge = installBridgeLauncher({
    installed: context.extensionMode === vscode.ExtensionMode.Production,
    extensionRoot: context.extensionUri.fsPath,
    extensionId: context.extension.id,
    log: (line) => log.info(line),
  });
  owned.push(
    host,
    discovery,
    ports,
    ...reactToTokenChanges(tokens, host, discovery, log),
    vscode.workspace.onDidChangeWorkspaceFolders(() => discovery.refresh()),
    registerTerminalEnvironment(context.environmentVariableCollection, host, tokens),
    registerPortAttributes(host, (line) => log.info(line)),
    registerConnectAgent({ server: host, tokens, log, serverName: SERVER_NAME, bridge, credentials: agentCredentials }),
    ...registerAgentCommands(credentials.agentDirectory),
    new ServerStatusBar(host),
    ...registerCommands({ server: host, tokens, log, serverName: SERVER_NAME, preferredPort: () => ports.preferredPort() }),
    ...registerInboxCommands({ server: host, tokens: inboxTokens, log }),
    registerMcpDefinitionProvider(host, tokens, version),
    reactToSettings(core, discovery, log),
  );
  return { host, ports, discovery };
}
