import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isJSONRPCRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/sdk/types.js';
import type { LocateOptions, Target } from './locate';
import { LocateError, locate, relocate } from './locate';
import { modernRelayFetch } from './modernRelay';

/** JSON-RPC error codes the bridge itself answers with (server-defined range). */
export const BRIDGE_NO_WINDOW = -32030;
export const BRIDGE_IN_FLIGHT_LOST = -32031;

/** Requests that change nothing, so resending one after a lost connection is always safe. */
const SAFE_METHODS = new Set(['initialize', 'ping', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete']);

export interface BridgeOptions {
  readonly locate: LocateOptions;
  /** How long to look for the window again after its endpoint went away (ms). */
  readonly reconnectTimeoutMs: number;
  readonly log: (line: string) => void;
  /** Poll interval while the window is away (ms). */
  readonly pollMs?: number;
}

interface Upstream {
  readonly target: Target;
  readonly transport: StreamableHTTPClientTransport;
}

/** A failure that proves the request never reached a session: refused connection, unknown session, bad token. */
function notDelivered(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || err.code === 401 || err.code === 403;
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}

/** A failure of the endpoint (gone, restarted, token rotated) rather than an answer to this request. */
function endpointFailure(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return err.code === 404 || err.code === 401 || err.code === 403 || (err.code ?? 0) >= 500;
  return err instanceof TypeError || (err as { cause?: unknown }).cause !== undefined || (err as { code?: string }).code === 'ECONNRESET';
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${err.message} (${cause.code ?? cause.message ?? 'cause unknown'})` : err.message;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Relays MCP between a client on stdio and the window's Streamable HTTP endpoint, adding the token. When the
 * endpoint goes away (window reload, restart, port change, token rotation) it finds the same window again,
 * opens a new session and replays the client's `initialize` and `notifications/initialized`, so the client's
 * session goes on.
 *
 * In-flight requests when the endpoint goes away: a request that provably never reached a session (connection
 * refused, session unknown, token refused) is resent on the new session. One that was sent and lost its answer
 * is resent only when repeating it is safe: list/ping methods, and tools the server marks readOnlyHint or
 * idempotentHint (apply_patch is, through its operation_key). Any other call (exec_command, write_stdin, ...) gets
 * a JSON-RPC error saying it may or may not have run; the bridge does not guess.
 */
export class Bridge {
  private upstream: Upstream | undefined;
  private connecting: Promise<Upstream> | undefined;
  private initialize: JSONRPCRequest | undefined;
  private initialized: JSONRPCMessage | undefined;
  /** True once the client's initialize was answered: from then on a new session is opened by replaying it. */
  private sessionOpen = false;
  private everConnected: Target | undefined;
  private replayCount = 0;
  private readonly internal = new Map<RequestId, (m: JSONRPCMessage) => void>();
  private readonly toolListIds = new Set<RequestId>();
  private readonly safeTools = new Set<string>();
  private closed = false;

  constructor(
    private readonly client: Transport,
    private readonly options: BridgeOptions,
  ) {}

  async start(): Promise<void> {
    this.client.onmessage = (m) => {
      this.fromClient(m).catch((err: unknown) => this.options.log(`relay failed: ${err instanceof Error ? err.message : String(err)}`));
    };
    this.client.onclose = () => {
      void this.close();
    };
    await this.client.start();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const up = this.upstream;
    this.upstream = undefined;
    if (up) {
      await up.transport.terminateSession().catch(() => undefined);
      await up.transport.close().catch(() => undefined);
    }
    await this.client.close().catch(() => undefined);
  }

  private async fromClient(m: JSONRPCMessage): Promise<void> {
    if (isJSONRPCRequest(m) && m.method === 'initialize') {
      this.initialize = m;
      this.sessionOpen = false;
    } else if (!('id' in m) && 'method' in m && m.method === 'notifications/initialized') {
      this.initialized = m;
    }
    if (isJSONRPCRequest(m) && m.method === 'tools/list') this.toolListIds.add(m.id);
    await this.forward(m);
  }

  private safeToRepeat(m: JSONRPCMessage): boolean {
    if (!isJSONRPCRequest(m)) return false;
    if (SAFE_METHODS.has(m.method)) return true;
    if (m.method === 'tools/call') {
      const name = (m.params as { name?: unknown } | undefined)?.name;
      return typeof name === 'string' && this.safeTools.has(name);
    }
    return false;
  }

  private async forward(m: JSONRPCMessage): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let up: Upstream;
      try {
        up = await this.ensureUpstream(m);
      } catch (err) {
        this.answerError(m, BRIDGE_NO_WINDOW, err instanceof Error ? err.message : String(err));
        return;
      }
      try {
        await up.transport.send(m);
        if (isJSONRPCRequest(m) && m.method === 'initialize') this.sessionOpen = true;
        return;
      } catch (err) {
        // A request still waiting on a session this bridge gave up (another request found the endpoint gone) is
        // aborted by that: the same loss as the endpoint's.
        const abandoned = this.upstream !== up;
        if ((!abandoned && !endpointFailure(err)) || this.closed) {
          // The endpoint answered, with an error of its own: the client gets it as is.
          this.answerError(m, -32603, `CodeSpace endpoint error: ${describeError(err)}`);
          return;
        }
        this.drop(up, err);
        const delivered = abandoned || !notDelivered(err);
        if (attempt >= 3 || (delivered && !this.safeToRepeat(m))) {
          if (isJSONRPCRequest(m)) {
            this.answerError(
              m,
              BRIDGE_IN_FLIGHT_LOST,
              `The CodeSpace window went away while "${m.method}${m.method === 'tools/call' ? ` ${String((m.params as { name?: unknown }).name)}` : ''}" was in flight (window reload or server restart): it may or may not have run, and repeating it is not known to be safe. The bridge reconnects for the next call; check the outcome (process_status, operation_status, read) before you repeat it.`,
            );
          } else {
            this.options.log(`a ${'method' in m ? m.method : 'response'} message was lost with the endpoint`);
          }
          return;
        }
        this.options.log(`${delivered ? 'resending' : 'sending again'} ${'method' in m ? m.method : 'a response'} after the endpoint went away`);
      }
    }
  }

  private drop(up: Upstream, err: unknown): void {
    if (this.upstream !== up) return;
    this.upstream = undefined;
    this.options.log(`endpoint ${up.target.url} lost: ${describeError(err)}`);
    void up.transport.close().catch(() => undefined);
  }

  private ensureUpstream(m: JSONRPCMessage): Promise<Upstream> {
    if (this.upstream) return Promise.resolve(this.upstream);
    // The client's own initialize opens the first session; any later session replays it.
    const replay = !(isJSONRPCRequest(m) && m.method === 'initialize');
    this.connecting ??= this.connect(replay).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(replay: boolean): Promise<Upstream> {
    const deadline = Date.now() + (this.everConnected ? this.options.reconnectTimeoutMs : 0);
    for (;;) {
      try {
        const target = this.everConnected ? relocate(this.options.locate, this.everConnected) : locate(this.options.locate);
        const up = await this.open(target, replay);
        if (this.everConnected?.url !== target.url) this.options.log(`connected ${target.describe}`);
        this.everConnected = target;
        this.upstream = up;
        return up;
      } catch (err) {
        const retry = err instanceof LocateError ? err.retry : endpointFailure(err);
        if (!retry || Date.now() >= deadline || this.closed) throw err;
        await sleep(this.options.pollMs ?? 500);
      }
    }
  }

  private async open(target: Target, replay: boolean): Promise<Upstream> {
    const transport = new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: { Authorization: `Bearer ${target.token}` } }, fetch: modernRelayFetch() });
    const up: Upstream = { target, transport };
    transport.onmessage = (msg) => this.fromUpstream(msg);
    transport.onerror = (err) => {
      // The standalone GET stream is refused with 405 by design; the SDK reports nothing for that. Others: log.
      this.options.log(`upstream: ${err.message}`);
    };
    transport.onclose = () => undefined;
    await transport.start();
    if (replay && this.initialize && this.sessionOpen) {
      const id = `codespace-bridge-reinitialize-${++this.replayCount}`;
      const answered = new Promise<JSONRPCMessage>((resolve) => this.internal.set(id, resolve));
      try {
        await transport.send({ ...this.initialize, id });
      } catch (err) {
        this.internal.delete(id);
        await transport.close().catch(() => undefined);
        throw err;
      }
      const answer = await answered;
      if (!isJSONRPCResultResponse(answer)) {
        await transport.close().catch(() => undefined);
        throw new LocateError(`The CodeSpace window refused the replayed initialize: ${JSON.stringify(answer)}`, false);
      }
      if (this.initialized) await transport.send(this.initialized);
      this.options.log(`session re-initialized on ${target.url}`);
    }
    return up;
  }

  private fromUpstream(msg: JSONRPCMessage): void {
    if ('id' in msg && msg.id !== undefined && !('method' in msg)) {
      const waiter = this.internal.get(msg.id);
      if (waiter) {
        this.internal.delete(msg.id);
        waiter(msg);
        return;
      }
      if (this.toolListIds.delete(msg.id) && isJSONRPCResultResponse(msg)) this.learnTools(msg.result);
    }
    this.client.send(msg).catch((err: unknown) => this.options.log(`writing to the client failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  /** Which tools are safe to resend, from the annotations the server itself gives in tools/list. */
  private learnTools(result: unknown): void {
    const tools = (result as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) return;
    for (const t of tools as { name?: unknown; annotations?: { readOnlyHint?: unknown; idempotentHint?: unknown } }[]) {
      if (typeof t.name !== 'string') continue;
      if (t.annotations?.readOnlyHint === true || t.annotations?.idempotentHint === true) this.safeTools.add(t.name);
      else this.safeTools.delete(t.name);
    }
  }

  private answerError(m: JSONRPCMessage, code: number, message: string): void {
    if (!isJSONRPCRequest(m)) {
      this.options.log(message);
      return;
    }
    this.options.log(message);
    this.client.send({ jsonrpc: '2.0', id: m.id, error: { code, message } }).catch(() => undefined);
  }
}
