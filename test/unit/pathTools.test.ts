/**
 * One path check for every tool that takes a path. The tools are found in the catalogue by their arguments (`path`,
 * `paths`, `cwd`, a patch's file headers, a held request), so a tool added later is tested here without being named;
 * each gets the same hostile set: a named pipe, a socket, a folder, a missing path, a link out of the workspace, a
 * link to a device, a dangling link, and a link swapped while the calls run. Every refusal has the same code for the
 * same kind of path whatever the tool, and nothing refused ever reaches the language server or a process.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { z } from 'zod';
import { silentLogger } from '../../src/core/ports/logger';
import { InMemoryWorkspaceSource } from '../../src/core/ports/workspaceSource';
import { WorkspaceRegistry } from '../../src/core/policy/workspaces';
import { toolCatalogue } from '../../src/core/tools/catalogue';
import type { AnyTool } from '../../src/core/tools/tool';
import { DEFAULT_LIMITS } from '../../src/core/tools/tool';
import type { AssembledServices } from '../../src/node/assembleServices';
import { assembleServices } from '../../src/node/assembleServices';
import { FakeLanguage } from './helpers/fakeLanguage';
import { sha256, v4a } from './helpers/patchWorld';
import type { Harness } from './helpers/workspaceFixture';
import { SpyWorkspaceFs, connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const WS = 'proj';

/** How a tool takes a path, by argument name: what it expects there. */
const PATH_ARGUMENTS: Record<string, 'file' | 'folder'> = { path: 'file', paths: 'file', cwd: 'folder', patch: 'file', request: 'file' };

/** The tools of the catalogue that take a path, with the kind they expect. */
function pathTools(): { tool: AnyTool; expect: 'file' | 'folder' }[] {
  return toolCatalogue().flatMap((tool) => {
    const keys = Object.keys(tool.input as Record<string, unknown>).filter((k) => k in PATH_ARGUMENTS);
    return keys.length === 0 ? [] : [{ tool, expect: PATH_ARGUMENTS[keys[0] as string] as 'file' | 'folder' }];
  });
}

let keys = 0;
/** Arguments for `tool` that name `target` where it takes a path, and a valid value for every other required one. */
function argsFor(tool: AnyTool, target: string): Record<string, unknown> {
  const patch = v4a(`*** Update File: ${target}`, '@@', '-x', '+y');
  const values: Record<string, () => unknown> = {
    workspace_id: () => WS,
    path: () => target,
    paths: () => [target],
    cwd: () => target,
    patch: () => patch,
    expected_versions: () => ({ [target]: sha256('x\n') }),
    request: () => ({ workspace_id: WS, patch, expected_versions: { [target]: sha256('x\n') }, operation_key: `held-${++keys}` }),
    command: () => ['true'],
    line: () => 1,
    character: () => 1,
    new_name: () => 'renamed',
    operation_key: () => `key-${++keys}`,
    // A patch or rename that passes the path check stays a preview: the workspace is the same for every case.
    check_only: () => true,
  };
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(tool.input as Record<string, z.ZodTypeAny>)) {
    if (schema.isOptional() && !(name in PATH_ARGUMENTS) && name !== 'check_only') continue;
    const value = values[name];
    assert.ok(value, `${tool.name} takes "${name}": give it a value in this test's table`);
    args[name] = value();
  }
  return args;
}

