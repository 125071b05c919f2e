import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../../src/base/logger';
import type { ServerControl, ServerState } from '../../src/kernel/serverControl';
import { McpHttpHost } from '../../src/mcp/httpHost';
import { secretsEqual } from '../../src/base/node/httpRequest';
import { WindowPublisher } from '../../src/features/connect/node/windowPublisher';
import { TokenStore, VERIFIER_SUFFIX, type VerifierStore } from '../../src/kernel/vscode/tokenStore';

type SecretStorage = ConstructorParameters<typeof TokenStore>[0];

/**
 * SecretStorage in memory, answering after `delayMs` (the keychain's round trip). Like VS Code's, it tells every
 * store subscribed (every window of the profile) of each change, after the change.
 */
function memorySecrets(delayMs = 0): SecretStorage & { map: Map<string, string> } {
  const map = new Map<string, string>();
  const subscribers = new Set<(e: { key: string }) => void>();
  const later = <T>(v: () => T): Promise<T> => new Promise((r) => setTimeout(() => r(v()), delayMs));
  const changed = (key: string): void => void setTimeout(() => subscribers.forEach((l) => l({ key })), delayMs);
  return {
    map,
    get: (k: string) => later(() => map.get(k)),
    store: (k: string, v: string) =>
      later(() => {
        map.set(k, v);
        changed(k);
      }),
    delete: (k: string) => later(() => void map.delete(k)),
    keys: () => later(() => [...map.keys()]),
    onDidChange: (l: (e: { key: string }) => void) => {
      subscribers.add(l);
      return { dispose: () => subscribers.delete(l) };
    },
  } as unknown as SecretStorage & { map: Map<string, string> };
}

