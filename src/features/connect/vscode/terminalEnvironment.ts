import * as vscode from 'vscode';
import { TOKEN_ENV_VAR, URL_ENV_VAR } from '../common/connection';
import type { ServerControl } from '../../../kernel/serverControl';
import { endpointUrl } from '../../../kernel/serverControl';
import { settings } from '../../../kernel/vscode/settings';
import type { TokenStore } from '../../../kernel/vscode/tokenStore';

/**
 * Gives the terminals of this window CODESPACE_MCP_URL and CODESPACE_MCP_TOKEN, so an agent CLI (or the bridge)
 * started in one connects to this window with no configuration. Refreshed when the port or the token changes
 * (VS Code then offers to relaunch open terminals); cleared while the endpoint is down or the setting
 * `codespace.terminal.environment` is off. Not persisted: a reloaded window sets its own values. The processes
 * CodeSpace runs for agents never get them: they are not VS Code terminals (the collection does not apply), and
 * their environment drops every CODESPACE_* variable of the editor (src/features/processes/common/baseEnvironment.ts).
 */
export function registerTerminalEnvironment(collection: vscode.GlobalEnvironmentVariableCollection, server: ServerControl, tokens: TokenStore): vscode.Disposable {
  collection.persistent = false;
  collection.description = 'CodeSpace: lets agent CLIs started here connect to this window (codespace.terminal.environment).';
  const refresh = (): void => {
    const url = endpointUrl(server);
    const token = tokens.get();
    if (!settings.terminalEnvironment() || !url || !token) {
      collection.clear();
      return;
    }
    collection.replace(URL_ENV_VAR, url);
    collection.replace(TOKEN_ENV_VAR, token);
  };
  refresh();
  const subs = [
    server.onDidChangeState(refresh),
    tokens.onDidChange(refresh),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (settings.affects(e, 'terminal.environment')) refresh();
    }),
  ];
  return {
    dispose: () => {
      subs.forEach((s) => s.dispose());
      collection.clear();
    },
  };
}