describe('one path check for every path-taking tool', function () {
  this.timeout(60_000);
  let base: string;
  let root: string;
  let outside: string;
  let fake: FakeLanguage;
  let assembled: AssembledServices;
  let storage: string;
  let h: Harness;
  let socket: net.Server;

  before(async () => {
    base = await makeTree({ 'proj/ok.txt': 'x\n', 'proj/folder/in.txt': 'x\n', 'outside/secret.txt': 'secret\n' }, 'codespace-pathtools-');
    root = path.join(base, WS);
    outside = path.join(base, 'outside');
    execFileSync('mkfifo', [path.join(root, 'fifo')]);
    socket = net.createServer();
    await new Promise<void>((resolve) => socket.listen(path.join(root, 'sock'), resolve));
    await fsp.symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-link'));
    await fsp.symlink(outside, path.join(root, 'out-folder'));
    await fsp.symlink('/dev/zero', path.join(root, 'dev-link'));
    await fsp.symlink('fifo', path.join(root, 'fifo-link'));
    await fsp.symlink(path.join(outside, 'gone'), path.join(root, 'dangling'));
    fake = new FakeLanguage();
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-pathtools-storage-'));
    const folders = [{ root, name: WS, profile: 'exec' as const }];
    const source = new InMemoryWorkspaceSource(folders);
    const fs = new SpyWorkspaceFs();
    assembled = await assembleServices({
      workspaces: new WorkspaceRegistry(source),
      fs,
      logger: silentLogger,
      limits: () => DEFAULT_LIMITS,
      storageDir: storage,
      env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
      timeoutMs: () => 0,
      lifetime: 'unit-test',
      language: fake,
      diagnosticsSettleMs: () => 100,
    });
    h = await connectHarness(folders, { assembled, source, fs });
  });
  after(async () => {
    await h.close();
    await assembled.shutdown();
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    await removeTree(base);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('finds every path-taking tool in the catalogue', () => {
    const names = pathTools().map((t) => t.tool.name).sort();
    for (const name of ['read', 'apply_patch', 'approval_create', 'exec_command', 'diagnostics', 'symbols', 'definition', 'references', 'hover', 'rename_symbol']) {
      assert.ok(names.includes(name), `${name} is found (found: ${names.join(', ')})`);
    }
  });

  /** The hostile set: what each kind of path must answer, for a tool expecting a file and one expecting a folder. */
  const HOSTILE: { name: string; file: string; folder: string; kind?: RegExp }[] = [
    { name: 'fifo', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /named pipe/ },
    { name: 'sock', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /socket/ },
    { name: 'fifo-link', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /named pipe/ },
    { name: 'folder', file: 'IS_DIRECTORY', folder: 'ok' },
    { name: 'ok.txt', file: 'ok', folder: 'NOT_FOUND' },
    { name: 'missing', file: 'NOT_FOUND', folder: 'NOT_FOUND' },
    { name: 'folder/missing/deeper', file: 'NOT_FOUND', folder: 'NOT_FOUND' },
    { name: 'out-link', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
    { name: 'out-folder', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
    { name: 'out-folder/secret.txt', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
    { name: 'dev-link', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
    { name: 'dangling', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
  ];

  for (const entry of HOSTILE) {
    it(`${entry.name}: the same answer from every path-taking tool`, async () => {
      const answers: string[] = [];
      for (const { tool, expect } of pathTools()) {
        const want = expect === 'file' ? entry.file : entry.folder;
        fake.calls = [];
        const r = await h.call(tool.name, argsFor(tool, entry.name));
        if (!r.isError) {
          answers.push(`${tool.name}: ok`);
          assert.equal(want, 'ok', `${tool.name} on ${entry.name}: expected ${want}, got a result`);
          continue;
        }
        const e = toolError(r);
        // The path itself passed; what the tool then refused is not this test's business (a fake file to patch).
        if (want === 'ok') continue;
        answers.push(`${tool.name}: ${e.code}`);
        assert.equal(e.code, want, `${tool.name} on ${entry.name}: ${e.message}`);
        if (entry.kind) assert.match(`${e.message} ${String(e.details?.kind)}`, entry.kind, `${tool.name} names the kind`);
        assert.ok(e.details?.path === entry.name || e.details?.path === undefined || tool.name === 'approval_create', `${tool.name} names the path: ${JSON.stringify(e.details)}`);
        assert.deepEqual(fake.calls, [], `${tool.name}: a refused path never reaches the language server`);
      }
      assert.ok(answers.length >= 9, answers.join('\n'));
    });
  }

  it('a FIFO never stalls the others: concurrent calls on it answer, and so do ordinary ones', async () => {
    const calls = pathTools().flatMap(({ tool }) => Array.from({ length: 3 }, () => h.call(tool.name, argsFor(tool, 'fifo'))));
    const ordinary = h.call('read', { workspace_id: WS, path: 'ok.txt' });
    const answers = await Promise.all(calls);
    for (const r of answers) assert.ok(['NOT_TEXT', 'NOT_FOUND'].includes(toolError(r).code));
    assert.equal(ok<{ content: string }>(await ordinary).content, 'x\n');
  });

  it('a link swapped between a file, a FIFO and a device while the calls run: never blocks, never anything but a file inside', async () => {
    const link = path.join(root, 'swap');
    await fsp.symlink('ok.txt', link);
    const swapper = spawn(process.execPath, [path.join(__dirname, 'helpers', 'linkSwapper.js'), link, 'ok.txt', 'fifo', path.join(root, 'swap2'), 'ok.txt', '/dev/zero'], { stdio: ['ignore', 'pipe', 'inherit'] });
    await fsp.symlink('ok.txt', path.join(root, 'swap2'));
    let out = '';
    swapper.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const seen: Record<string, number> = {};
    try {
      while (!out.includes('ready')) await new Promise((r) => setTimeout(r, 10));
      for (let round = 0; round < 20; round++) {
        for (const { tool, expect } of pathTools()) {
          if (expect !== 'file') continue;
          for (const target of ['swap', 'swap2']) {
            fake.calls = [];
            const r = await h.call(tool.name, argsFor(tool, target));
            const k = r.isError ? toolError(r).code : 'ok';
            seen[k] = (seen[k] ?? 0) + 1;
            assert.ok(['ok', 'NOT_TEXT', 'PATH_OUTSIDE_WORKSPACE', 'NOT_FOUND', 'PATCH_CONTEXT_NOT_FOUND', 'VERSION_CONFLICT', 'INVALID_ARGUMENTS'].includes(k), `${tool.name} on ${target}: ${k}`);
          }
        }
      }
    } finally {
      await new Promise<void>((resolve) => {
        swapper.once('exit', () => resolve());
        swapper.kill('SIGTERM');
      });
    }
    assert.ok((seen.NOT_TEXT ?? 0) + (seen.PATH_OUTSIDE_WORKSPACE ?? 0) > 0, JSON.stringify(seen));
  });
});
