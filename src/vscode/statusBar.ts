import * as vscode from 'vscode';
import type { ServerControl, ServerState } from '../kernel/serverControl';
import { COMMANDS } from '../kernel/vscode/commandIds';

/** Shows the endpoint's state and port; a click offers the server actions. */
export class ServerStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly sub: { dispose(): void };

  constructor(server: ServerControl) {
    this.item = vscode.window.createStatusBarItem('codespace.server', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'CodeSpace MCP Server';
    this.item.command = COMMANDS.statusActions;
    this.sub = server.onDidChangeState((s) => this.render(s));
    this.render(server.state);
    this.item.show();
  }

  private render(s: ServerState): void {
    this.item.backgroundColor = undefined;
    switch (s.kind) {
      case 'running':
        this.item.text = `$(plug) CodeSpace :${s.port}`;
        this.item.tooltip = new vscode.MarkdownString(
          `**CodeSpace** MCP endpoint on \`http://127.0.0.1:${s.port}/mcp\`${s.fellBack ? ' (the preferred port was taken)' : ''}.\n\nClick for actions: copy connection settings, rotate the token, restart, show the log.`,
        );
        break;
      case 'starting':
        this.item.text = '$(sync~spin) CodeSpace';
        this.item.tooltip = 'CodeSpace MCP endpoint is starting';
        break;
      case 'stopped':
        this.item.text = '$(debug-disconnect) CodeSpace';
        this.item.tooltip = 'CodeSpace MCP endpoint is stopped. Click to restart.';
        break;
      case 'failed':
        this.item.text = '$(error) CodeSpace';
        this.item.tooltip = `CodeSpace MCP endpoint failed to start: ${s.message}`;
        this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
        break;
    }
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
