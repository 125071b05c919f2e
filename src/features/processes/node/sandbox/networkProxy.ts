import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LookupAddress } from 'node:dns';
import type { PrepareRequestFunctionOpts, PrepareRequestFunctionResult, Server } from 'proxy-chain' with { 'resolution-mode': 'import' };
import type { HostDecision } from '../../common/networkDomains';
import { checkHost } from '../../common/networkDomains';
import type { Logger } from '../../../../base/logger';
import { refusedAddress } from './addressPolicy';
import { ownTempDir } from '../../../../base/node/ownTempDir';

/**
 * Tests only: names resolved to a fixed loopback address, for one port, without the loopback refusal (a stand-in
 * registry on 127.0.0.1). Built by tests and by the extension in VS Code's test mode; no setting reaches it.
 */
export type TestHosts = ReadonlyMap<string, { readonly address: string; readonly port: number }>;

export interface NetworkProxyOptions {
  readonly logger: Logger;
  /** The allowed domain patterns (already parsed, see networkDomains.ts), read for every request. */
  readonly allowedDomains: () => readonly string[];
  /** Resolves a name to all its addresses (default: the system resolver, as every other program uses it). */
  readonly resolve?: (host: string) => Promise<readonly LookupAddress[]>;
  readonly testHosts?: TestHosts;
}

/** What the proxy decided for one request, before any connection. */
export type ProxyDecision =
  | { readonly allowed: true; readonly host: string; readonly addresses: readonly LookupAddress[] }
  | { readonly allowed: false; readonly host: string; readonly status: number; readonly message: string };

const SETTING_HINT =
  'Sandboxed commands reach only the domains of `codespace.exec.allowedDomains` (and with `codespace.exec.allowPackageRegistries` the package registries), because `codespace.exec.network` is "domains". ' +
  'The developer can add the name there, in user settings.';

function denialText(d: Extract<HostDecision, { allowed: false }>): string {
  switch (d.reason) {
    case 'ip-literal':
      return `${d.host} is an IP address; only names on the allow-list are reachable, never addresses.`;
    case 'invalid-name':
      return `${JSON.stringify(d.host)} is not a valid host name.`;
    case 'metadata':
      return `${d.host} is a cloud metadata service, which is never reachable from the sandbox.`;
    case 'not-listed':
      return `${d.host} is not on the allow-list.`;
  }
}

const systemResolve = async (host: string): Promise<readonly LookupAddress[]> => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * The way out of the sandbox for `codespace.exec.network` `domains`: an HTTP proxy (plain requests and CONNECT
 * tunnels) on a Unix socket of the extension host, which the sandbox reaches through a relay (netRelay.ts) in its
 * own network namespace. The proxy decides each request: the name must match the allow-list (core), and every
 * address it resolves to must be one the proxy may connect to (addressPolicy.ts); the connection then goes to
 * exactly the addresses checked, so the name cannot resolve differently between the check and the connection.
 * A denial is answered `403` with a text naming the host and the setting, and written to the log.
 *
 * The proxy itself is proxy-chain (Apify, Apache-2.0): maintained, Node >= 20.11 (the extension host runs Node 20
 * in code-server 4.100 and 22 or later in current VS Code), and it lets the caller answer a request with its own
 * status and text and supply the DNS lookup used for the connection. Anthropic's sandbox-runtime needs Node 22.12,
 * http-proxy-3 Node 22, and `proxy` has no hook for the lookup or for a denial's answer.
 */
export class NetworkProxy {
  private server: Server | undefined;
  private starting: Promise<string> | undefined;
  private dir: string | undefined;
  private closed = false;
  private readonly resolve: (host: string) => Promise<readonly LookupAddress[]>;

  constructor(private readonly options: NetworkProxyOptions) {
    this.resolve = options.resolve ?? systemResolve;
  }

