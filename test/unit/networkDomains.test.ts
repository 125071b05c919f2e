import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import type { LookupAddress } from 'node:dns';
import { PACKAGE_REGISTRY_DOMAINS, checkHost, isIpLiteral, parseAllowList, parseDomainPattern } from '../../src/features/processes/common/networkDomains';
import { refusedAddress } from '../../src/features/processes/node/sandbox/addressPolicy';
import { NetworkProxy, pinnedLookup } from '../../src/features/processes/node/sandbox/networkProxy';
import { InMemoryLogger } from '../../src/base/logger';

describe('network allow-list (pure)', () => {
  it('parses names and *.name patterns, normalized; refuses URLs, ports, addresses, bare wildcards', () => {
    assert.equal(parseDomainPattern('Registry.NPMJS.org.'), 'registry.npmjs.org');
    assert.equal(parseDomainPattern(' *.Example.com '), '*.example.com');
    for (const bad of ['', '*', '*.', '*.com', 'https://example.com', 'example.com:443', 'example.com/x', '127.0.0.1', '10.1', '::1', '[::1]', 'a..b', '-a.com', 'a b.com', 'ex*.com', '*.*.com', 'a.*.com', '0x7f.1']) {
      assert.equal(parseDomainPattern(bad), undefined, bad);
    }
    assert.deepEqual(parseAllowList(['a.com', 'A.com', 'x/y', '*.b.org']), { patterns: ['a.com', '*.b.org'], invalid: ['x/y'] });
  });

  it('an exact entry admits that name only; *.name admits names below it, not the name itself', () => {
    const p = ['registry.test', '*.example.com'];
    assert.equal(checkHost('registry.test', p).allowed, true);
    assert.equal(checkHost('REGISTRY.test.', p).allowed, true);
    assert.equal(checkHost('sub.registry.test', p).allowed, false);
    assert.equal(checkHost('a.example.com', p).allowed, true);
    assert.equal(checkHost('a.b.example.com', p).allowed, true);
    assert.equal(checkHost('example.com', p).allowed, false);
    assert.equal(checkHost('evilexample.com', p).allowed, false);
    assert.equal(checkHost('example.com.evil.org', p).allowed, false);
    assert.deepEqual(checkHost('nope.test', p), { allowed: false, host: 'nope.test', reason: 'not-listed' });
  });

  it('IP literals are refused in every spelling, even when a pattern would match', () => {
    for (const ip of ['127.0.0.1', '[::1]', '::1', '0x7f.1', '2130706433', '127.1', '10.0.0.1', '[fe80::1%25eth0]', '1.2.3.4.']) {
      assert.equal(isIpLiteral(ip), true, ip);
      assert.deepEqual(checkHost(ip, ['*.1', '127.0.0.1']).allowed, false, ip);
    }
    assert.deepEqual(checkHost('127.0.0.1', ['registry.test']), { allowed: false, host: '127.0.0.1', reason: 'ip-literal' });
    assert.equal(isIpLiteral('1password.com'), false);
  });

  it('metadata names and malformed names are refused whatever the list says', () => {
    assert.deepEqual(checkHost('metadata.google.internal', ['*.google.internal', 'metadata.google.internal']), { allowed: false, host: 'metadata.google.internal', reason: 'metadata' });
    assert.equal(checkHost('a%2fb.test', ['*.test']).allowed, false);
    assert.equal(checkHost('', ['*.test']).allowed, false);
  });

  it('the package registry preset is a list of valid exact names', () => {
    const { patterns, invalid } = parseAllowList(PACKAGE_REGISTRY_DOMAINS);
    assert.deepEqual(invalid, []);
    assert.equal(patterns.length, PACKAGE_REGISTRY_DOMAINS.length);
    for (const p of ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'static.crates.io', 'proxy.golang.org', 'repo1.maven.org', 'rubygems.org']) assert.ok(patterns.includes(p), p);
    assert.ok(patterns.every((p) => !p.startsWith('*')));
  });
});

