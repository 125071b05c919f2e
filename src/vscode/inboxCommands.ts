import * as vscode from 'vscode';
import type { ServerControl } from '../kernel/serverControl';
import { COMMANDS } from '../kernel/vscode/commandIds';
import type { OutputLogger } from '../kernel/vscode/log';
import type { TokenStore } from '../kernel/vscode/tokenStore';

/** The /inbox URL of a running server. */
export function inboxUrl(server: ServerControl): string | undefined {
  return server.state.kind === 'running' ? `http://127.0.0.1:${server.state.port}/inbox` : undefined;
}

/**
 * Copy Inbox Token and Rotate Inbox Token: the /inbox JSON API's own secret (SecretStorage, never the /mcp
 * token). Rotating applies at once: the old token opens nothing from the next request on.
 */
export function registerInboxCommands(deps: { server: ServerControl; tokens: TokenStore; log: OutputLogger }): vscode.Disposable[] {
  const { server, tokens, log } = deps;

  const copyInboxToken = async (): Promise<{ url: string | undefined }> => {
    const token = await tokens.loaded();
    if (!token) return { url: undefined };
    const url = inboxUrl(server);
    await vscode.env.clipboard.writeText(token);
    log.info('[commands] inbox token copied to the clipboard');
    void vscode.window.showInformationMessage(
      `CodeSpace: inbox token copied. Send it as "Authorization: Bearer <token>" to ${url ?? 'the /inbox API (the server is not running)'}.`,
    );
    return { url };
  };

  const rotateInboxToken = async (options?: { confirm?: boolean }): Promise<boolean> => {
    if (options?.confirm !== false) {
      const pick = await vscode.window.showWarningMessage(
        'Rotate the CodeSpace inbox token?',
        { modal: true, detail: 'Clients of the /inbox API must use the new token. Agents on /mcp are not affected.' },
        'Rotate',
      );
      if (pick !== 'Rotate') return false;
    }
    const token = await tokens.rotate();
    log.addSecret(token);
    log.info('[commands] inbox token rotated');
    void vscode.window.showInformationMessage('CodeSpace: inbox token rotated.', 'Copy Inbox Token').then((pick) => {
      if (pick) void vscode.commands.executeCommand(COMMANDS.copyInboxToken);
    });
    return true;
  };

  return [
    vscode.commands.registerCommand(COMMANDS.copyInboxToken, copyInboxToken),
    vscode.commands.registerCommand(COMMANDS.rotateInboxToken, rotateInboxToken),
  ];
}
