import type { IncomingMessage } from 'node:http';
import { isJsonContentType } from '../base/node/httpRequest';

/** What reading a request's JSON body gave. */
export type JsonBody =
  /** No body, or a Content-Type that is not JSON: nothing was read (express.json leaves `req.body` undefined). */
  | { readonly kind: 'none' }
  | { readonly kind: 'json'; readonly value: unknown }
  /**
   * Longer than the limit (by Content-Length, or once that many bytes arrived). What comes after is read and dropped
   * before this is known, as express.json() does: an answer sent while the client still sends would meet it as a
   * broken connection (EPIPE) instead of a 413.
   */
  | { readonly kind: 'too-large' }
  /** Not JSON, or JSON that is neither an object nor an array. */
  | { readonly kind: 'invalid' }
  /** The client went away before the body ended. */
  | { readonly kind: 'aborted' };

/** The charset parameter of a Content-Type header, lower-cased. */
function charsetOf(req: IncomingMessage): string | undefined {
  let charset: string | undefined;
  for (const p of (req.headers['content-type'] ?? '').split(';').slice(1)) {
    const eq = p.indexOf('=');
    if (eq >= 0 && p.slice(0, eq).trim().toLowerCase() === 'charset') charset = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return charset;
}

/**
 * Whether `readJsonBody` reads this request's body exactly as express.json() (body-parser) would: no
 * Content-Encoding to inflate and no charset but UTF-8. The HTTP host hands any other request to express.
 */
export function plainBody(req: IncomingMessage): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return false;
  const charset = charsetOf(req);
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/**
 * Reads a JSON body as express.json({ strict: true }) does for UTF-8: only for Content-Type application/json and a
 * request that has a body (Content-Length or Transfer-Encoding); an empty body is `{}`; the first character that is
 * no white space must open an object or an array; a leading byte order mark is dropped. At most `limit` bytes are
 * read. Without express's routing, type and charset modules around it, which cost more per request than the rest of
 * a small call's HTTP handling (`npm run bench:editor read`, docs/BENCHMARKS.md).
 */
export function readJsonBody(req: IncomingMessage, limit: number): Promise<JsonBody> {
  if (!isJsonContentType(req.headers['content-type'])) return Promise.resolve({ kind: 'none' });
  const declared = req.headers['content-length'];
  if (declared === undefined && req.headers['transfer-encoding'] === undefined) return Promise.resolve({ kind: 'none' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    /** Past the limit: the bytes are dropped and the answer waits for the end of the body. */
    let tooLarge = declared !== undefined && Number(declared) > limit;
    const settle = (result: JsonBody) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('aborted', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (tooLarge) return;
      length += chunk.length;
      if (length > limit) {
        tooLarge = true;
        chunks.length = 0;
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle(tooLarge ? { kind: 'too-large' } : parse(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length)));
    const onGone = () => settle({ kind: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('aborted', onGone);
  });
}

const decoder = new TextDecoder('utf-8');

function parse(bytes: Buffer): JsonBody {
  const text = decoder.decode(bytes);
  if (text.length === 0) return { kind: 'json', value: {} };
  const first = /^[ \t\n\r]*([^ \t\n\r])/.exec(text)?.[1];
  if (first !== '{' && first !== '[') return { kind: 'invalid' };
  try {
    return { kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'invalid' };
  }
}
