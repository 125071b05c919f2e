/**
 * Which host names a sandboxed command may reach through the network proxy (`codespace.exec.network` `domains`).
 * Pure: the proxy (src/features/processes/node/sandbox/networkProxy.ts) asks here first, then resolves the name and checks the
 * addresses it would connect to.
 */

/**
 * `codespace.exec.allowPackageRegistries`: the public package registries, off by default. Only the hosts that
 * serve the index and the packages themselves; not source forges (a forge is also a place to upload to).
 */
export const PACKAGE_REGISTRY_DOMAINS: readonly string[] = [
  // npm (and Yarn classic, which uses npm's registry under its own name)
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  // PyPI: the index and the files
  'pypi.org',
  'files.pythonhosted.org',
  // crates.io: the sparse index and the crates
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  // Go module proxy and checksum database
  'proxy.golang.org',
  'sum.golang.org',
  // Maven Central
  'repo.maven.apache.org',
  'repo1.maven.org',
  // RubyGems
  'rubygems.org',
  'index.rubygems.org',
  // NuGet and Packagist
  'api.nuget.org',
  'repo.packagist.org',
];

/** Names of cloud metadata services: refused even when a pattern would match them. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const NAME = new RegExp(`^(?:${LABEL}\\.)*${LABEL}$`);

/** What a denial is about, for the log and the proxy's answer. */
export type HostRefusal = 'ip-literal' | 'invalid-name' | 'metadata' | 'not-listed';

export type HostDecision = { readonly allowed: true; readonly host: string; readonly pattern: string } | { readonly allowed: false; readonly host: string; readonly reason: HostRefusal };

/** Lower case, without one trailing dot (`Example.COM.` is `example.com`). */
export function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

/**
 * True for anything an address parser could take as an IP address rather than a name: IPv6 (colons, brackets)
 * and every dotted form whose last part is a number (`127.1`, `0x7f.1`, `2130706433`). No top-level domain is
 * numeric, so no name is lost.
 */
export function isIpLiteral(host: string): boolean {
  const h = normalizeHost(host);
  if (h.includes(':') || h.startsWith('[')) return true;
  const last = h.split('.').pop() ?? '';
  return /^(?:0x[0-9a-f]*|[0-9]+)$/.test(last);
}

/**
 * One allow-list entry, normalized: `example.com` (that name only) or `*.example.com` (any name below it, not
 * `example.com` itself). Returns undefined for anything else (URLs, ports, IP addresses, a bare `*`, `*.com`-like
 * entries with a single label after the wildcard).
 */
export function parseDomainPattern(entry: string): string | undefined {
  if (typeof entry !== 'string') return undefined;
  const p = normalizeHost(entry);
  const wildcard = p.startsWith('*.');
  const name = wildcard ? p.slice(2) : p;
  if (name.length === 0 || name.length > 253 || !NAME.test(name) || isIpLiteral(name)) return undefined;
  if (wildcard && !name.includes('.')) return undefined;
  return p;
}

/** The valid entries (normalized, without duplicates) and the ones that are not patterns. */
export function parseAllowList(entries: readonly string[]): { readonly patterns: string[]; readonly invalid: string[] } {
  const patterns: string[] = [];
  const invalid: string[] = [];
  for (const e of entries) {
    const p = parseDomainPattern(e);
    if (p === undefined) invalid.push(String(e));
    else if (!patterns.includes(p)) patterns.push(p);
  }
  return { patterns, invalid };
}

function matches(host: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return host === pattern;
}

/**
 * May a sandboxed command connect to `host`? IP literals never (the allow-list is of names, and an address
 * bypasses it); malformed names and cloud metadata names never; otherwise only when a pattern matches.
 */
export function checkHost(host: string, patterns: readonly string[]): HostDecision {
  const h = normalizeHost(host);
  if (isIpLiteral(h)) return { allowed: false, host: h, reason: 'ip-literal' };
  if (h.length === 0 || h.length > 253 || !NAME.test(h)) return { allowed: false, host: h, reason: 'invalid-name' };
  if (METADATA_NAMES.has(h)) return { allowed: false, host: h, reason: 'metadata' };
  const pattern = patterns.find((p) => matches(h, p));
  return pattern === undefined ? { allowed: false, host: h, reason: 'not-listed' } : { allowed: true, host: h, pattern };
}
