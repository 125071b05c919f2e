import * as vscode from 'vscode';
import { connectionText } from '../features/connect';
import type { ServerControl } from '../kernel/serverControl';
import { endpointUrl } from '../kernel/serverControl';
import { COMMANDS } from '../kernel/vscode/commandIds';
import type { OutputLogger } from '../kernel/vscode/log';
import { settings } from '../kernel/vscode/settings';
import type { TokenStore } from '../kernel/vscode/tokenStore';
import { describeError } from '../base/describeError';

export interface CommandDeps {
  readonly server: ServerControl;
  readonly tokens: TokenStore;
  readonly log: OutputLogger;
  readonly serverName: string;
  /** The port Restart Server asks for (default: the setting). */
  readonly preferredPort?: () => number;
}

/** Registers the palette commands. Each is small and returns something a test can check (never the token). */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const { server, tokens, log } = deps;

  const requireRunning = (): string | undefined => {
    const url = endpointUrl(server);
    if (!url) {
      void vscode.window.showWarningMessage('CodeSpace: the MCP endpoint is not running.', 'Restart Server').then((pick) => {
        if (pick) void vscode.commands.executeCommand(COMMANDS.restartServer);
      });
    }
    return url;
  };

  const copyConnectionSettings = async (): Promise<{ url: string } | undefined> => {
    const url = requireRunning();
    const token = await tokens.loaded();
    if (!url || !token) return undefined;
    await vscode.env.clipboard.writeText(connectionText({ url, token, serverName: deps.serverName }));
    log.info('[commands] connection settings copied to the clipboard');
    void vscode.window.showInformationMessage(`CodeSpace: connection settings for ${url} copied. They contain the token: paste them only into your agent's configuration.`);
    return { url };
  };

  const showToken = async (): Promise<void> => {
    const token = await tokens.loaded();
    if (!token) return;
    await vscode.window.showInputBox({
      title: 'CodeSpace token',
      value: token,
      prompt: 'Send it as "Authorization: Bearer <token>". Press Enter or Escape to close.',
      ignoreFocusOut: false,
    });
  };

  const rotateToken = async (options?: { confirm?: boolean }): Promise<boolean> => {
    if (options?.confirm !== false) {
      const pick = await vscode.window.showWarningMessage(
        'Rotate the CodeSpace token?',
        { modal: true, detail: 'Connected agents are disconnected and must use the new token.' },
        'Rotate',
      );
      if (pick !== 'Rotate') return false;
    }
    const token = await tokens.rotate();
    log.addSecret(token);
    await server.closeSessions();
    log.info('[commands] token rotated; open sessions closed');
    void vscode.window.showInformationMessage('CodeSpace: token rotated.', 'Copy Connection Settings').then((pick) => {
      if (pick) void vscode.commands.executeCommand(COMMANDS.copyConnectionSettings);
    });
    return true;
  };

  const restartServer = async (): Promise<{ url: string | undefined }> => {
    try {
      await server.stop();
      await server.start(deps.preferredPort?.() ?? settings.port());
    } catch (err) {
      const message = describeError(err);
      log.error(`[commands] restart failed: ${message}`);
      void vscode.window.showErrorMessage(`CodeSpace: the MCP endpoint could not start: ${message}`);
    }
    return { url: endpointUrl(server) };
  };

  const statusActions = async (): Promise<void> => {
    const items: (vscode.QuickPickItem & { command: string })[] = [
      { label: '$(plug) Connect an Agent…', command: COMMANDS.connectAgent },
      { label: '$(clippy) Copy Connection Settings', description: endpointUrl(server) ?? 'not running', command: COMMANDS.copyConnectionSettings },
      { label: '$(key) Show Token', command: COMMANDS.showToken },
      { label: '$(refresh) Rotate Token', command: COMMANDS.rotateToken },
      { label: '$(debug-restart) Restart Server', command: COMMANDS.restartServer },
      { label: '$(output) Show Log', command: COMMANDS.showLog },
    ];
    const pick = await vscode.window.showQuickPick(items, { title: `CodeSpace (${server.sessionCount} session(s) open)` });
    if (pick) await vscode.commands.executeCommand(pick.command);
  };

  return [
    vscode.commands.registerCommand(COMMANDS.copyConnectionSettings, copyConnectionSettings),
    vscode.commands.registerCommand(COMMANDS.showToken, showToken),
    vscode.commands.registerCommand(COMMANDS.rotateToken, rotateToken),
    vscode.commands.registerCommand(COMMANDS.restartServer, restartServer),
    vscode.commands.registerCommand(COMMANDS.showLog, () => log.channel.show()),
    vscode.commands.registerCommand(COMMANDS.statusActions, statusActions),
  ];
}