describe('addresses the network proxy refuses', () => {
  it('loopback, unspecified, link-local, metadata, multicast, IPv4-mapped forms of those', () => {
    for (const a of ['127.0.0.1', '127.255.0.3', '0.0.0.0', '169.254.169.254', '169.254.1.1', '100.100.100.200', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'febf::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '::127.0.0.1', '0:0:0:0:0:0:0:1']) {
      assert.ok(refusedAddress(a), a);
    }
    assert.match(refusedAddress('127.0.0.1') ?? '', /loopback/);
    assert.match(refusedAddress('169.254.169.254') ?? '', /link-local/);
    assert.equal(refusedAddress('not-an-ip'), 'not an IP address');
  });

  it('public and private unicast addresses pass (private mirrors are admitted by name)', () => {
    for (const a of ['93.184.216.34', '10.0.0.1', '192.168.1.1', '172.16.0.1', '100.64.0.1', '2606:4700::1111', 'fd00::1', 'fec0::1', '::ffff:93.184.216.34', '128.0.0.1']) {
      assert.equal(refusedAddress(a), undefined, a);
    }
  });
});

describe('network proxy decisions (resolver)', () => {
  const PUBLIC: LookupAddress = { address: '93.184.216.34', family: 4 };
  function proxy(answers: Record<string, readonly LookupAddress[] | Error>, testHosts?: Map<string, { address: string; port: number }>): { proxy: NetworkProxy; calls: string[] } {
    const calls: string[] = [];
    const resolve = async (host: string): Promise<readonly LookupAddress[]> => {
      calls.push(host);
      const a = answers[host];
      if (a === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      if (a instanceof Error) throw a;
      return a;
    };
    return { proxy: new NetworkProxy({ logger: new InMemoryLogger(), allowedDomains: () => ['*.test', 'localhost', 'metadata.google.internal'], resolve, ...(testHosts ? { testHosts } : {}) }), calls };
  }

  it('refuses a name that resolves to loopback, link-local, metadata or unspecified addresses (any of them)', async () => {
    const { proxy: p } = proxy({
      'loop.test': [{ address: '127.0.0.1', family: 4 }],
      'meta.test': [{ address: '169.254.169.254', family: 4 }],
      'meta6.test': [{ address: 'fd00:ec2::254', family: 6 }],
      'll.test': [{ address: 'fe80::1', family: 6 }],
      'zero.test': [{ address: '0.0.0.0', family: 4 }],
      'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
      'mixed.test': [PUBLIC, { address: '::1', family: 6 }],
      localhost: [{ address: '127.0.0.1', family: 4 }],
    });
    for (const host of ['loop.test', 'meta.test', 'meta6.test', 'll.test', 'zero.test', 'mapped.test', 'mixed.test', 'localhost']) {
      const d = await p.decide(host, 443);
      assert.equal(d.allowed, false, host);
      assert.equal(!d.allowed && d.status, 403, host);
      assert.match(!d.allowed ? d.message : '', /never reachable/, host);
    }
  });

  it('admits a listed name with public addresses and returns exactly those; unlisted names and IPs are not resolved', async () => {
    const { proxy: p, calls } = proxy({ 'pkg.test': [PUBLIC] });
    assert.deepEqual(await p.decide('pkg.test', 443), { allowed: true, host: 'pkg.test', addresses: [PUBLIC] });
    assert.equal((await p.decide('other.example', 443)).allowed, false);
    assert.equal((await p.decide('127.0.0.1', 443)).allowed, false);
    assert.equal((await p.decide('metadata.google.internal', 80)).allowed, false);
    assert.deepEqual(calls, ['pkg.test']);
    const unresolved = await p.decide('gone.test', 443);
    assert.equal(!unresolved.allowed && unresolved.status, 502);
  });

  it('a test host is admitted on loopback for its own port only', async () => {
    const { proxy: p } = proxy({}, new Map([['registry.test', { address: '127.0.0.1', port: 4873 }]]));
    assert.equal((await p.decide('registry.test', 4873)).allowed, true);
    const other = await p.decide('registry.test', 4874);
    assert.equal(other.allowed, false, 'another port of the same name goes through the resolver and its refusals');
  });

  it('the connection uses the checked addresses only, whatever DNS would say now (no rebinding)', async () => {
    const lookup = pinnedLookup([PUBLIC, { address: '2606:4700::1111', family: 6 }]);
    const one = await new Promise<[string, number]>((resolve, reject) => lookup('pkg.test', {}, (err, a, f) => (err ? reject(err) : resolve([a as string, f as number]))));
    assert.deepEqual(one, ['93.184.216.34', 4]);
    const all = await new Promise<LookupAddress[]>((resolve, reject) => lookup('pkg.test', { all: true }, (err, a) => (err ? reject(err) : resolve(a as unknown as LookupAddress[]))));
    assert.deepEqual(all, [PUBLIC, { address: '2606:4700::1111', family: 6 }]);
    const v6 = await new Promise<string>((resolve, reject) => lookup('pkg.test', { family: 6 }, (err, a) => (err ? reject(err) : resolve(a as string))));
    assert.equal(v6, '2606:4700::1111');
    // net.connect calls the lookup it is given, nothing else: a connection "to" the name goes to the pinned address.
    const server = net.createServer((s) => s.end('pinned\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const got = await new Promise<string>((resolve, reject) => {
        const s = net.connect({ host: 'name.that.does.not.resolve.invalid', port, lookup: pinnedLookup([{ address: '127.0.0.1', family: 4 }]) });
        let data = '';
        s.setEncoding('utf8').on('data', (d: string) => (data += d)).on('end', () => resolve(data)).on('error', reject);
      });
      assert.equal(got, 'pinned\n');
    } finally {
      server.close();
    }
  });
});
