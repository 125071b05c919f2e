import * as vscode from 'vscode';
import type { ServerControl } from '../kernel/serverControl';
import { endpointUrl } from '../kernel/serverControl';
import type { TokenStore } from '../kernel/vscode/tokenStore';

/** The parts of VS Code's MCP API (finalised after 1.100) that we use; feature-detected at run time. */
interface McpApi {
  registerMcpServerDefinitionProvider(id: string, provider: {
    onDidChangeMcpServerDefinitions: vscode.Event<void>;
    provideMcpServerDefinitions(): unknown[];
  }): vscode.Disposable;
}
type HttpDefinitionCtor = new (label: string, uri: vscode.Uri, headers?: Record<string, string>, version?: string) => unknown;

export const PROVIDER_ID = 'codespace.mcp';

/**
 * Offers the endpoint to VS Code's own agent (chat in agent mode), with the token in a header, so a developer
 * connects it without copying anything. Does nothing on a VS Code without the API.
 */
export function registerMcpDefinitionProvider(server: ServerControl, tokens: TokenStore, version: string): vscode.Disposable {
  const lm = (vscode as unknown as { lm?: Partial<McpApi> }).lm;
  const HttpDefinition = (vscode as unknown as { McpHttpServerDefinition?: HttpDefinitionCtor }).McpHttpServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof HttpDefinition !== 'function') {
    return { dispose() {} };
  }
  const changed = new vscode.EventEmitter<void>();
  const subs: vscode.Disposable[] = [
    changed,
    server.onDidChangeState(() => changed.fire()),
    tokens.onDidChange(() => changed.fire()),
    lm.registerMcpServerDefinitionProvider(PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const url = endpointUrl(server);
        const token = tokens.get();
        if (!url || !token) return [];
        return [new HttpDefinition('CodeSpace (this window)', vscode.Uri.parse(url), { Authorization: `Bearer ${token}` }, version)];
      },
    }),
  ];
  return { dispose: () => subs.forEach((s) => s.dispose()) };
}
