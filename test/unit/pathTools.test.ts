/**
 * One path check for every tool that takes a path. The tools are found in the catalogue by their arguments (`path`,
 * `paths`, `cwd`, a patch's file headers, a held request), so a tool added later is tested here without being named;
 * each gets the same hostile set: a named pipe, a socket, a folder, a missing path, a link out of the workspace, a
 * link to a device, a dangling link, and a link swapped while the calls run. Every refusal has the same code for the
 * same kind of path whatever the tool, and nothing refused ever reaches the language server or a process.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { OPT_IN_GROUPS } from '../../src/app/catalogue';
import { FakeLanguage } from './helpers/fakeLanguage';
import { HOSTILE_PATHS, argsFor, makeHostilePaths, pathTools } from './helpers/pathToolArgs';
import type { Harness } from './helpers/workspaceFixture';
import { SpyWorkspaceFs, connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const WS = 'proj';

describe('one path check for every path-taking tool', function () {
  this.timeout(60_000);
  let base: string;
  let root: string;
  let outside: string;
  let fake: FakeLanguage;
  let assembled: AssembledServices;
  let storage: string;
  let h: Harness;
  let hostile: { dispose(): Promise<void> };

  before(async () => {
    base = await makeTree({ 'proj/ok.txt': 'x\n', 'outside/secret.txt': 'secret\n' }, 'codespace-pathtools-');
    root = path.join(base, WS);
    outside = path.join(base, 'outside');
    hostile = await makeHostilePaths(root, outside);
    fake = new FakeLanguage();
    // A formatter for every file (with nothing to change): format answers like the other tools once the path is checked.
    fake.formatAnswer = (p) => Promise.resolve({ path: p, edits: [], documentText: undefined, dirty: false });
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-pathtools-storage-'));
    const folders = [{ root, name: WS, profile: 'exec' as const }];
    const source = new InMemoryWorkspaceSource(folders);
    const fs = new SpyWorkspaceFs();
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(source), storage, {
        fs,
        language: fake,
        diagnosticsSettleMs: () => 100,
        // Every group, those served only on request included: each path-taking tool is tested.
        enabledToolGroups: () => OPT_IN_GROUPS,
      }),
    );
    h = await connectHarness(folders, { assembled, source, fs });
  });
  after(async () => {
    await h.close();
    await assembled.shutdown();
    await hostile.dispose();
    await removeTree(base);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('finds every path-taking tool in the catalogue', () => {
    const names = pathTools().map((t) => t.tool.name).sort();
    for (const name of ['read', 'apply_patch', 'approval_create', 'exec_command', 'diagnostics', 'symbols', 'definition', 'references', 'hover', 'rename_symbol']) {
      assert.ok(names.includes(name), `${name} is found (found: ${names.join(', ')})`);
    }
  });

  for (const entry of HOSTILE_PATHS) {
    it(`${entry.name}: the same answer from every path-taking tool`, async () => {
      const answers: string[] = [];
      for (const { tool, expect } of pathTools()) {
        const want = expect === 'file' ? entry.file : entry.folder;
        fake.calls = [];
        const r = await h.call(tool.name, argsFor(tool, WS, entry.name));
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
    const calls = pathTools().flatMap(({ tool }) => Array.from({ length: 3 }, () => h.call(tool.name, argsFor(tool, WS, 'fifo'))));
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
            const r = await h.call(tool.name, argsFor(tool, WS, target));
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
