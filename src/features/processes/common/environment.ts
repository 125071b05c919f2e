import type { Disposable } from '../../../base/disposable';

/** Variables of ours: never passed to a child, whatever the operator's settings say. */
const RESERVED_PREFIX = /^CODESPACE_/i;

/** Secrets shorter than this are only matched exactly; longer ones also inside a larger value. */
const MIN_SUBSTRING_SECRET = 8;

/**
 * Values (tokens) that must never reach a child process. Each registration is removed by disposing it,
 * so a rotated token can be dropped; a value registered twice stays until both are disposed.
 */
export class SecretSet {
  private readonly counts = new Map<string, number>();

  add(value: string): Disposable {
    if (value === '') return { dispose: () => undefined };
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
    let done = false;
    return {
      dispose: () => {
        if (done) return;
        done = true;
        const n = (this.counts.get(value) ?? 1) - 1;
        if (n <= 0) this.counts.delete(value);
        else this.counts.set(value, n);
      },
    };
  }

  /** The registered secrets. */
  values(): IterableIterator<string> {
    return this.counts.keys();
  }

  /** True when `value` is a secret or, for secrets of 8+ characters, contains one. */
  leaks(value: string): boolean {
    for (const secret of this.counts.keys()) {
      if (value === secret) return true;
      if (secret.length >= MIN_SUBSTRING_SECRET && value.includes(secret)) return true;
    }
    return false;
  }
}

export interface ScrubbedEnvironment {
  readonly env: Record<string, string>;
  /** Names of the variables dropped (for the log; never their values). */
  readonly removed: string[];
}

/**
 * The environment a child gets: the caller's, without any `CODESPACE_*` variable, without any variable
 * whose value is (or, for long secrets, contains) a registered secret, and without names or values that the
 * OS cannot carry (NUL bytes, `=` in a name).
 */
export function scrubEnvironment(env: Readonly<Record<string, string | undefined>>, secrets: SecretSet): ScrubbedEnvironment {
  const out: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const invalid = name === '' || name.includes('=') || name.includes('\0') || value.includes('\0');
    if (invalid || RESERVED_PREFIX.test(name) || secrets.leaks(value) || secrets.leaks(name)) {
      removed.push(secrets.leaks(name) ? '(masked)' : name);
      continue;
    }
    out[name] = value;
  }
  return { env: out, removed };
}
