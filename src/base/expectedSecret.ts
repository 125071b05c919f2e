import { createHash } from 'node:crypto';

/**
 * What a bearer token is checked against: the token itself, or only its SHA-256 digest (the verifier the extension
 * keeps so that it can check tokens while the token itself is still on its way from the system keychain).
 */
export type ExpectedSecret = string | { readonly sha256: Uint8Array };

/** The SHA-256 of a secret's UTF-8: what a verifier holds, and what a given token is compared by. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}
