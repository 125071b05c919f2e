import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';

const KEY = 'codespace.mcpToken';

/** The bearer token: 256 random bits, kept only in SecretStorage and in memory. */
export class TokenStore {
  private current: string | undefined;
  private readonly listeners = new Set<(token: string) => void>();

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly onListenerError: (err: unknown) => void = () => undefined,
  ) {}

  /** Loads the stored token, creating one on first use. */
  async load(): Promise<string> {
    const stored = await this.secrets.get(KEY);
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
    await this.secrets.store(KEY, token);
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
