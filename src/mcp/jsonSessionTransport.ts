import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCErrorResponse, JSONRPCMessage, JSONRPCResultResponse, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isJsonContentType } from '../base/node/httpRequest';
import { jsonBytes } from './jsonBytes';
import { sendRpcError } from './security';
import {
  JSONRPCErrorResponseSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  isInitializeRequest,
  isJSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';

/** Most JSON-RPC messages accepted in one POST (the same bound as the SDK's own transport). */
export const MAX_BATCH = 100;

/**
 * WORKAROUND for typescript-sdk issue #2559 (open; the v1.x fix is PR #2747, unmerged as of SDK 1.32.2):
 * the SDK's StreamableHTTPServerTransport in JSON-response mode never deletes the per-request entry it keeps in
 * `_streamMapping`, and that entry holds the settled Response, so a session retains every response it ever sent
 * (measured: about 525 KiB of live heap per 256 KiB `read`, freed only when the session closes). This class
 * replaces that transport for our endpoint. It implements the SDK's public `Transport` interface, so the SDK's
 * McpServer/Protocol layer (initialize, tools/list, tools/call, cancellation, output-schema validation) is
 * unchanged. It was chosen over a patched SDK and over the SSE response mode by `npm run bench -- session`, which
 * measures memory and latency of all of them side by side.
 *
 * It can go when a released SDK 1.x contains the fix (check: test/unit/sessionMemory.test.ts passes with the
 * SDK transport in its place) and that bench shows the SDK transport no slower than this one.
 *
 * What it serves, per MCP Streamable HTTP (2025-11-25): POST of one JSON-RPC message (or a batch, from older
 * clients) answered with one `application/json` body once every request in it has its response; 202 for POSTs of
 * notifications and responses only; DELETE ends the session; GET (Accept: text/event-stream) opens the one
 * standalone SSE stream of the session, which carries what the server sends unprompted (notifications/resources/
 * updated for a subscribed steering queue); a second GET while it is open is 409, as in the SDK's transport.
 * Progress notifications about a request (sent only when the client gave a progress token) turn that one POST's
 * answer into an SSE stream when the client accepts `text/event-stream`: the notifications, then the response, then
 * the end of the stream. Any other message about a request while it runs (logging) has no stream to go to and is
 * dropped, as the SDK's JSON mode does.
 * Sessions, the Host/Origin/token guards and body parsing belong to the HTTP host, which calls `handle`.
 */
export class JsonSessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  /** Set once the initialize request has been accepted. */
  sessionId: string | undefined;
  private started = false;
  private closed = false;
  /** Requests waiting for their response → the exchange that answers them. One entry per request in flight. */
  private readonly waiting = new Map<RequestId, Exchange>();
  /** The standalone SSE stream (GET), if the client holds one open. */
  private stream: ServerResponse | undefined;

  constructor(private readonly options: { readonly sessionIdGenerator: () => string; readonly onsessioninitialized?: (id: string) => void }) {}

  /** Requests in flight (for tests and diagnostics). */
  get pendingCount(): number {
    return this.waiting.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('Transport already started');
    this.started = true;
  }

  /**
   * Answers one HTTP request of this session. `body` is the parsed JSON body (POST only). Resolves once the
   * response has been handed to node:http.
   */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed) return sendRpcError(res, 404, -32001, 'Session not found: initialize a new session.');
    if (req.method === 'DELETE') {
      if (!this.checkProtocolVersion(req, res)) return;
      reply(res, 200, undefined);
      await this.close();
      return;
    }
    if (req.method === 'GET') return this.openStream(req, res);
    if (req.method !== 'POST') {
      res.setHeader('allow', 'GET, POST, DELETE');
      return sendRpcError(res, 405, -32000, 'Method not allowed.');
    }
    const accept = String(req.headers.accept ?? '');
    if (!/application\/json|\*\/\*/.test(accept)) {
      return sendRpcError(res, 406, -32000, 'Not Acceptable: the client must accept application/json.');
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      return sendRpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json.');
    }
    const batch = Array.isArray(body);
    const raw: unknown[] = batch ? body : [body];
    if (raw.length === 0 || raw.length > MAX_BATCH) {
      return sendRpcError(res, 400, -32600, `Invalid Request: a batch holds 1 to ${MAX_BATCH} messages.`);
    }
    const messages: JSONRPCMessage[] = [];
    for (const m of raw) {
      const parsed = schemaByShape(m)?.safeParse(m);
      if (!parsed?.success) return sendRpcError(res, 400, -32600, 'Invalid Request: the body is not a JSON-RPC 2.0 message.');
      messages.push(parsed.data as JSONRPCMessage);
    }
    const initialize = messages.some((m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m));
    if (initialize) {
      if (this.sessionId !== undefined) return sendRpcError(res, 400, -32600, 'Invalid Request: this session is already initialized.');
      if (messages.length > 1) return sendRpcError(res, 400, -32600, 'Invalid Request: initialize must be sent alone.');
      this.sessionId = this.options.sessionIdGenerator();
      this.options.onsessioninitialized?.(this.sessionId);
    } else {
      if (this.sessionId === undefined) return sendRpcError(res, 400, -32000, 'Bad Request: the session is not initialized.');
      if (!this.checkProtocolVersion(req, res)) return;
    }
    const requests = messages.filter(isJSONRPCRequest);
    for (const r of requests) {
      if (this.waiting.has(r.id)) return sendRpcError(res, 400, -32600, `Invalid Request: request id ${JSON.stringify(r.id)} is already in flight in this session.`);
    }
    if (new Set(requests.map((r) => r.id)).size !== requests.length) {
      return sendRpcError(res, 400, -32600, 'Invalid Request: request ids in one batch must differ.');
    }
    if (this.sessionId !== undefined) res.setHeader('mcp-session-id', this.sessionId);
    const extra: MessageExtraInfo = { requestInfo: { headers: req.headers } };
    if (requests.length === 0) {
      reply(res, 202, undefined);
      for (const m of messages) this.onmessage?.(m, extra);
      return;
    }
    const exchange = new Exchange(res, requests.map((r) => r.id), batch, !batch && /text\/event-stream/.test(accept));
    for (const id of exchange.ids) this.waiting.set(id, exchange);
    // A client that hangs up no longer waits: forget its requests so nothing is kept for it.
    res.once('close', () => {
      for (const id of exchange.ids) if (this.waiting.get(id) === exchange) this.waiting.delete(id);
    });
    for (const m of messages) this.onmessage?.(m, extra);
  }

  /** GET: the standalone stream for unprompted server messages; one per session. */
  private openStream(req: IncomingMessage, res: ServerResponse): void {
    if (this.sessionId === undefined) return sendRpcError(res, 400, -32000, 'Bad Request: the session is not initialized.');
    if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
      return sendRpcError(res, 406, -32000, 'Not Acceptable: the client must accept text/event-stream.');
    }
    if (!this.checkProtocolVersion(req, res)) return;
    if (this.stream && !this.stream.destroyed) return sendRpcError(res, 409, -32000, 'Conflict: this session already has an open event stream.');
    res.statusCode = 200;
    res.setHeader('content-type', 'text/event-stream');
    res.setHeader('cache-control', 'no-cache, no-transform');
    res.setHeader('mcp-session-id', this.sessionId);
    res.flushHeaders();
    this.stream = res;
    res.once('close', () => {
      if (this.stream === res) this.stream = undefined;
    });
  }

  private checkProtocolVersion(req: IncomingMessage, res: ServerResponse): boolean {
    const header = req.headers['mcp-protocol-version'];
    const version = Array.isArray(header) ? header[0] : header;
    if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      sendRpcError(res, 400, -32000, `Bad Request: unsupported MCP-Protocol-Version ${JSON.stringify(version)} (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}).`);
      return false;
    }
    return true;
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    // Our own server's messages, typed already: a look at their shape, not a schema parse per answer.
    if (!isResponse(message)) {
      if (options?.relatedRequestId !== undefined) {
        // Progress about a request in flight goes on its own response, as a stream (see above); nothing else does.
        if ('method' in message && message.method === 'notifications/progress') this.waiting.get(options.relatedRequestId)?.progress(message);
        return;
      }
      // Unprompted: the standalone stream, when one is open.
      const stream = this.stream;
      if (stream && !stream.destroyed && !stream.writableEnded) stream.write(sseEvent(message));
      return;
    }
    const id = message.id;
    if (id === undefined) return;
    const exchange = this.waiting.get(id);
    if (!exchange) return; // the client hung up or the session closed: nobody to answer
    this.waiting.delete(id);
    exchange.settle(id, 'error' in message ? withoutCodePrefix(message) : message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const exchanges = new Set(this.waiting.values());
    this.waiting.clear();
    this.stream?.end();
    this.stream = undefined;
    // Requests still running get an answer instead of a connection left hanging.
    for (const e of exchanges) e.abandon();
    this.onclose?.();
  }
}

