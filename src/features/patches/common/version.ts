import { createHash } from 'node:crypto';

/** The version of a file's content as the contract names it: `sha256:` and the hex digest of the bytes. */
export function contentVersion(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}
