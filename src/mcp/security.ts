import type { IncomingMessage, ServerOptions, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { ExpectedSecret } from '../base/expectedSecret';
import { closeUnreadBody, secretsEqual } from '../base/node/httpRequest';

/** Why a request is turned away before any handler runs: the HTTP status, the JSON-RPC error and extra headers. */
export interface Refusal {
  readonly status: number;
  readonly code: number;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A check every request passes before any handler. The HTTP host runs the same checks on both of its paths (its
 * own /mcp listener and the express app behind it), so a guard can never exist on one and not the other.
 */
export type RequestCheck = (req: IncomingMessage) => Refusal | undefined;

/**
 * Refuses any Host that is not this server's loopback address (DNS rebinding).
 * `port()` is read per request because the port is only known after listening.
 */
export function hostCheck(port: () => number): RequestCheck {
  return (req) => {
    const p = port();
    const host = (req.headers.host ?? '').toLowerCase();
    if (host === `127.0.0.1:${p}` || host === `localhost:${p}` || host === `[::1]:${p}`) return undefined;
    return { status: 403, code: -32000, message: 'Forbidden: this server only answers requests addressed to its loopback address.' };
  };
}

/** Browsers send Origin; agents do not. Any Origin, including "null", is refused: no web page may call us. */
export function originCheck(): RequestCheck {
  return (req) =>
    req.headers.origin !== undefined || req.headers['sec-fetch-site'] === 'cross-site'
      ? { status: 403, code: -32000, message: 'Forbidden: requests from web pages are not accepted.' }
      : undefined;
}

/**
 * Requires `Authorization: Bearer <token>`. The token is read per request (rotation applies at once) and never
 * echoed. Tokens in the query string are not looked at.
 */
export function bearerCheck(token: () => ExpectedSecret | undefined, realm: string): RequestCheck {
  return (req) => {
    const expected = token();
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(req.headers.authorization ?? '');
    if (expected !== undefined && match !== null && secretsEqual(match[1] as string, expected)) return undefined;
    return {
      status: 401,
      code: -32001,
      message: 'Unauthorized: send "Authorization: Bearer <token>". Get the token in VS Code with "CodeSpace: Copy Connection Settings".',
      headers: { 'WWW-Authenticate': `Bearer realm="${realm}"` },
    };
  };
}

/**
 * What every listener of the HTTP server (/mcp and /inbox alike) bounds before a request is authenticated: its
 * headers (the token travels in them) at MAX_HEADER_BYTES, the time to send them at HEADERS_TIMEOUT_MS (a connection
 * that sends nothing is answered 408 and closed then), and its body not at all (`declaredSizeCheck`,
 * `closeUnreadBody`).
 */
export const PRE_AUTH_LIMITS = { maxHeaderBytes: 16 * 1024, headersTimeoutMs: 10_000 } as const;

/** The HTTP server's options that apply PRE_AUTH_LIMITS. */
export function preAuthServerOptions(): ServerOptions {
  return {
    maxHeaderSize: PRE_AUTH_LIMITS.maxHeaderBytes,
    headersTimeout: PRE_AUTH_LIMITS.headersTimeoutMs,
    // How often Node looks for connections past the headers timeout (its default is 30 s).
    connectionsCheckingInterval: 1_000,
  };
}

/**
 * Refuses, before the token is looked at, a body whose Content-Length is over `limit` (the largest any listener takes
 * after authentication): 413 at once, and nothing of the body is read (see `closeUnreadBody`).
 */
export function declaredSizeCheck(limit: number): RequestCheck {
  return (req) => {
    const declared = req.headers['content-length'];
    if (declared === undefined || !(Number(declared) > limit)) return undefined;
    return { status: 413, code: -32600, message: `Request body too large: ${declared} bytes declared, the limit is ${limit}.` };
  };
}

/** A JSON-RPC error with no id, as bytes with their length; `extra` headers first (WWW-Authenticate). */
export function sendRpcError(res: ServerResponse, status: number, code: number, message: string, extra?: Readonly<Record<string, string>>): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), 'utf8');
  if (extra) for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', body.length);
  res.end(body);
}

/** Answers the refusal and returns true, or returns false when every check passes. */
export function refuse(req: IncomingMessage, res: ServerResponse, checks: readonly RequestCheck[]): boolean {
  for (const check of checks) {
    const r = check(req);
    if (r) {
      closeUnreadBody(req, res);
      sendRpcError(res, r.status, r.code, r.message, r.headers);
      return true;
    }
  }
  return false;
}

/** The same check as express middleware. */
export function asMiddleware(check: RequestCheck) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!refuse(req, res, [check])) next();
  };
}
