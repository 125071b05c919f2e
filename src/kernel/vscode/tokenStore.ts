import { randomBytes } from 'node:crypto';
import type * as vscode from 'vscode';
import { type ExpectedSecret, secretDigest } from '../../base/expectedSecret';
import { Emitter } from '../../base/emitter';

const KEY = 'codespace.mcpToken';
/** What SecretStorage holds counts as a token only when it is this long (a rotation writes 43 characters). */
const MIN_TOKEN_CHARS = 32;

function isToken(stored: string | undefined): stored is string {
  return stored !== undefined && stored.length >= MIN_TOKEN_CHARS;
}
/** The /inbox token's SecretStorage key: a different secret from the /mcp token. */
export const INBOX_TOKEN_KEY = 'codespace.inboxToken';

/**
 * Where a token's verifier is kept: the extension's global state (a Memento). Its values are there synchronously
 * when the extension activates, where SecretStorage answers only after a round trip to the system keychain.
 */
export type VerifierStore = Pick<vscode.Memento, 'get' | 'update'>;

/** The verifier's key in the global state: the token's SecretStorage key with this suffix. */
export const VERIFIER_SUFFIX = '.sha256';

/**
 * A bearer token: 256 random bits, kept only in SecretStorage and in memory. One store per key (/mcp, /inbox).
 *
 * With a `verifiers` store, the token's SHA-256 (hex) is kept there too, never the token. Until `load()` has the
 * token, `expected()` gives that verifier, so the HTTP endpoint checks agents' tokens from the moment it listens
 * instead of waiting for the keychain. A digest of 256 random bits gives nothing that opens the endpoint. Every
 * rotation writes the new verifier before it returns, so a rotated-away token is refused by the next window too.
 *
 * A rotation in another window of the profile reaches this one through SecretStorage's change event: the new token
 * replaces the old one here at once, and the listeners hear of it with the token it replaced.
 */
export class TokenStore implements vscode.Disposable {
  private current: string | undefined;
  /** Every listener hears of the new token even if one throws: the failure is reported (onListenerError), not thrown. */
  private readonly changed: Emitter<{ token: string; previous: string | undefined }>;
  /** The token this store is writing (rotate), so that the change event of its own write is not taken for another's. */
  private storing: string | undefined;
  private readonly watching: vscode.Disposable;
  private loading: Promise<string> | undefined;
  /** The verifier read at construction, while the token is not loaded yet. */
  private readonly stored: Buffer | undefined;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly onListenerError: (err: unknown) => void = () => undefined,
    private readonly key: string = KEY,
    private readonly verifiers?: VerifierStore,
  ) {
    this.changed = new Emitter(onListenerError);
    const hex = verifiers?.get<unknown>(key + VERIFIER_SUFFIX);
    this.stored = typeof hex === 'string' && /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
    this.watching = secrets.onDidChange((e) => {
      if (e.key === this.key) this.changedElsewhere().then(undefined, this.onListenerError);
    });
  }

  dispose(): void {
    this.watching.dispose();
    this.changed.dispose();
  }

  /** The secret changed in SecretStorage: another window rotated it (or this one, which is then nothing new). */
  private async changedElsewhere(): Promise<void> {
    const now = await this.secrets.get(this.key);
    if (!isToken(now) || now === this.current || now === this.storing) return;
    const previous = this.current;
    this.current = now;
    this.fire(now, previous);
  }

  /**
   * Loads the stored token, creating one on first use. Listeners hear of it when it is not the token `get()`
   * gave before (which is none, on the first load).
   */
  load(): Promise<string> {
    this.loading ??= this.read();
    return this.loading;
  }

  /** The token: at once when it is loaded; while `load()` runs, once it is done (the commands that hand it out). */
  async loaded(): Promise<string | undefined> {
    if (this.current !== undefined || !this.loading) return this.current;
    return this.loading.catch(() => undefined);
  }

  private async read(): Promise<string> {
    const stored = await this.secrets.get(this.key);
    if (isToken(stored)) {
      const before = this.current;
      // A rotation heard meanwhile (changedElsewhere) is newer than what this read returned.
      if (before !== undefined) return before;
      this.current = stored;
      const digest = secretDigest(stored);
      // Kept for the next activation; not awaited, since the token is known now (a failure is reported).
      if (this.verifiers && !(this.stored?.equals(digest) ?? false)) this.verifiers.update(this.key + VERIFIER_SUFFIX, digest.toString('hex')).then(undefined, this.onListenerError);
      this.fire(stored, undefined);
    } else {
      await this.rotate();
    }
    return this.current as string;
  }

  get(): string | undefined {
    return this.current;
  }

  /** What an incoming token is checked against: the token once loaded, before that its stored verifier (if any). */
  expected(): ExpectedSecret | undefined {
    if (this.current !== undefined) return this.current;
    return this.stored ? { sha256: this.stored } : undefined;
  }

  async rotate(): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const previous = this.current;
    this.storing = token;
    try {
      await this.secrets.store(this.key, token);
    } finally {
      this.storing = undefined;
    }
    this.current = token;
    try {
      await this.verifiers?.update(this.key + VERIFIER_SUFFIX, secretDigest(token).toString('hex'));
    } catch (err) {
      // The token is rotated either way; the listeners must still hear of it. Reported, not thrown.
      this.onListenerError(err);
    }
    this.fire(token, previous);
    return token;
  }

  /** Hears of every new token: loaded (`previous` undefined), rotated here, or rotated in another window. */
  onDidChange(listener: (token: string, previous: string | undefined) => void): vscode.Disposable {
    return this.changed.on((e) => listener(e.token, e.previous));
  }

  /** The rotation goes on whatever a listener does (the caller still has to close the sessions of the old token). */
  private fire(token: string, previous: string | undefined): void {
    this.changed.emit({ token, previous });
  }
}
