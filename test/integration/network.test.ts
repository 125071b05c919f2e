import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { StandIns } from '../unit/helpers/standInRegistry';
import { HTTP_NAME, PROXY_CLIENT, TLS_NAME, startStandIns } from '../unit/helpers/standInRegistry';
import { EXTENSION_ID, call, connectToFirstFolder, folder } from './helpers';

interface NetworkTestApi {
  endpointUrl(): string | undefined;
  networkTestHostsForTests?: Map<string, { address: string; port: number }>;
}

/**
 * `codespace.exec.network` `domains` as users set it (user settings), with the extension's own proxy and the real
 * sandbox: an allowed name is reached over HTTP and through a CONNECT tunnel (stand-in registries on 127.0.0.1,
 * mapped to their names by the test-only map the extension exposes in VS Code's test mode), a denied name and a
 * raw IP are refused with 403, and the MCP endpoint of this very window stays unreachable.
 */
describe('Network by domain inside VS Code', () => {
  let client: Client;
  let wsId: string;
  let standIns: StandIns;
  let api: NetworkTestApi;
  const config = () => vscode.workspace.getConfiguration('codespace');
  const files = ['net-client.js', 'ca.pem'];
  const root = () => folder(0).uri.fsPath;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    api = await (vscode.extensions.getExtension<NetworkTestApi>(EXTENSION_ID) as vscode.Extension<NetworkTestApi>).activate();
    assert.ok(api.networkTestHostsForTests, 'the test-only name map exists in VS Code test mode');
    standIns = await startStandIns();
    for (const [name, target] of standIns.testHosts()) api.networkTestHostsForTests.set(name, target);
    fs.writeFileSync(path.join(root(), 'net-client.js'), PROXY_CLIENT);
    fs.writeFileSync(path.join(root(), 'ca.pem'), standIns.caPem);
    await config().update('exec.allowedDomains', [HTTP_NAME, `*.${HTTP_NAME}`, 'localhost'], vscode.ConfigurationTarget.Global);
    await config().update('exec.network', 'domains', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await config().update('exec.network', undefined, vscode.ConfigurationTarget.Global);
    await config().update('exec.allowedDomains', undefined, vscode.ConfigurationTarget.Global);
    api?.networkTestHostsForTests?.clear();
    for (const f of files) fs.rmSync(path.join(root(), f), { force: true });
    await standIns?.close();
    await client?.close();
  });

  async function client_(mode: 'http' | 'https' | 'direct', target: string, p = '/'): Promise<string> {
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', {
      workspace_id: wsId,
      command: [process.execPath, 'net-client.js', mode, target, p],
      occupancy: 'shared',
    });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 120; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) return out.replace(/\r\n/g, '\n').trim();
    }
    throw new Error(`no end of output: ${out}`);
  }

  it('workspace_info reports the domains mode and the allow-list from user settings', async () => {
    const info = await call<{ execution: { network: string; allowed_domains?: string[]; isolation: { command_sandbox: { enabled: boolean } } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.execution.isolation.command_sandbox.enabled, true, JSON.stringify(info.execution));
    assert.equal(info.execution.network, 'domains');
    assert.deepEqual(info.execution.allowed_domains, [HTTP_NAME, `*.${HTTP_NAME}`, 'localhost']);
  });

  it('the package registry preset joins the list only when turned on, and neither setting can come from the workspace', async () => {
    const domains = async (): Promise<string[] | undefined> =>
      (await call<{ execution: { allowed_domains?: string[] } }>(client, 'workspace_info', { workspace_id: wsId })).execution.allowed_domains;
    assert.ok(!(await domains())?.includes('registry.npmjs.org'));
    await config().update('exec.allowPackageRegistries', true, vscode.ConfigurationTarget.Global);
    try {
      const withPreset = await domains();
      for (const d of ['registry.npmjs.org', 'pypi.org', 'files.pythonhosted.org', 'static.crates.io', 'proxy.golang.org', 'repo1.maven.org', 'rubygems.org', HTTP_NAME]) {
        assert.ok(withPreset?.includes(d), `${d} in ${JSON.stringify(withPreset)}`);
      }
    } finally {
      await config().update('exec.allowPackageRegistries', undefined, vscode.ConfigurationTarget.Global);
    }
    for (const [k, v] of [['exec.allowedDomains', ['evil.example']], ['exec.allowPackageRegistries', true], ['exec.network', 'allow']] as const) {
      await assert.rejects(Promise.resolve(config().update(k, v, vscode.ConfigurationTarget.Workspace)), /only into User settings/, k);
    }
  });

  it('an allowed name is reached through the proxy, over HTTP and through a CONNECT tunnel with TLS', async () => {
    assert.equal(await client_('http', `${HTTP_NAME}:${standIns.httpPort}`, '/left-pad'), `STATUS 200 registry: GET /left-pad host=${HTTP_NAME}:${standIns.httpPort}`);
    assert.equal(await client_('https', `${TLS_NAME}:${standIns.tlsPort}`, '/simple/'), 'TLS true secure registry: /simple/');
  });

  it('a denied name and a raw IP are refused with 403 naming the host and the setting', async () => {
    const denied = await client_('https', 'denied.test:443');
    assert.match(denied, /^STATUS 403 CodeSpace network policy: CONNECT denied\.test:443 denied\. denied\.test is not on the allow-list\..*codespace\.exec\.allowedDomains/);
    const raw = await client_('http', `127.0.0.1:${standIns.httpPort}`);
    assert.match(raw, /^STATUS 403 .*127\.0\.0\.1 is an IP address/);
  });

  it("this window's MCP endpoint stays unreachable from inside, through the proxy or around it", async () => {
    const port = new URL(api.endpointUrl() as string).port;
    assert.match(await client_('https', `localhost:${port}`), /^STATUS 403 .*localhost resolves to (127\.0\.0\.1|::1), loopback/);
    assert.match(await client_('http', `localhost:${port}`, '/mcp'), /^STATUS 403 /);
    assert.equal(await client_('direct', `127.0.0.1:${port}`), 'ERROR ECONNREFUSED');
  });
});
