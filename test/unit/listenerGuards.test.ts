import * as assert from 'node:assert/strict';
import type { Logger } from '../../src/base/logger';
import { silentLogger } from '../../src/base/logger';
import type { ServerState } from '../../src/kernel/serverControl';
import { McpHttpHost } from '../../src/mcp/httpHost';
import { TokenStore } from '../../src/kernel/vscode/tokenStore';

type SecretStorage = ConstructorParameters<typeof TokenStore>[0];

/** SecretStorage in memory: the only part of the vscode API TokenStore uses. */
function memorySecrets(): SecretStorage {
  const m = new Map<string, string>();
  return {
    get: async (k: string) => m.get(k),
    store: async (k: string, v: string) => void m.set(k, v),
    delete: async (k: string) => void m.delete(k),
    keys: async () => [...m.keys()],
    onDidChange: () => ({ dispose: () => undefined }),
  } as unknown as SecretStorage;
}

describe('listener loops survive a throwing listener', () => {
  it('McpHttpHost: start and stop complete, later listeners hear every state, the failure is logged', async () => {
    const errors: string[] = [];
    const logger: Logger = { ...silentLogger, error: (m: string | Error) => void errors.push(String(m)) };
    const host = new McpHttpHost({ createServer: () => { throw new Error('unused'); }, token: () => 'x'.repeat(43), logger });
    const seen: ServerState['kind'][] = [];
    host.onDidChangeState(() => {
      throw new Error('listener bug');
    });
    host.onDidChangeState((s) => seen.push(s.kind));
    const port = await host.start(0);
    assert.ok(port > 0);
    assert.equal(host.state.kind, 'running');
    await host.stop();
    assert.deepEqual(seen, ['starting', 'running', 'stopped']);
    assert.equal(errors.filter((e) => /state listener failed/.test(e)).length, 3);
  });

  it('TokenStore: rotation stores the new token and tells every listener; the failure is reported, not thrown', async () => {
    const secrets = memorySecrets();
    const failures: unknown[] = [];
    const tokens = new TokenStore(secrets, (err) => failures.push(err));
    const first = await tokens.load();
    const heard: string[] = [];
    tokens.onDidChange(() => {
      throw new Error('listener bug');
    });
    tokens.onDidChange((t) => heard.push(t));
    const next = await tokens.rotate();
    assert.notEqual(next, first);
    assert.equal(tokens.get(), next);
    assert.equal(await secrets.get('codespace.mcpToken'), next);
    assert.deepEqual(heard, [next]);
    assert.equal(failures.length, 1);
    assert.match(String(failures[0]), /listener bug/);
  });
});
