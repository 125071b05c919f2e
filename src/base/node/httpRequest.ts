// What an HTTP route needs before it trusts a request, shared by every route the window serves (the MCP endpoint and
// the routes modules add beside it): a constant-time secret comparison, a refusal that reads no more of the body,
// and the one test of a JSON Content-Type.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ExpectedSecret, secretDigest } from '../expectedSecret';

/**
 * Digests of the expected secrets (the /mcp and /inbox tokens): each is the same on every request until it is
 * rotated, so it is hashed once. Kept small: a rotation adds one, and past four the old ones go.
 */
const expectedDigests = new Map<string, Buffer>();

/**
 * Compares a given secret with the expected one in time that does not depend on where they differ (nor, via
 * hashing, on length). Against a verifier, the digests alone decide: equal SHA-256 digests are equal secrets.
 */
export function secretsEqual(given: string, expected: ExpectedSecret): boolean {
  if (typeof expected !== 'string') return expected.sha256.length === 32 && timingSafeEqual(secretDigest(given), expected.sha256);
  let digest = expectedDigests.get(expected);
  if (digest === undefined) {
    if (expectedDigests.size >= 4) expectedDigests.clear();
    digest = secretDigest(expected);
    expectedDigests.set(expected, digest);
  }
  return timingSafeEqual(secretDigest(given), digest) && given.length === expected.length;
}

/** Whether a request declares a body: a Content-Length above 0, or a Transfer-Encoding. */
function declaresBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * A request answered before its body was read (a refusal: a wrong Host or Origin, no token, a declared size over
 * the limit): the answer says `Connection: close` and the connection closes once it is sent, so no more of the body
 * is read than had already arrived. (Node would otherwise read the rest of the body and drop it, however long.)
 * Call it before the answer's headers are written.
 */
export function closeUnreadBody(req: IncomingMessage, res: ServerResponse): void {
  if (declaresBody(req) && !req.complete && !res.headersSent) res.setHeader('Connection', 'close');
}

/** application/json, with or without parameters; never a substring match ("application/jsonx"). */
export function isJsonContentType(value: string | undefined): boolean {
  return (value ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}
