/**
 * The file guarantees, checked where users rely on them: in the extension running inside VS Code, through a real
 * MCP client. A swapper process flips links between the workspace and outside while the agent reads and patches
 * through them; a reader process polls 200 files while a 200-file patch rewrites them.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BULK_FILES, bulkFiles, bulkName, bulkPatch, hex, newContent, oldContent } from '../unit/helpers/bulkPatchScenario';
import { MIN_SWAPS, runSwapRace } from '../unit/helpers/swapRace';
import { call, connectToFirstFolder, folder } from './helpers';

const HELPERS = path.join(__dirname, '..', 'unit', 'helpers');
/** Runs a helper script with the extension host's own runtime (Electron's, on the desktop, as plain Node). */
const NODE = { execPath: process.execPath, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' } };

describe('file guarantees inside VS Code', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  let root: string;
  const cleanup: string[] = [];

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    root = await fsp.realpath(folder(0).uri.fsPath);
  });
  after(async () => {
    await client?.close();
    for (const dir of cleanup) await fsp.rm(dir, { recursive: true, force: true });
  });

  it(`confinement holds against a concurrent symlink swapper (≥ ${MIN_SWAPS} swaps)`, async () => {
    const outside = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-outside-'));
    cleanup.push(outside, path.join(root, 'race'));
    const counts = await runSwapRace({
      root,
      outside,
      workspaceId: wsId,
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
      runMs: 6000,
      node: NODE,
    });
    console.log(`      ${JSON.stringify(counts)}`);
  });

  it('a reader polling 200 files during 200-file applies never finds one missing or partial', async () => {
    cleanup.push(path.join(root, 'bulk'));
    for (const [rel, content] of Object.entries(bulkFiles())) {
      await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await fsp.writeFile(path.join(root, rel), content);
    }
    const manifest = path.join(os.tmpdir(), `codespace-manifest-${process.pid}.json`);
    const allowed: Record<string, [string, string]> = {};
    for (let i = 0; i < BULK_FILES; i++) allowed[path.join(root, bulkName(i))] = [hex(oldContent(i)), hex(newContent(i))];
    await fsp.writeFile(manifest, JSON.stringify(allowed));
    cleanup.push(manifest);
    const poller = spawn(NODE.execPath, [path.join(HELPERS, 'filePoller.js'), manifest], { stdio: ['ignore', 'pipe', 'inherit'], env: NODE.env });
    let out = '';
    poller.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    while (!out.includes('ready')) await new Promise((r) => setTimeout(r, 10));
    try {
      for (let round = 0; round < 4; round++) {
        const r = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, ...bulkPatch(round % 2 === 1), operation_key: `editor-bulk-${Date.now()}-${round}` });
        assert.equal(r.status, 'applied');
      }
    } finally {
      await new Promise<void>((resolve) => {
        poller.once('exit', () => resolve());
        poller.kill('SIGTERM');
      });
    }
    const report = JSON.parse(out.slice(out.indexOf('{'))) as { reads: number; missing: number; partial: number; examples: string[] };
    assert.ok(report.reads > BULK_FILES * 4, `the reader ran (${report.reads} reads)`);
    assert.deepEqual({ missing: report.missing, partial: report.partial, examples: report.examples }, { missing: 0, partial: 0, examples: [] });
  });

  it('find lists what workspace.findFiles lists, with the folder\'s files.exclude', async () => {
    cleanup.push(path.join(root, 'findcheck'));
    for (const rel of ['a.ts', 'b.js', 'sub/c.ts', 'sub/deep/d.ts', 'excluded/x.ts', 'sub/excluded/y.ts', '.hidden/z.ts', 'sub/e.test.ts']) {
      await fsp.mkdir(path.dirname(path.join(root, 'findcheck', rel)), { recursive: true });
      await fsp.writeFile(path.join(root, 'findcheck', rel), 'x\n');
    }
    const config = vscode.workspace.getConfiguration('files', folder(0).uri);
    const previous = config.inspect<Record<string, boolean>>('exclude')?.workspaceFolderValue;
    await config.update('exclude', { '**/excluded': true, '**/*.test.ts': true }, vscode.ConfigurationTarget.WorkspaceFolder);
    try {
      for (const pattern of ['findcheck/**/*.ts', 'findcheck/*', 'findcheck/{a,b}.*', 'findcheck/**', 'findcheck/**/?.ts', 'findcheck/sub/**/*']) {
        const ours = (await call<{ paths: string[] }>(client, 'find', { workspace_id: wsId, pattern })).paths;
        const theirs = (await vscode.workspace.findFiles(new vscode.RelativePattern(folder(0), pattern)))
          .map((u) => path.relative(folder(0).uri.fsPath, u.fsPath).split(path.sep).join('/'))
          .sort();
        assert.deepEqual(ours, theirs, pattern);
      }
      const all = (await call<{ paths: string[] }>(client, 'find', { workspace_id: wsId, pattern: 'findcheck/**' })).paths;
      assert.ok(!all.some((p) => p.includes('excluded') || p.endsWith('.test.ts')), all.join(', '));
      assert.ok(all.includes('findcheck/.hidden/z.ts'));
    } finally {
      await config.update('exclude', previous, vscode.ConfigurationTarget.WorkspaceFolder);
    }
  });
});
