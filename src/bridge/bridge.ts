import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, JSONRPCResultResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { LocateOptions, Target } from './locate';
import { LocateError, locate, relocate } from './locate';
import type { ShippedCatalogue } from './catalogueSource';
import { localAnswer, modernEnvelope } from './localAnswers';
import { SHIPPED } from './shippedCatalogue';
import { upstreamHeaders } from './upstreamHeaders';
import type * as HttpUpstreamModule from './httpUpstream';

type HttpUpstream = typeof HttpUpstreamModule;

/** JSON-RPC error codes the bridge itself answers with (server-defined range). */
export const BRIDGE_NO_WINDOW = -32030;
export const BRIDGE_IN_FLIGHT_LOST = -32031;

/** Requests that change nothing, so resending one after a lost connection is always safe. */
const SAFE_METHODS = new Set(['initialize', 'ping', 'tools/list', 'resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get', 'completion/complete']);

export interface BridgeOptions {
  readonly locate: LocateOptions;
  /** How long to look for the window again after its endpoint went away (ms). */
  readonly reconnectTimeoutMs: number;
  /** How long a request waits for the window to be found at first, before it gets BRIDGE_NO_WINDOW (ms). */
  readonly windowTimeoutMs: number;
  /** What to answer before the window is found (default: the catalogue built into the bridge). */
  readonly catalogue?: ShippedCatalogue;
  readonly log: (line: string) => void;
  /** Poll interval while the window is away (ms). */
  readonly pollMs?: number;
}

interface Upstream {
  readonly target: Target;
  readonly transport: StreamableHTTPClientTransport;
  /** The client's notifications/initialized went to this session (after the replayed initialize). */
  initializedSent: boolean;
}


/** The HTTP side (httpUpstream.ts), loaded at the first session: not needed to answer from the shipped catalogue. */
let httpUpstream: HttpUpstream | undefined;

async function loadHttp(): Promise<HttpUpstream> {
  const loaded: HttpUpstream = await import('./httpUpstream.js');
  httpUpstream ??= loaded;
  return httpUpstream;
}

/** Which failures mean the endpoint went away; none before the HTTP side was ever loaded (nothing was sent). */
function endpointFailure(err: unknown): boolean {
  return httpUpstream?.endpointFailure(err) ?? false;
}

function notDelivered(err: unknown): boolean {
  return httpUpstream?.notDelivered(err) ?? true;
}

function isJSONRPCRequest(m: JSONRPCMessage): m is JSONRPCRequest {
  return 'method' in m && 'id' in m && m.id !== undefined;
}