const settle = (ms = 50): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The global state (a Memento) in memory. */
function memoryState(): VerifierStore & { map: Map<string, unknown> } {
  const map = new Map<string, unknown>();
  return {
    map,
    get: ((k: string) => map.get(k)) as VerifierStore['get'],
    update: async (k: string, v: unknown) => void map.set(k, v),
  };
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const KEY = 'codespace.mcpToken';

describe('token verifiers: checking tokens before the keychain answers', () => {
  it('keeps the SHA-256 of the token in the global state, never the token', async () => {
    const secrets = memorySecrets();
    const state = memoryState();
    const token = await new TokenStore(secrets, undefined, KEY, state).load();
    assert.equal(state.map.get(KEY + VERIFIER_SUFFIX), sha256(token));
    assert.ok(![...state.map.values()].some((v) => String(v).includes(token)), 'the token itself is not in the global state');
  });

  it('a later activation checks tokens against the verifier until the token loads; then against the token', async () => {
    const secrets = memorySecrets(30);
    const state = memoryState();
    const token = await new TokenStore(secrets, undefined, KEY, state).load();
    const next = new TokenStore(secrets, undefined, KEY, state);
    const heard: string[] = [];
    next.onDidChange((t, previous) => heard.push(`${t} after ${String(previous)}`));
    const before = next.expected();
    assert.ok(before !== undefined && typeof before !== 'string', 'before the load: the verifier only');
    assert.equal(next.get(), undefined);
    assert.equal(secretsEqual(token, before), true);
    assert.equal(secretsEqual(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), before), false);
    assert.equal(secretsEqual('', before), false);
    // The verifier itself is no token: sent as one (hex or base64url), it is refused.
    const digest = createHash('sha256').update(token, 'utf8').digest();
    assert.equal(secretsEqual(digest.toString('hex'), before), false);
    assert.equal(secretsEqual(digest.toString('base64url'), before), false);
    assert.equal(await next.loaded(), undefined, 'not loading yet: nothing to wait for');
    const loading = next.load();
    const handedOut = next.loaded(); // a command run meanwhile (Copy Connection Settings) waits for the token
    await loading;
    assert.equal(await handedOut, token);
    assert.equal(next.expected(), token);
    assert.deepEqual(heard, [`${token} after undefined`], 'listeners hear of the token when it loads, replacing none');
  });

  it('a rotation writes the new verifier before it returns: the old token opens no later window', async () => {
    const secrets = memorySecrets();
    const state = memoryState();
    const first = new TokenStore(secrets, undefined, KEY, state);
    const old = await first.load();
    const rotated = await first.rotate();
    const later = new TokenStore(secrets, undefined, KEY, state);
    const expected = later.expected();
    assert.ok(expected !== undefined);
    assert.equal(secretsEqual(old, expected), false);
    assert.equal(secretsEqual(rotated, expected), true);
  });

  it('a rotation in another window replaces the token here at once; listeners hear the token it replaced', async () => {
    const secrets = memorySecrets(5);
    const state = memoryState();
    const here = new TokenStore(secrets, undefined, KEY, state);
    const there = new TokenStore(secrets, undefined, KEY, state);
    const old = await here.load();
    assert.equal(await there.load(), old);
    const heardHere: [string, string | undefined][] = [];
    const heardThere: [string, string | undefined][] = [];
    here.onDidChange((t, previous) => heardHere.push([t, previous]));
    there.onDidChange((t, previous) => heardThere.push([t, previous]));
    const rotated = await there.rotate();
    await settle();
    assert.equal(here.get(), rotated);
    const expected = here.expected();
    assert.ok(expected !== undefined);
    assert.equal(secretsEqual(old, expected), false, 'the old token is refused here too');
    assert.deepEqual(heardHere, [[rotated, old]]);
    assert.deepEqual(heardThere, [[rotated, old]], 'the rotating store hears its own rotation once');
    // Disposed, a store no longer follows the keychain.
    here.dispose();
    await there.rotate();
    await settle();
    assert.equal(here.get(), rotated);
    there.dispose();
  });

  it('a verifier that no longer matches the keychain is replaced when the token loads', async () => {
    const secrets = memorySecrets();
    const state = memoryState();
    state.map.set(KEY + VERIFIER_SUFFIX, sha256('a token from before the keychain was reset, 43 chars'));
    secrets.map.set(KEY, 'the-token-in-the-keychain-now-xxxxxxxxxxxxxxxxx');
    await new TokenStore(secrets, undefined, KEY, state).load();
    await new Promise((r) => setImmediate(r));
    assert.equal(state.map.get(KEY + VERIFIER_SUFFIX), sha256('the-token-in-the-keychain-now-xxxxxxxxxxxxxxxxx'));
  });

  it('no verifier, or a malformed one: nothing is accepted before the token loads', async () => {
    for (const stored of [undefined, 'not hex', 'ab'.repeat(31), 42, { sha256: 'x' }]) {
      const state = memoryState();
      if (stored !== undefined) state.map.set(KEY + VERIFIER_SUFFIX, stored);
      assert.equal(new TokenStore(memorySecrets(), undefined, KEY, state).expected(), undefined, String(stored));
    }
    assert.equal(new TokenStore(memorySecrets()).expected(), undefined, 'no verifier store');
  });

  it('a verifier store that fails on rotation: the token still rotates and listeners hear of it; the failure is reported', async () => {
    const failures: unknown[] = [];
    const state: VerifierStore = { get: (() => undefined) as VerifierStore['get'], update: async () => Promise.reject(new Error('storage full')) };
    const tokens = new TokenStore(memorySecrets(), (err) => failures.push(err), KEY, state);
    const heard: string[] = [];
    tokens.onDidChange((t) => heard.push(t));
    const t = await tokens.rotate();
    assert.deepEqual(heard, [t]);
    assert.match(String(failures[0]), /storage full/);
  });

  it('the HTTP endpoint answers a valid token while only the verifier is known, and refuses others', async () => {
    const secrets = memorySecrets(); // never asked: the token is not loaded in this test
    const state = memoryState();
    const token = 'a'.repeat(43);
    state.map.set(KEY + VERIFIER_SUFFIX, sha256(token));
    const tokens = new TokenStore(secrets, undefined, KEY, state);
    const host = new McpHttpHost({ createServer: () => { throw new Error('unused'); }, token: () => tokens.expected(), logger: silentLogger });
    const port = await host.start(0);
    try {
      const get = (bearer: string) => fetch(`http://127.0.0.1:${port}/mcp`, { method: 'GET', headers: { authorization: `Bearer ${bearer}` } });
      // Past the token check, a GET without a session is a 400; a token that fails the check is a 401.
      assert.equal((await get(token)).status, 400);
      assert.equal((await get('b'.repeat(43))).status, 401);
      assert.equal((await get(token + 'a')).status, 401);
    } finally {
      await host.stop();
    }
  });

  it('the discovery record waits for its token file while the token loads', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cs-verifier-'));
    let token: string | undefined;
    const state: ServerState = { kind: 'running', port: 4321, fellBack: false };
    const server = { state, sessionCount: 0, onDidChangeState: () => ({ dispose() {} }) } as unknown as ServerControl;
    const publisher = new WindowPublisher({ server, folders: () => ['/w'], token: () => token, publishToken: () => true, version: 't', logger: silentLogger, dir });
    try {
      publisher.refresh();
      assert.deepEqual(fs.readdirSync(dir), [], 'no record without its token');
      token = 'c'.repeat(43);
      publisher.refresh();
      const files = fs.readdirSync(dir).sort();
      assert.equal(files.length, 2);
      assert.equal(fs.readFileSync(path.join(dir, files.find((f) => f.endsWith('.token')) as string), 'utf8').trim(), token);
    } finally {
      publisher.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
