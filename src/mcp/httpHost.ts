import { randomUUID } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Request, Response } from 'express';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node';
import type { McpHttpHandler, McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import type { Disposable } from '../base/disposable';
import { Emitter } from '../base/emitter';
import type { Logger } from '../base/logger';
import type { ServerControl, ServerState as HostState } from '../kernel/serverControl';
import { plainBody, readJsonBody } from './jsonBody';
import { declaredSizeCheck, preAuthServerOptions } from './security';
import { JsonSessionTransport } from './jsonSessionTransport';
import type { RequestCheck } from './security';
import type { ExpectedSecret } from '../base/expectedSecret';
import { asMiddleware, bearerCheck, hostCheck, originCheck, refuse, sendRpcError } from './security';
import type { AgentRef } from '../kernel/identity';
import type { AgentActivity, AgentVerifier } from './agentIdentity';
import { AgentActivityLog, agentOfRequest, agentOrWindowCheck, withRequestAgent } from './agentIdentity';
import type { ChangeSink } from './surface';
import { describeError, describeErrorWithStack } from '../base/describeError';

export const LOOPBACK = '127.0.0.1';
export const MCP_PATH = '/mcp';
const MAX_SESSIONS = 64;
const MAX_BODY = '32mb';
const MAX_BODY_BYTES = 32 * 1024 * 1024;


interface Session {
  readonly transport: JsonSessionTransport;
  readonly server: McpServer;
  lastSeen: number;
  /** The agent whose credential opened the session (undefined: the window's token). Every request must match it. */
  readonly agent: AgentRef | undefined;
}

/** A session id shown in logs: enough to correlate, not enough to use. */
export function maskId(id: string): string {
  return id.length <= 8 ? '…' : `${id.slice(0, 4)}…`;
}

/** The 2026-07-28 era: a server per request from the v2 SDK, and where its change notifications come from. */
export interface ModernServing {
  /** Builds the server of one 2026-era request (src/mcp/toolServer.ts, createModernToolServer). */
  readonly createServer: () => ModernMcpServer;
  /** Starts telling `sink` what changed (tool list, steering queues); disposed when the host stops. */
  readonly watch?: (sink: ChangeSink) => Disposable;
}

/** A route served beside /mcp: every request under `path` goes to `handler`, which checks its own credential. */
export interface HttpRoute {
  readonly path: string;
  readonly handler: express.RequestHandler;
}

export interface McpHttpHostOptions {
  /** Builds a fresh MCP server for each 2025-era session. */
  readonly createServer: () => McpServer;
  /** Serves 2026-07-28 requests on the same endpoint; absent, the endpoint speaks 2025-11-25 only. */
  readonly modern?: ModernServing;
  /** The /mcp token, or its verifier while the token is loading (see ExpectedSecret); undefined refuses every request. */
  readonly token: () => ExpectedSecret | undefined;
  readonly logger: Logger;
  /**
   * Routes the modules serve beside /mcp (the works' /inbox API): behind the same Host and Origin guards, before the
   * /mcp token, so each authenticates its requests itself and neither token opens the other.
   */
  readonly routes?: readonly HttpRoute[];
  /** Agent credentials accepted besides the token (each names its agent: src/mcp/agentIdentity.ts). */
  readonly agents?: AgentVerifier;
}

/**
 * Streamable HTTP on 127.0.0.1 only, both protocol eras on one endpoint. Every request passes the Host allow-list,
 * the Origin refusal and the bearer token, in that order, before any MCP handling; then the era is told apart:
 * - 2025-11-25 (a request with `Mcp-Session-Id`, or one the v2 SDK's `isLegacyRequest` classifies as legacy: no
 *   per-request `_meta` envelope): one transport and one server per session, as before. JSON responses (not SSE)
 *   for POST, through our own JsonSessionTransport, which measured fastest and keeps nothing once a request is
 *   answered (`npm run bench -- session`).
 * - 2026-07-28 (everything else): the v2 SDK's own `createMcpHandler` with `legacy: 'reject'`, a server per request,
 *   change notifications published through its `notify` to subscriptions/listen streams.
 */
export class McpHttpHost implements ServerControl {
  private httpServer: http.Server | undefined;
  private readonly sessions = new Map<string, Session>();
  private _state: HostState = { kind: 'stopped' };
  /** Tells every listener; one that throws is logged and does not keep the others (or start/stop) from going on. */
  private readonly stateChanges: Emitter<HostState>;
  private readonly agentActivity = new AgentActivityLog();
  private modern: { readonly handler: McpHttpHandler; readonly node: NodeMcpRequestHandler; readonly watching: Disposable | undefined } | undefined;

  constructor(private readonly options: McpHttpHostOptions) {
    this.stateChanges = new Emitter((err) => options.logger.error('[http] a server state listener failed', describeErrorWithStack(err)));
    this.outerChecks = [hostCheck(() => this.port ?? -1), originCheck()];
    this.tokenCheck = agentOrWindowCheck(options.agents, bearerCheck(options.token, 'codespace'));
  }

  get state(): HostState {
    return this._state;
  }

  get port(): number | undefined {
    return this._state.kind === 'running' ? this._state.port : undefined;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  onDidChangeState(listener: (s: HostState) => void): { dispose(): void } {
    return this.stateChanges.on(listener);
  }

  private setState(s: HostState): void {
    this._state = s;
    this.stateChanges.emit(s);
  }

  /** A declared body over the largest limit: refused before anything else, for /mcp and every route beside it alike. */
  private readonly preAuthChecks: readonly RequestCheck[] = [declaredSizeCheck(MAX_BODY_BYTES)];

  /** Host, then Origin, on every request; then the /mcp token on everything but the routes beside /mcp (each checks its own). */
  private readonly outerChecks: readonly RequestCheck[];
  private readonly tokenCheck: RequestCheck;

  /**
   * The listener. A request for exactly /mcp whose body needs no decoding but UTF-8 JSON (every MCP client's) is
   * served here: the same checks in the same order, then the body read as express.json() reads it (jsonBody.ts).
   * Anything else (the routes beside /mcp, other paths, /mcp with a query or a compressed body) goes to the express app, which runs
   * the same checks. Express's routing and body parsing cost more per call than the rest of a small request's HTTP
   * handling (`npm run bench:editor read`), so the path every tool call takes does not go through them.
   */
  private listener(app: express.Express): http.RequestListener {
    return (req, res) => {
      // Every request, whatever its path, before its token is looked at (security.ts PRE_AUTH_LIMITS).
      if (refuse(req, res, this.preAuthChecks)) return;
      if (req.url !== MCP_PATH || !plainBody(req)) {
        app(req, res);
        return;
      }
      // As express would: a check that throws is a 500 for this request, never an exception out of the listener.
      try {
        if (refuse(req, res, this.outerChecks) || refuse(req, res, [this.tokenCheck])) return;
      } catch (err) {
        this.failed(res, err);
        return;
      }
      this.serveMcp(req, res).catch((err: unknown) => this.failed(res, err));
    };
  }

  private async serveMcp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readJsonBody(req, MAX_BODY_BYTES);
    switch (body.kind) {
      case 'aborted':
        return;
      case 'too-large':
        return sendRpcError(res, 413, -32603, `Request body too large (limit ${MAX_BODY}).`);
      case 'invalid':
        return sendRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON.');
      default:
        return this.handle(req, res, body.kind === 'json' ? body.value : undefined);
    }
  }

  private failed(res: http.ServerResponse, err: unknown): void {
    this.options.logger.error('[http] request failed', describeErrorWithStack(err));
    sendRpcError(res, 500, -32603, 'Internal error');
  }

  private buildApp(): express.Express {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    for (const check of this.outerChecks) app.use(asMiddleware(check));
    // Before the /mcp token: a route beside /mcp answers every request under its path with its own credential check.
    for (const route of this.options.routes ?? []) app.use(route.path, route.handler);
    app.use(asMiddleware(this.tokenCheck));
    app.use(express.json({ limit: MAX_BODY }));
    app.all(MCP_PATH, (req, res) => {
      this.handle(req, res, req.body).catch((err: unknown) => this.failed(res, err));
    });
    app.use((_req: Request, res: Response) => {
      res.status(404).json({ jsonrpc: '2.0', error: { code: -32000, message: `Not found: the MCP endpoint is ${MCP_PATH}.` }, id: null });
    });
    // Body parse errors and the like: a JSON-RPC error, never a stack trace.
    app.use((err: { status?: number; type?: string }, _req: Request, res: Response, _next: express.NextFunction) => {
      const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
      const message = err.type === 'entity.too.large' ? `Request body too large (limit ${MAX_BODY}).` : status === 400 ? 'Parse error: the body is not valid JSON.' : 'Internal error';
      res.status(status).json({ jsonrpc: '2.0', error: { code: status === 400 ? -32700 : -32603, message }, id: null });
    });
    return app;
  }

  /** One /mcp request, its body parsed: handled with its agent (if any) as the identity its tool calls see. */
  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void> {
    const agent = agentOfRequest(req);
    if (agent !== undefined) this.agentActivity.seen(agent);
    return withRequestAgent(agent, () => this.handleAs(agent, req, res, body));
  }

  private async handleAs(agent: AgentRef | undefined, req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(header) ? header[0] : header;
    if (sessionId !== undefined) {
      const session = this.sessions.get(sessionId);
      if (!session) return sendRpcError(res, 404, -32001, 'Session not found: initialize a new session.');
      // A session is its opener's: another agent's credential (or the window's token) cannot drive it.
      if (session.agent?.id !== agent?.id) return sendRpcError(res, 403, -32001, 'Forbidden: this session was opened with another credential.');
      session.lastSeen = Date.now();
      await session.transport.handle(req, res, body);
      return;
    }
    const modern = this.modern;
    // The SDK's own classification, so the branch never disagrees with createMcpHandler; route every `false` there.
    // The body is parsed already: given to the classification, it is not read and parsed again from a clone.
    if (modern && req.method === 'POST' && !(await isLegacyRequest(await toWebRequest(req, body), body))) {
      await modern.node(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return sendRpcError(res, 400, -32000, 'Bad request: send an initialize request first, then the Mcp-Session-Id header it returns.');
    }
    this.evictIfFull();
    const server = this.options.createServer();
    // Our own transport, not the SDK's StreamableHTTPServerTransport: see jsonSessionTransport.ts (SDK issue #2559).
    const transport: JsonSessionTransport = new JsonSessionTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, lastSeen: Date.now(), agent });
        this.options.logger.info(`[http] session ${maskId(id)} opened${agent !== undefined ? ` by agent "${agent.name}"` : ''} (${this.sessions.size} open)`);
        if (agent !== undefined) this.agentActivity.changed();
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.forget(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handle(req, res, body);
  }

  private forget(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    this.options.logger.info(`[http] session ${maskId(id)} closed (${this.sessions.size} open)`);
    if (s.agent !== undefined) this.agentActivity.changed();
    void s.server.close().catch(() => undefined);
  }

  private evictIfFull(): void {
    if (this.sessions.size < MAX_SESSIONS) return;
    let oldest: [string, Session] | undefined;
    for (const entry of this.sessions) if (!oldest || entry[1].lastSeen < oldest[1].lastSeen) oldest = entry;
    if (oldest) {
      this.options.logger.warn(`[http] too many sessions; closing the least recently used (${maskId(oldest[0])})`);
      void oldest[1].transport.close().catch(() => undefined);
      this.forget(oldest[0]);
    }
  }

  /** Listens on 127.0.0.1:preferredPort, or on an OS-assigned port when that one is taken. */
  async start(preferredPort: number): Promise<number> {
    if (this.httpServer) await this.stop();
    this.setState({ kind: 'starting' });
    this.startModern();
    const listener = this.listener(this.buildApp());
    const listen = (port: number) =>
      new Promise<http.Server>((resolve, reject) => {
        const server = http.createServer(preAuthServerOptions(), listener);
        server.once('error', reject);
        server.listen(port, LOOPBACK, () => {
          server.off('error', reject);
          resolve(server);
        });
      });
    let fellBack = false;
    try {
      try {
        this.httpServer = await listen(preferredPort);
      } catch (err) {
        if (preferredPort === 0 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
        this.options.logger.warn(`[http] port ${preferredPort} is in use; using a port chosen by the system`);
        fellBack = true;
        this.httpServer = await listen(0);
      }
    } catch (err) {
      const message = describeError(err);
      await this.stopModern();
      this.setState({ kind: 'failed', message });
      throw err;
    }
    this.httpServer.keepAliveTimeout = 5000;
    const port = (this.httpServer.address() as AddressInfo).port;
    this.setState({ kind: 'running', port, fellBack });
    this.options.logger.info(`[http] listening on http://${LOOPBACK}:${port}${MCP_PATH}`);
    return port;
  }

  private startModern(): void {
    const serving = this.options.modern;
    if (!serving) return;
    const logError = (what: string) => (err: Error) => this.options.logger.error(`[http] ${what}`, err.stack ?? err.message);
    const handler = createMcpHandler(() => serving.createServer(), { legacy: 'reject', maxRequestBodySize: MAX_BODY_BYTES, onerror: logError('a 2026-era request failed') });
    const watching = serving.watch?.({
      toolsChanged: () => handler.notify.toolsChanged(),
      resourcesChanged: () => handler.notify.resourcesChanged(),
      resourceUpdated: (uri) => handler.notify.resourceUpdated(uri),
    });
    this.modern = { handler, node: toNodeHandler(handler, { maxRequestBodySize: MAX_BODY_BYTES, onerror: logError('a 2026-era request could not be served') }), watching };
  }

  private async stopModern(): Promise<void> {
    const modern = this.modern;
    this.modern = undefined;
    if (!modern) return;
    modern.watching?.dispose();
    await modern.handler.close().catch((err: unknown) => this.options.logger.warn(`[http] closing the 2026-era handler: ${describeError(err)}`));
  }

  async stop(): Promise<void> {
    const server = this.httpServer;
    this.httpServer = undefined;
    await this.stopModern();
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map(async (s) => {
      await s.transport.close();
      await s.server.close();
    }));
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
    this.setState({ kind: 'stopped' });
  }

  /**
   * Closes every open session (used after a token rotation so old sessions cannot continue), and every 2026-era
   * exchange in flight, subscriptions/listen streams included: the handler is replaced by a fresh one.
   */
  async closeSessions(): Promise<void> {
    if (this.modern) {
      await this.stopModern();
      this.startModern();
    }
    const sessions = [...this.sessions.entries()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map(async ([, s]) => {
      await s.transport.close();
      await s.server.close();
    }));
  }

  /** What this window has seen of each agent since it started: first and last request, open sessions. */
  agents(): AgentActivity[] {
    const open = new Map<string, number>();
    for (const s of this.sessions.values()) if (s.agent !== undefined) open.set(s.agent.id, (open.get(s.agent.id) ?? 0) + 1);
    return this.agentActivity.list(open);
  }

  /** Fires when an agent connects for the first time, opens or closes a session, or is closed out. */
  onDidChangeAgents(listener: () => void): Disposable {
    return this.agentActivity.onDidChange(listener);
  }

  /**
   * Closes every session of an agent at once (its credential was revoked), and every 2026-era exchange in flight
   * (the handler is replaced; other clients' next requests are served by the new one). Returns how many sessions.
   */
  async closeAgent(agentId: string): Promise<number> {
    if (this.modern) {
      await this.stopModern();
      this.startModern();
    }
    const closing = [...this.sessions.entries()].filter(([, s]) => s.agent?.id === agentId);
    for (const [id] of closing) this.sessions.delete(id);
    await Promise.allSettled(closing.map(async ([, s]) => {
      await s.transport.close();
      await s.server.close();
    }));
    this.agentActivity.forget(agentId);
    this.options.logger.info(`[http] agent "${agentId}" closed out: ${closing.length} session(s) closed`);
    return closing.length;
  }

  dispose(): void {
    this.stop().catch((err: unknown) => {
      this.options.logger.error('[http] stopping the server failed', describeErrorWithStack(err));
    });
  }
}