function isJSONRPCResultResponse(m: JSONRPCMessage): m is JSONRPCResultResponse {
  return 'result' in m && 'id' in m;
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${err.message} (${cause.code ?? cause.message ?? 'cause unknown'})` : err.message;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Relays MCP between a client on stdio and the window's Streamable HTTP endpoint, adding the token.
 *
 * At start it answers at once, without the window: `initialize`, `server/discover` and `tools/list` get the
 * catalogue built into the bridge (localAnswers.ts), while it finds the window in the background (agents give an
 * MCP server little time to start). It then opens the session by replaying the client's `initialize`, asks the
 * window for its tool list and, when that differs from what it answered (other tool groups turned off, another
 * extension version), sends `notifications/tools/list_changed`; from then on tools/list is the window's. Any other
 * request waits for the window, up to `windowTimeoutMs`, then gets BRIDGE_NO_WINDOW saying what it waited for; a
 * request the client cancels while it waits is never sent.
 *
 * When the
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
  /** True once the client's initialize was answered: from then on every session is opened by replaying it. */
  private sessionOpen = false;
  private everConnected: Target | undefined;
  private replayCount = 0;
  private readonly internal = new Map<RequestId, (m: JSONRPCMessage) => void>();
  private readonly toolListIds = new Set<RequestId>();
  private readonly safeTools = new Set<string>();
  /** Requests waiting for the window, not yet sent: a cancellation of one of them drops it here. */
  private readonly waiting = new Map<RequestId, { cancelled: boolean }>();
  private readonly catalogue: ShippedCatalogue;
  /** The tool list the bridge answers with until the window is found. */
  private tools: readonly unknown[];
  /** The 2026-07-28 envelope of the client's latest request, to ask the window for its list in that revision. */
  private envelope: Record<string, unknown> | undefined;
  private learning = false;
  private closed = false;

  constructor(
    private readonly client: Transport,
    private readonly options: BridgeOptions,
  ) {
    this.catalogue = options.catalogue ?? SHIPPED;
    this.tools = this.catalogue.tools;
    this.learnTools({ tools: this.tools });
  }

  async start(): Promise<void> {
    this.client.onmessage = (m) => {
      this.fromClient(m).catch((err: unknown) => this.options.log(`relay failed: ${describeError(err)}`));
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
    const envelope = modernEnvelope(m);
    if (envelope) this.envelope = envelope;
    if (!('id' in m) && 'method' in m && m.method === 'notifications/cancelled') {
      const waiting = this.waiting.get((m.params as { requestId?: RequestId } | undefined)?.requestId ?? '');
      if (waiting) {
        // Never sent: dropping it here is the whole cancellation (the window never saw it, the client wants no answer).
        waiting.cancelled = true;
        this.options.log('a request cancelled while it waited for the window was not sent');
        return;
      }
    }
    if (isJSONRPCRequest(m) && m.method === 'initialize' && !envelope) {
      // Answered here; the window's session is opened by replaying it (open()), now and after every reload.
      this.initialize = m;
      this.initialized = undefined;
      const up = this.upstream;
      if (up) this.drop(up, new Error('the client initialized again'));
      this.answerLocally(m);
      this.sessionOpen = true;
      this.findWindow();
      return;
    }
    if (!('id' in m) && 'method' in m && m.method === 'notifications/initialized') {
      // Sent by the bridge after the replayed initialize, once per session.
      this.initialized = m;
      if (this.upstream) await this.sendInitialized(this.upstream);
      return;
    }
    if (isJSONRPCRequest(m) && !this.everConnected && this.answerLocally(m)) {
      this.findWindow();
      return;
    }
    if (isJSONRPCRequest(m) && m.method === 'tools/list') this.toolListIds.add(m.id);
    await this.forward(m);
  }

  /** Answers from the shipped catalogue when the request is one the bridge can answer itself (localAnswers.ts). */
  private answerLocally(m: JSONRPCRequest): boolean {
    const answer = localAnswer(m, this.catalogue, this.tools);
    if (!answer) return false;
    this.client.send(answer).catch((err: unknown) => this.options.log(`writing to the client failed: ${describeError(err)}`));
    return true;
  }

  /**
   * In the background: finds the window, opens the session, asks for the window's tool list and, when it differs
   * from what the client was given, says so with notifications/tools/list_changed. Once per bridge.
   */
  private findWindow(): void {
    if (this.learning || this.everConnected) return;
    this.learning = true;
    void this.ensureUpstream()
      .then((up) => this.learnWindowList(up))
      .catch((err: unknown) => this.options.log(`window not found yet: ${describeError(err)}`))
      .finally(() => {
        this.learning = false;
      });
  }

  private async learnWindowList(up: Upstream): Promise<void> {
    const id = `codespace-bridge-tools-${++this.replayCount}`;
    const request: JSONRPCRequest = this.envelope && !this.initialize ? { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: this.envelope } } : { jsonrpc: '2.0', id, method: 'tools/list' };
    const answered = new Promise<JSONRPCMessage>((resolve) => this.internal.set(id, resolve));
    try {
      await up.transport.send(request);
    } catch (err) {
      this.internal.delete(id);
      throw err;
    }
    const answer = await answered;
    if (!isJSONRPCResultResponse(answer)) throw new Error(`the window refused tools/list: ${JSON.stringify(answer)}`);
    const tools = (answer.result as { tools?: unknown }).tools;
    if (!Array.isArray(tools) || JSON.stringify(tools) === JSON.stringify(this.tools)) return;
    this.tools = tools;
    this.learnTools(answer.result);
    this.options.log(`the window serves another tool list than the bridge's (${tools.length} tools): notifications/tools/list_changed`);
    await this.client.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private async sendInitialized(up: Upstream): Promise<void> {
    if (!this.initialized || up.initializedSent || !this.initialize) return;
    up.initializedSent = true;
    await up.transport.send(this.initialized);
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

  /** The window's session for a request, or undefined when the client cancelled the request while it waited. */
  private async upstreamFor(m: JSONRPCMessage): Promise<Upstream | undefined> {
    if (this.upstream || !isJSONRPCRequest(m)) return this.ensureUpstream();
    const wait = { cancelled: false };
    this.waiting.set(m.id, wait);
    try {
      const up = await this.ensureUpstream();
      return wait.cancelled ? undefined : up;
    } catch (err) {
      if (wait.cancelled) return undefined;
      throw err;
    } finally {
      if (this.waiting.get(m.id) === wait) this.waiting.delete(m.id);
    }
  }

  private async forward(m: JSONRPCMessage): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let up: Upstream | undefined;
      try {
        up = await this.upstreamFor(m);
      } catch (err) {
        this.answerError(m, BRIDGE_NO_WINDOW, describeError(err));
        return;
      }
      if (!up) return;
      try {
        await up.transport.send(m);
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

  private ensureUpstream(): Promise<Upstream> {
    if (this.upstream) return Promise.resolve(this.upstream);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<Upstream> {
    const first = !this.everConnected;
    const waitMs = first ? this.options.windowTimeoutMs : this.options.reconnectTimeoutMs;
    const deadline = Date.now() + waitMs;
    for (;;) {
      try {
        const target = this.everConnected ? relocate(this.options.locate, this.everConnected) : locate(this.options.locate);
        const up = await this.open(target);
        if (this.everConnected?.url !== target.url) this.options.log(`connected ${target.describe}`);
        this.everConnected = target;
        this.upstream = up;
        // Before any request queued behind this connection goes out.
        await this.sendInitialized(up);
        return up;
      } catch (err) {
        const retry = err instanceof LocateError ? err.retry : endpointFailure(err);
        if (!retry || this.closed) throw err;
        if (Date.now() >= deadline) throw first ? new Error(this.notFoundMessage(waitMs, err)) : err;
        await sleep(this.options.pollMs ?? 500);
      }
    }
  }

  /** Why a request got no window at first: what the bridge looked for, how long, what to do. */
  private notFoundMessage(waitMs: number, err: unknown): string {
    const { workspace, env, cwd, dirs } = this.options.locate;
    const what = workspace !== undefined ? `a window with a workspace folder containing --workspace ${workspace}` : env.CODESPACE_MCP_URL ? `the window of CODESPACE_MCP_URL=${env.CODESPACE_MCP_URL}` : `a window with a workspace folder containing the working directory ${cwd}`;
    return (
      `The CodeSpace bridge waited ${Math.round(waitMs / 100) / 10} s for ${what} and found none usable: ${describeError(err)} ` +
      `Open VS Code (with the CodeSpace extension) on that folder, or check the discovery folder ${dirs[0] ?? '(none)'} (codespace-mcp --list prints the windows found there); then call again.`
    );
  }

  private async open(target: Target): Promise<Upstream> {
    const transport = (await loadHttp()).httpTransport(target.url, upstreamHeaders(target));
    const up: Upstream = { target, transport, initializedSent: false };
    transport.onmessage = (msg) => this.fromUpstream(msg);
    transport.onerror = (err) => {
      // The standalone GET stream is refused with 405 by design; the SDK reports nothing for that. Others: log.
      this.options.log(`upstream: ${err.message}`);
    };
    transport.onclose = () => undefined;
    await transport.start();
    if (this.initialize && this.sessionOpen) {
      const id = `codespace-bridge-initialize-${++this.replayCount}`;
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
        throw new LocateError(`The CodeSpace window refused the client's initialize: ${JSON.stringify(answer)}`, false);
      }
      this.options.log(`session ${this.everConnected ? 're-initialized' : 'opened'} on ${target.url}`);
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
    this.client.send(msg).catch((err: unknown) => this.options.log(`writing to the client failed: ${describeError(err)}`));
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
