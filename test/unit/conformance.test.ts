import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { startBearerProxy } from './helpers/bearerProxy';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';
import { makeTree, removeTree } from './helpers/workspaceFixture';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, its `server` command) against the real HTTP host.
 * Its other server scenarios call fixtures of the SDKs' reference server by name (a tool `test_tool_with_progress`,
 * a prompt `test_prompt_with_arguments`, a resource `test://template/123/data`, subscriptions, sampling, ...): they
 * test features this server does not offer under those names, and README "MCP features not offered" says why.
 */
export const CONFORMANCE_SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'server-sse-multiple-streams'];

const CLI = path.join('node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const COMPAT = path.join('test', 'conformance', 'nodeCompat.mjs');

describe('MCP conformance suite against the HTTP endpoint', function () {
  this.timeout(180_000);
  let base: string;
  let host: RunningHost;
  let proxy: { port: number; close(): Promise<void> };

  before(async () => {
    base = await makeTree({ 'demo/a.txt': 'hello\n' }, 'codespace-conformance-');
    host = await startHost(path.join(base, 'demo'), 0, { contentSearch: new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit' }) });
    // The CLI connects with a bare URL: this proxy adds the endpoint's bearer token (the endpoint's other guards apply).
    proxy = await startBearerProxy(host.port, host.token.value);
  });
  after(async () => {
    await proxy.close();
    await host.stop();
    await removeTree(base);
  });

  for (const scenario of CONFORMANCE_SCENARIOS) {
    it(`scenario ${scenario} passes`, async () => {
      // Asynchronous on purpose: the endpoint answering the CLI runs in this process.
      const run = await promisify(execFile)(process.execPath, ['--import', `./${COMPAT.split(path.sep).join('/')}`, CLI, 'server', '--url', `http://127.0.0.1:${proxy.port}/mcp`, '--scenario', scenario], {
        encoding: 'utf8',
        timeout: 120_000,
        maxBuffer: 16 << 20,
      }).catch((err: { stdout?: string; stderr?: string; code?: number }) => ({ stdout: `${err.stdout ?? ''}\n${err.stderr ?? ''}\n(exit ${String(err.code)})` }));
      const out = run.stdout.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
      const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
      assert.ok(summary, `no summary in the CLI's output:\n${out.slice(-2000)}`);
      assert.equal(summary[3], '0', out.slice(-3000));
      assert.ok(!/FAILURE/.test(out), out.slice(-3000));
    });
  }
});
