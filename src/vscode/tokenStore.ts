import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';

const KEY = 'codespace.mcpToken';
/** The /inbox token's SecretStorage key: a different secret from the /mcp token. */
export const INBOX_TOKEN_KEY = 'codespace.inboxToken';

/** A bearer token: 256 random bits, kept only in SecretStorage and in memory. One store per key (/mcp, /inbox). */
export class TokenStore {
  private current: string | undefined;
  private readonly listeners = new Set<(token: string) => void>();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly onListenerError: (err: unknown) => void = () => undefined,
    private readonly key: string = KEY,
  ) {}

  /** Loads the stored token, creating one on first use. */
  async load(): Promise<string> {
    const stored = await this.secrets.get(this.key);
    if (stored && stored.length >= 32) {
      this.current = stored;
    } else {
      await this.rotate();
    }
    return this.current as string;
  }

  get(): string | undefined {
    return this.current;
  }

  async rotate(): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.secrets.store(this.key, token);
    this.current = token;
    // Every listener hears of the new token even if one throws, and the rotation goes on (the caller still has
    // to close the sessions opened with the old token): the failure is reported, not thrown.
    for (const l of [...this.listeners]) {
      try {
        l(token);
      } catch (err) {
        this.onListenerError(err);
      }
    }
    return token;
  }

  onDidChange(listener: (token: string) => void): vscode.Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
}
