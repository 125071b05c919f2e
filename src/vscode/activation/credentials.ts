import type * as vscode from 'vscode';
import type { Disposable } from '../../base/disposable';
import { describeErrorWithStack } from '../../base/describeError';
import type { McpHttpHost } from '../../mcp/httpHost';
import { AgentCredentials } from '../../features/connect/vscode';
import { AgentDirectory } from '../../features/connect/vscode';
import type { OutputLogger } from '../../kernel/vscode/log';
import { INBOX_TOKEN_KEY, TokenStore } from '../../kernel/vscode/tokenStore';

/** The window's credentials: the /mcp token, the /inbox token, and each connected agent's own. */
export interface Credentials {
  readonly tokens: TokenStore;
  readonly inboxTokens: TokenStore;
  readonly agentCredentials: AgentCredentials;
  readonly agentDirectory: AgentDirectory;
  /** Both tokens, once they are read from the secret storage. */
  readonly loading: Promise<string[]>;
  /** Whether both tokens' verifiers are known (the endpoint can check tokens before the tokens themselves load). */
  verified(): boolean;
}

/**
 * Opens the stores and starts reading the tokens. Each token's verifier (its SHA-256, never the token) is kept in the
 * global state, which is here at once: with it the endpoint checks tokens from the moment it listens, while the
 * tokens themselves are still on their way. The /inbox API has its own token, so the /mcp token never opens /inbox and
 * the reverse. Each is a SecretStorage round trip to the window, the slowest step of activation: both are read at
 * once, while the services and the editor's side are built.
 */
export function openCredentials(context: vscode.ExtensionContext, log: OutputLogger): Credentials {
  const tokens = new TokenStore(context.secrets, (err) => log.error('[token] a token listener failed', describeErrorWithStack(err)), undefined, context.globalState);
  const inboxTokens = new TokenStore(context.secrets, (err) => log.error('[token] an inbox token listener failed', describeErrorWithStack(err)), INBOX_TOKEN_KEY, context.globalState);
  context.subscriptions.push(tokens, inboxTokens);
  // Each connected agent's own credential (Connect an Agent): only their SHA-256 digests in the global state.
  const agentCredentials = new AgentCredentials(context.secrets, context.globalState, (err) => log.error('[agents] a listener failed', describeErrorWithStack(err)));
  const agentDirectory = new AgentDirectory(agentCredentials, log);
  context.subscriptions.push(agentDirectory);
  const loading = Promise.all([tokens.load(), inboxTokens.load()]);
  loading.catch(() => undefined); // awaited by maskTokens, after the editor's side
  const verified = (): boolean => tokens.expected() !== undefined && inboxTokens.expected() !== undefined;
  return { tokens, inboxTokens, agentCredentials, agentDirectory, loading, verified };
}

/**
 * Registers the tokens as secrets of the process supervisor (no child gets them in its environment, no agent reads
 * them in output) and of the log, now and on every change. Older tokens stay masked too; every registration goes to
 * `owned`, released when the extension deactivates. Until this settles, commands and reads of output wait.
 */
export async function maskTokens(credentials: Credentials, supervisor: { addSecret(value: string): Disposable }, log: OutputLogger, owned: Disposable[]): Promise<void> {
  for (const t of await credentials.loading) log.addSecret(t);
  for (const store of [credentials.tokens, credentials.inboxTokens]) {
    owned.push(supervisor.addSecret(store.get() as string));
    owned.push(
      store.onDidChange((t) => {
        log.addSecret(t);
        owned.push(supervisor.addSecret(t));
      }),
    );
  }
}

/**
 * What a new /mcp token changes: the discovery record is written again, and a token that replaced another (rotated
 * here or in another window of the profile) ends the sessions opened with the old one; the first load replaces none.
 */
export function reactToTokenChanges(tokens: TokenStore, host: McpHttpHost, discovery: { refresh(): void }, log: OutputLogger): Disposable[] {
  return [
    tokens.onDidChange(() => discovery.refresh()),
    tokens.onDidChange((_token, previous) => {
      if (previous === undefined) return;
      host.closeSessions().then(
        () => log.info('[token] the token changed: sessions opened with the previous one are closed'),
        (err: unknown) => log.error('[token] closing the sessions of the previous token failed', describeErrorWithStack(err)),
      );
    }),
  ];
}
