/**
 * Stands in for the `socks` and `socks-proxy-agent` packages in the bundle (esbuild.mjs aliases both here).
 * proxy-chain imports them for chaining to an upstream SOCKS proxy, which the network proxy never asks for: it
 * connects directly, so these are never reached, and say so if they ever are.
 */
function unavailable(): never {
  throw new Error('SOCKS upstream proxies are not part of this build (the network proxy connects directly).');
}

export class SocksClient {
  static createConnection(): never {
    return unavailable();
  }
}

export class SocksProxyAgent {
  constructor() {
    unavailable();
  }
}
