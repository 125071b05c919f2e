import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** Compares two secrets in time that does not depend on where they differ (nor, via hashing, on length). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Rejects any Host that is not this server's loopback address (DNS rebinding), before any handler runs.
 * `port()` is read per request because the port is only known after listening.
 */
export function hostGuard(port: () => number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const p = port();
    const allowed = [`127.0.0.1:${p}`, `localhost:${p}`, `[::1]:${p}`];
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowed.includes(host)) {
      jsonRpcError(res, 403, -32000, 'Forbidden: this server only answers requests addressed to its loopback address.');
      return;
    }
    next();
  };
}

/** Browsers send Origin; agents do not. Any Origin, including "null", is refused: no web page may call us. */
export function originGuard() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.headers.origin !== undefined || req.headers['sec-fetch-site'] === 'cross-site') {
      jsonRpcError(res, 403, -32000, 'Forbidden: requests from web pages are not accepted.');
      return;
    }
    next();
  };
}

/**
 * Requires `Authorization: Bearer <token>`. The token is read per request (rotation applies at once) and never
 * echoed. Tokens in the query string are not looked at.
 */
export function bearerGuard(token: () => string | undefined, realm: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const expected = token();
    const header = req.headers.authorization ?? '';
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header);
    if (expected === undefined || match === null || !secretsEqual(match[1] as string, expected)) {
      res.setHeader('WWW-Authenticate', `Bearer realm="${realm}"`);
      jsonRpcError(res, 401, -32001, 'Unauthorized: send "Authorization: Bearer <token>". Get the token in VS Code with "CodeSpace: Copy Connection Settings".');
      return;
    }
    next();
  };
}
