import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { pathArgument, workspaceIdArgument } from '../../src/mcp/completions';
import { createToolServer } from '../../src/mcp/toolServer';
import { WORKSPACE_FILE_TEMPLATE } from '../../src/mcp/workspaceResources';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, removeTree } from './helpers/workspaceFixture';

const sha = (b: string | Uint8Array) => 'sha256:' + createHash('sha256').update(b).digest('hex');
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('MCP surface: workspace files as resources, completion', () => {
  let base: string;
  let h: Harness;
  const uri = (ws: string, p: string) => `codespace://workspace/${ws}/${p}`;
  const readError = async (u: string): Promise<McpError> => {
    try {
      await h.client.readResource({ uri: u });
    } catch (err) {
      assert.ok(err instanceof McpError, String(err));
      return err;
    }
    throw new Error(`reading ${u} succeeded`);
  };

  before(async () => {
    base = await makeTree({
      'proj/src/app.ts': 'export const app = 1;\n',
      'proj/src/components/button.ts': 'b\n',
      'proj/src/config.json': '{}\n',
      'proj/docs/a b.md': 'spaced\n',
      'proj/logo.png': PNG,
      'proj/blob.bin': new Uint8Array([0, 1, 2, 0, 255]),
      'proj/.git/config': '[core]\n',
      'other/readme.md': 'other\n',
      'outside/secret.txt': 'secret\n',
    }, 'codespace-surface-');
    await fsp.symlink(path.join(base, 'outside'), path.join(base, 'proj', 'escape'));
    await fsp.symlink(path.join(base, 'outside', 'secret.txt'), path.join(base, 'proj', 'secret-link.txt'));
    h = await connectHarness([
      { root: path.join(base, 'proj'), name: 'proj', profile: 'read-only' },
      { root: path.join(base, 'other'), name: 'other', profile: 'read-only' },
    ]);
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('offers resources and completions (subscriptions and list changes are for the steering queues), and says the tool list may change', () => {
    const caps = h.client.getServerCapabilities();
    assert.deepEqual(caps?.resources, { subscribe: true, listChanged: true });
    assert.deepEqual(caps?.completions, {});
    assert.deepEqual(caps?.tools, { listChanged: true });
  });

  it('lists the workspace-file template (next to the steering one) and, with no open work, no enumerated resources', async () => {
    const { resourceTemplates } = await h.client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => [t.name, t.uriTemplate]), [
      ['workspace-file', WORKSPACE_FILE_TEMPLATE],
      ['steering', 'codespace://steering/{work_id}'],
    ]);
    const { resources } = await h.client.listResources();
    assert.deepEqual(resources, []);
  });

  it('reads a text file as text with its version; a nested and a percent-encoded path', async () => {
    const r = await h.client.readResource({ uri: uri('proj', 'src/app.ts') });
    assert.deepEqual(r.contents, [{ uri: uri('proj', 'src/app.ts'), mimeType: 'text/plain', text: 'export const app = 1;\n', _meta: { version: sha('export const app = 1;\n') } }]);
    const spaced = await h.client.readResource({ uri: uri('proj', 'docs/a%20b.md') });
    assert.equal((spaced.contents[0] as { text: string }).text, 'spaced\n');
    const other = await h.client.readResource({ uri: uri('other', 'readme.md') });
    assert.equal((other.contents[0] as { text: string }).text, 'other\n');
  });

  it('reads an image as a blob with its mime type', async () => {
    const r = await h.client.readResource({ uri: uri('proj', 'logo.png') });
    const c = r.contents[0] as { blob: string; mimeType: string };
    assert.equal(c.mimeType, 'image/png');
    assert.deepEqual(Buffer.from(c.blob, 'base64'), PNG);
  });

  it('the same confinement as read: no "..", no link out, no absolute path, no unknown workspace', async () => {
    const cases: [string, number, string][] = [
      [uri('proj', '..%2Foutside%2Fsecret.txt'), -32002, 'PATH_OUTSIDE_WORKSPACE'],
      // Encoded dot segments are dot segments to the URL parser: this names workspace "outside", which is not one.
      [uri('proj', 'src/%2E%2E/%2E%2E/%2E%2E/outside/secret.txt'), -32002, 'WORKSPACE_NOT_FOUND'],
      [uri('proj', 'escape/secret.txt'), -32002, 'PATH_OUTSIDE_WORKSPACE'],
      [uri('proj', 'secret-link.txt'), -32002, 'PATH_OUTSIDE_WORKSPACE'],
      [uri('proj', '%2Fetc%2Fpasswd'), -32002, 'PATH_OUTSIDE_WORKSPACE'],
      [uri('nope', 'x.txt'), -32002, 'WORKSPACE_NOT_FOUND'],
      [uri('proj', 'missing.txt'), -32002, 'NOT_FOUND'],
      [uri('proj', 'blob.bin'), -32602, 'NOT_TEXT'],
    ];
    for (const [u, code, toolCode] of cases) {
      const e = await readError(u);
      assert.equal(e.code, code, `${u}: ${e.message}`);
      assert.equal((e.data as { code?: string } | undefined)?.code, toolCode, u);
      assert.ok(!e.message.includes('secret\n'));
    }
    // The SDK resolves dot segments of the URL itself: they never reach the file system as written.
    const dotted = await readError('codespace://workspace/proj/../../outside/secret.txt');
    assert.notEqual(dotted.code, 0);
  });

  it('completes workspace ids by prefix', async () => {
    const all = await h.client.complete({ ref: { type: 'ref/resource', uri: WORKSPACE_FILE_TEMPLATE }, argument: { name: 'workspace_id', value: '' } });
    assert.deepEqual(all.completion.values, ['proj', 'other']);
    const o = await h.client.complete({ ref: { type: 'ref/resource', uri: WORKSPACE_FILE_TEMPLATE }, argument: { name: 'workspace_id', value: 'ot' } });
    assert.deepEqual(o.completion.values, ['other']);
  });

  it('completes paths one level at a time in the workspace of the context, honouring excludes and confinement', async () => {
    const complete = async (value: string, ws?: string) =>
      (await h.client.complete({ ref: { type: 'ref/resource', uri: WORKSPACE_FILE_TEMPLATE }, argument: { name: 'path', value }, ...(ws ? { context: { arguments: { workspace_id: ws } } } : {}) })).completion.values;
    assert.deepEqual(await complete('', 'proj'), ['blob.bin', 'docs/', 'logo.png', 'src/']);
    assert.deepEqual(await complete('src/c', 'proj'), ['src/components/', 'src/config.json']);
    assert.deepEqual(await complete('src/components/', 'proj'), ['src/components/button.ts']);
    assert.deepEqual(await complete('../', 'proj'), []);
    assert.deepEqual(await complete('src/*', 'proj'), []);
    assert.deepEqual(await complete('', 'nope'), []);
    assert.deepEqual(await complete('', undefined), [], 'two workspaces and none named: nothing to complete');
  });

  it('prompt arguments built with workspaceIdArgument / pathArgument complete the same way', async () => {
    const dispatcher = h.services.dispatcherWith([]);
    const server = createToolServer({ ...h.services.serving, dispatcher, version: '0' });
    server.registerPrompt('test_prompt', { argsSchema: { workspace_id: workspaceIdArgument(dispatcher), path: pathArgument(dispatcher) } }, () => ({ messages: [] }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'prompt-test', version: '1' });
    await server.connect(b);
    await client.connect(a);
    try {
      const ids = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt' }, argument: { name: 'workspace_id', value: 'p' } });
      assert.deepEqual(ids.completion.values, ['proj']);
      const paths = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt' }, argument: { name: 'path', value: 'src/c' }, context: { arguments: { workspace_id: 'proj' } } });
      assert.deepEqual(paths.completion.values, ['src/components/', 'src/config.json']);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