/** One POST waiting for the responses to the requests it carried. */
class Exchange {
  private readonly responses = new Map<RequestId, JSONRPCMessage>();

  /** Whether this answer became an event stream (a progress notification came first). */
  private streaming = false;

  constructor(
    private readonly res: ServerResponse,
    readonly ids: readonly RequestId[],
    private readonly batch: boolean,
    /** One request, and its client accepts text/event-stream: progress may be streamed. */
    private readonly mayStream: boolean,
  ) {}

  progress(message: JSONRPCMessage): void {
    if (!this.mayStream || this.res.destroyed) return;
    if (!this.streaming) {
      if (this.res.headersSent) return;
      this.streaming = true;
      this.res.statusCode = 200;
      this.res.setHeader('content-type', 'text/event-stream');
      this.res.setHeader('cache-control', 'no-cache');
    }
    this.res.write(sseEvent(message));
  }

  settle(id: RequestId, message: JSONRPCMessage): void {
    this.responses.set(id, message);
    if (this.responses.size < this.ids.length) return;
    const ordered = this.ids.map((i) => this.responses.get(i));
    if (this.streaming) {
      if (!this.res.destroyed) this.res.end(sseEvent(ordered[0]));
      return;
    }
    reply(this.res, 200, this.batch ? ordered : ordered[0]);
  }