  /** The Unix socket the proxy listens on, starting it on first use. */
  socketPath(): Promise<string> {
    if (this.closed) return Promise.reject(new Error('the network proxy is closed'));
    this.starting ??= this.start().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  /** Whether `host:port` may be reached, and at which addresses (exported for tests and the log). */
  async decide(hostname: string, port: number): Promise<ProxyDecision> {
    const d = checkHost(hostname, this.options.allowedDomains());
    if (!d.allowed) return { allowed: false, host: d.host, status: 403, message: denialText(d) };
    const test = this.options.testHosts?.get(d.host);
    if (test && test.port === port) return { allowed: true, host: d.host, addresses: [{ address: test.address, family: test.address.includes(':') ? 6 : 4 }] };
    let addresses: readonly LookupAddress[];
    try {
      addresses = await this.resolve(d.host);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      return { allowed: false, host: d.host, status: 502, message: `${d.host} could not be resolved (${code}).` };
    }
    if (addresses.length === 0) return { allowed: false, host: d.host, status: 502, message: `${d.host} has no address.` };
    for (const a of addresses) {
      const why = refusedAddress(a.address);
      if (why) return { allowed: false, host: d.host, status: 403, message: `${d.host} resolves to ${a.address}, ${why}, which is never reachable from the sandbox.` };
    }
    return { allowed: true, host: d.host, addresses };
  }

  async close(): Promise<void> {
    this.closed = true;
    const server = this.server;
    this.server = undefined;
    if (server) await server.close(true).catch(() => undefined);
    if (this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }

  private async start(): Promise<string> {
    const { Server, RequestError } = await import('proxy-chain');
    // A folder only this user can enter: the socket is the way out of every sandbox, for this user's processes only.
    const dir = ownTempDir('codespace-net-').path;
    const socket = path.join(dir, 'proxy.sock');
    const prepareRequestFunction = async (o: PrepareRequestFunctionOpts): Promise<PrepareRequestFunctionResult> => {
      const what = `${o.isHttp ? 'HTTP' : 'CONNECT'} ${o.hostname}:${o.port}`;
      const d = await this.decide(o.hostname, o.port);
      if (!d.allowed) {
        this.options.logger.warn(`[network] denied ${what}: ${d.message}`);
        const text = d.status === 403 ? `CodeSpace network policy: ${what} denied. ${d.message} ${SETTING_HINT}\n` : `CodeSpace network proxy: ${what} failed. ${d.message}\n`;
        // proxy-chain answers with the error's own status and text only when `error.name === 'RequestError'`, a
        // name the class sets from its own binding; bundled by esbuild that binding is renamed (`_RequestError`)
        // and every denial became `500 Internal error in proxy server` (the in-editor test caught it). So the name
        // is set here, as the class means it.
        throw Object.assign(new RequestError(text, d.status), { name: 'RequestError' });
      }
      this.options.logger.debug(`[network] ${what} -> ${d.addresses.map((a) => a.address).join(', ')}`);
      return { dnsLookup: pinnedLookup(d.addresses) };
    };
    // proxy-chain drops every connection whose socket has no remoteAddress (its guard against nodejs/node#23858,
    // a TCP client gone before the server saw it), and a Unix socket connection never has one. Overriding
    // onConnection and calling the original is the extension point its maintainers point to (apify/proxy-chain
    // PR #176); the tests through the real sandbox fail without it.
    class UnixSocketProxy extends Server {
      override onConnection(socket: Parameters<Server['onConnection']>[0]): void {
        if (!socket.remoteAddress) Object.defineProperty(socket, 'remoteAddress', { value: 'unix-socket', configurable: true });
        super.onConnection(socket);
      }
    }
    const server = new UnixSocketProxy({ port: 0, prepareRequestFunction, verbose: false });
    server.on('requestFailed', ({ error }: { error: Error }) => this.options.logger.warn(`[network] a proxied request failed: ${error.message}`));
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.server.listen(socket, () => {
        server.server.off('error', reject);
        resolve();
      });
    });
    if (this.closed) {
      await server.close(true);
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error('the network proxy is closed');
    }
    this.server = server;
    this.dir = dir;
    this.options.logger.info(`[network] proxy for sandboxed commands listening on ${socket}`);
    return socket;
  }
}

/**
 * A `lookup` for net.connect / http.request that answers with the addresses already checked, never asking DNS
 * again. Node 20 and later call it with `all: true` (address family auto-selection), older code paths without.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): typeof dns.lookup {
  const lookup = (_host: string, options: dns.LookupOptions | number | ((...a: unknown[]) => void), callback?: (...a: unknown[]) => void): void => {
    const cb = (typeof options === 'function' ? options : callback) as (err: Error | null, address?: string | LookupAddress[], family?: number) => void;
    const opts: dns.LookupOptions = typeof options === 'object' ? options : typeof options === 'number' ? { family: options } : {};
    const family = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : opts.family;
    const fit = addresses.filter((a) => !family || a.family === family);
    if (fit.length === 0) {
      process.nextTick(() => cb(Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' })));
      return;
    }
    const first = fit[0] as LookupAddress;
    process.nextTick(() => (opts.all ? cb(null, fit.map((a) => ({ ...a }))) : cb(null, first.address, first.family)));
  };
  return lookup as unknown as typeof dns.lookup;
}
