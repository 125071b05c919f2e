import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import * as v1 from '@modelcontextprotocol/sdk/types.js';
import * as v2 from '@modelcontextprotocol/server';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

type Check = (value: unknown) => boolean;
interface Checks {
  readonly v1Result: Check;
  readonly v1Error: Check;
  readonly v2Result: Check;
  readonly v2Error: Check;
  readonly v1Task: Check;
  readonly v2Task: Check;
}
interface PluginModule {
  sdkMessageChecks(): esbuild.Plugin;
  withKeyChecks(source: string): { code: string; count: number };
}

/** Every kind of message a server receives, and what is no message at all. */
function corpus(): unknown[] {
  const values: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read', arguments: { path: 'a.ts' } } },
    { jsonrpc: '2.0', id: 'x', method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
    { name: 'read', arguments: { path: 'a.ts' } },
    { name: 'read', task: { ttl: 1000 }, _meta: { progressToken: 3 } },
    { task: { ttl: 'soon' } },
    { _meta: 'x' },
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 'a', result: { content: [], _meta: { x: 1 } } },
    { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'bad' } },
    { jsonrpc: '2.0', error: { code: -32700, message: 'parse', data: { at: 3 } } },
    { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'both' } },
    { jsonrpc: '2.0', id: 1, result: undefined },
    { jsonrpc: '2.0', id: 1, result: null },
    { jsonrpc: '2.0', id: 1, result: [] },
    { jsonrpc: '2.0', id: 1.5, result: {} },
    { jsonrpc: '1.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } },
    { jsonrpc: '2.0', id: 1, error: undefined },
    { jsonrpc: '2.0', id: null, error: { code: 1, message: 'm' } },
    { jsonrpc: '2.0', id: 1, result: {}, extra: true },
    Object.assign(Object.create({ result: {} }) as object, { jsonrpc: '2.0', id: 1 }),
    Object.assign(Object.create({ error: { code: 1, message: 'm' } }) as object, { jsonrpc: '2.0', id: 1 }),
    Object.create(null) as object,
    {},
    [],
    [{ jsonrpc: '2.0', id: 1, result: {} }],
    null,
    undefined,
    'result',
    42,
    true,
  ];
  return values;
}

describe('the bundle\'s MCP SDK message checks look at the keys first (scripts/sdkMessageChecks.mjs)', function () {
  this.timeout(60000);
  let plugin: PluginModule;
  let patched: Checks;

  before(async () => {
    plugin = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'sdkMessageChecks.mjs')).href)) as PluginModule;
    // The SDKs' own modules, bundled with the plugin as the extension's bundle is.
    const out = await esbuild.build({
      stdin: {
        contents: [
          "export { isJSONRPCResultResponse as v1Result, isJSONRPCErrorResponse as v1Error, isTaskAugmentedRequestParams as v1Task } from '@modelcontextprotocol/sdk/types.js';",
          "export { isJSONRPCResultResponse as v2Result, isJSONRPCErrorResponse as v2Error, isTaskAugmentedRequestParams as v2Task } from '@modelcontextprotocol/server';",
        ].join('\n'),
        resolveDir: REPO_ROOT,
        loader: 'js',
      },
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      plugins: [plugin.sdkMessageChecks()],
    });
    const code = out.outputFiles[0]?.text ?? '';
    assert.match(code, /"result" in value && JSONRPCResultResponseSchema/);
    assert.match(code, /"error" in value && JSONRPCErrorResponseSchema/);
    assert.match(code, /value !== null && TaskAugmentedRequestParamsSchema/);
    const mod = { exports: {} as Checks };
    new Function('module', 'exports', 'require', code)(mod, mod.exports, require);
    patched = mod.exports;
  });

  it('changes each SDK\'s three definitions, and only those', async () => {
    const v1Source = await fsp.readFile(require.resolve('@modelcontextprotocol/sdk/types.js'), 'utf8');
    const v1Out = plugin.withKeyChecks(v1Source);
    assert.equal(v1Out.count, 3);
    const looks = ['"result" in value', '"error" in value', ''].map((k) => `typeof value === "object" && value !== null && ${k}${k ? ' && ' : ''}`.length);
    assert.equal(v1Out.code.length - v1Source.length, looks.reduce((a, b) => a + b, 0));
    assert.equal(plugin.withKeyChecks('const isJSONRPCRequest = (value) => JSONRPCRequestSchema.safeParse(value).success;').count, 0);
  });

  it('answers exactly as the SDKs\' own checks on every message and non-message', () => {
    const pairs: [string, Check, Check][] = [
      ['v1 result', patched.v1Result, v1.isJSONRPCResultResponse],
      ['v1 error', patched.v1Error, v1.isJSONRPCErrorResponse],
      ['v2 result', patched.v2Result, v2.isJSONRPCResultResponse],
      ['v2 error', patched.v2Error, v2.isJSONRPCErrorResponse],
      ['v1 task params', patched.v1Task, v1.isTaskAugmentedRequestParams],
      ['v2 task params', patched.v2Task, v2.isTaskAugmentedRequestParams],
    ];
    let accepted = 0;
    for (const value of corpus()) {
      for (const [name, mine, theirs] of pairs) {
        const expected = theirs(value);
        assert.equal(mine(value), expected, `${name} of ${JSON.stringify(value)}`);
        if (expected) accepted++;
      }
    }
    // Not a corpus of rejections only: responses of both kinds and request params pass both versions.
    assert.ok(accepted >= 12, `only ${accepted} acceptances`);
  });

  it('the bundle fails to build when the SDK no longer defines the checks as expected', async () => {
    // A stand-in SDK release whose definitions read differently (a parameter renamed).
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-sdkchecks-'));
    try {
      const dir = path.join(tmp, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
      await fsp.mkdir(dir, { recursive: true });
      await fsp.writeFile(path.join(dir, 'types.js'), [
        'const JSONRPCResultResponseSchema = { safeParse: () => ({ success: true }) };',
        'export const isJSONRPCResultResponse = (message) => JSONRPCResultResponseSchema.safeParse(message).success;',
      ].join('\n'));
      await assert.rejects(
        esbuild.build({
          stdin: { contents: `export * from ${JSON.stringify(path.join(dir, 'types.js'))};`, resolveDir: tmp, loader: 'js' },
          bundle: true,
          platform: 'node',
          write: false,
          logLevel: 'silent',
          plugins: [plugin.sdkMessageChecks()],
        }),
        /expected 3 checks in .*found 0; the SDK changed/,
      );
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });
});