  abandon(): void {
    if (this.streaming) {
      if (!this.res.destroyed) this.res.end();
      return;
    }
    if (this.res.headersSent) return;
    sendRpcError(this.res, 404, -32001, 'Session closed before the request finished: initialize a new session.');
  }
}

/**
 * The SDK's McpError writes its code into its message ("MCP error -32602: Invalid …") and the SDK sends that
 * message as it is, next to the code. Send the message alone.
 */
function withoutCodePrefix(message: JSONRPCErrorResponse): JSONRPCErrorResponse {
  const text = message.error.message.replace(/^MCP error -?\d+: /, '');
  return text === message.error.message ? message : { ...message, error: { ...message.error, message: text } };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = status;
  if (body === undefined) {
    res.end();
    return;
  }
  // As bytes, with their length: written as they are. A string would be joined to the headers and measured first,
  // each a copy of it in the heap; for a large answer (read_process) those copies outlive the young generation.
  // jsonBytes builds the bytes without the whole text as one string either (see there).
  const bytes = jsonBytes(body);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', bytes.length);
  res.end(bytes);
}

/** One server-sent event carrying a JSON-RPC message, as bytes (built as `reply` builds an answer). */
function sseEvent(message: unknown): Buffer {
  return Buffer.concat([SSE_HEAD, jsonBytes(message), SSE_TAIL]);
}
const SSE_HEAD = Buffer.from('event: message\ndata: ', 'utf8');
const SSE_TAIL = Buffer.from('\n\n', 'utf8');

/**
 * The one JSON-RPC schema a message can match, chosen by its keys, so a request is parsed once rather than tried
 * against the SDK's union (every failed member of a zod union builds its issues: measured as the largest cost of a
 * small `read` after the HTTP stack itself). The union's members are the same four schemas, so what is accepted does
 * not change. Undefined for something that is no object.
 */
function schemaByShape(m: unknown) {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
  if ('method' in m) return 'id' in m ? JSONRPCRequestSchema : JSONRPCNotificationSchema;
  return 'error' in m ? JSONRPCErrorResponseSchema : JSONRPCResultResponseSchema;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCResultResponse | JSONRPCErrorResponse {
  return 'id' in message && ('result' in message || 'error' in message);
}
