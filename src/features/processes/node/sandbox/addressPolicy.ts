import { isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses the network proxy never connects to, whatever name led there: this machine (loopback, where the MCP
 * endpoint listens), the unspecified address (which reaches this machine too), link-local networks (home of the
 * cloud metadata services) and the metadata services' other well-known addresses, multicast and broadcast.
 * Private networks (10/8, 192.168/16, fc00::/7) stay reachable: an allowed name of an internal package mirror
 * usually lives there, and the allow-list of names is what admits it.
 */
const IPV4_REFUSED: readonly (readonly [string, number, string])[] = [
  ['0.0.0.0', 8, 'the unspecified address (this machine)'],
  ['127.0.0.0', 8, 'loopback (this machine)'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['100.100.100.200', 32, 'a cloud metadata service'],
  ['168.63.129.16', 32, 'a cloud metadata service'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
];

const IPV6_REFUSED: readonly (readonly [string, number, string])[] = [
  ['::', 128, 'the unspecified address (this machine)'],
  ['::1', 128, 'loopback (this machine)'],
  ['::', 96, 'an IPv4-compatible address'],
  ['fe80::', 10, 'link-local'],
  ['fd00:ec2::254', 128, 'a cloud metadata service'],
  ['ff00::', 8, 'multicast'],
];

function ipv4Bits(a: string): bigint {
  return a.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** The 128 bits of an IPv6 address (any valid textual form, an embedded dotted IPv4 tail included). */
function ipv6Bits(a: string): bigint {
  let text = a.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = ipv4Bits(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function inPrefix(bits: bigint, width: number, base: bigint, prefix: number): boolean {
  const shift = BigInt(width - prefix);
  return bits >> shift === base >> shift;
}

function refusedV4(bits: bigint): string | undefined {
  for (const [base, prefix, why] of IPV4_REFUSED) if (inPrefix(bits, 32, ipv4Bits(base), prefix)) return why;
  return undefined;
}

/**
 * Why the proxy must not connect to `address`, or undefined when it may. Anything that is not an IP address is
 * refused too. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as the IPv4 address it reaches.
 */
export function refusedAddress(address: string): string | undefined {
  if (isIPv4(address)) return refusedV4(ipv4Bits(address));
  if (!isIPv6(address)) return 'not an IP address';
  const bits = ipv6Bits(address);
  if (bits >> 32n === 0xffffn) return refusedV4(bits & 0xffffffffn);
  for (const [base, prefix, why] of IPV6_REFUSED) if (inPrefix(bits, 128, ipv6Bits(base), prefix)) return why;
  return undefined;
}
