/**
 * A patch of many files resolves each folder's real path once (RealFolders), not every file's path, and that cache
 * never weakens confinement: a folder swapped for a link out of the workspace after its real path was resolved is
 * still refused, because every read and write proves through its own descriptor where it is.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { silentLogger } from '../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { DEFAULT_LIMITS } from '../../src/kernel/limits';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { NodeWorkspaceFs } from '../../src/kernel/node/nodeWorkspaceFs';
import { sha256 } from './helpers/patchWorld';

/** NodeWorkspaceFs that records realpath calls and runs an adversary's step right after each one returns. */
class WatchedFs extends NodeWorkspaceFs {
  readonly realpaths: string[] = [];
  afterRealpath: ((p: string) => Promise<void>) | undefined;
  override async realpath(p: string): Promise<string> {
    const real = await super.realpath(p);
    this.realpaths.push(p);
    if (this.afterRealpath) await this.afterRealpath(p);
    return real;
  }
}

const FOLDERS = 4;
const PER_FOLDER = 10;

function line(i: number): string {
  return `export const v${i} = ${i};\n`;
}

describe('a patch resolves each folder once, and stays confined', function () {
  this.timeout(30_000);
  let base: string;
  let root: string;
  let outside: string;
  let fs: WatchedFs;
  let assembled: AssembledServices;
  let workspaces: WorkspaceRegistry;

  beforeEach(async () => {
    base = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-foldercache-'));
    root = path.join(base, 'proj');
    outside = path.join(base, 'outside');
    for (let d = 0; d < FOLDERS; d++) {
      for (const top of [root, outside]) {
        await fsp.mkdir(path.join(top, `d${d}`), { recursive: true });
        for (let f = 0; f < PER_FOLDER; f++) await fsp.writeFile(path.join(top, `d${d}`, `f${f}.ts`), line(f));
      }
    }
    fs = new WatchedFs();
    workspaces = new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'write' }]));
    assembled = await assembleServices({
      workspaces,
      fs,
      logger: silentLogger,
      limits: () => DEFAULT_LIMITS,
      storageDir: path.join(base, 'storage'),
      env: () => ({}),
      timeoutMs: () => 0,
      lifetime: 'test',
    });
  });

  afterEach(async () => {
    await assembled.shutdown();
    await fsp.rm(base, { recursive: true, force: true });
  });

  function patchOf(rels: readonly string[]): { patch: string; expected: Record<string, string> } {
    const sections = rels.map((rel) => {
      const i = Number(/f(\d+)\.ts$/.exec(rel)?.[1]);
      return `*** Update File: ${rel}\n@@\n-${line(i).trimEnd()}\n+${line(i).trimEnd().replace(/= \d+;/, '= -1;')}`;
    });
    const expected: Record<string, string> = {};
    for (const rel of rels) expected[rel] = sha256(line(Number(/f(\d+)\.ts$/.exec(rel)?.[1])));
    return { patch: `*** Begin Patch\n${sections.join('\n')}\n*** End Patch`, expected };
  }

  const all = (): string[] => Array.from({ length: FOLDERS * PER_FOLDER }, (_, k) => `d${Math.floor(k / PER_FOLDER)}/f${k % PER_FOLDER}.ts`);

  it('resolves the real path of each folder once for 40 files in 4 folders, and writes them all', async () => {
    const rels = all();
    const { patch, expected } = patchOf(rels);
    const ws = workspaces.list()[0];
    assert.ok(ws);
    const r = await assembled.patches.apply(ws, { workspace_id: ws.id, patch, expected_versions: expected, operation_key: 'folders-once' });
    assert.equal(r.status, 'applied', r.reason);
    for (const rel of rels) assert.match(await fsp.readFile(path.join(root, rel), 'utf8'), /= -1;/);
    // The root once, each folder once; no file's own path.
    const files = fs.realpaths.filter((p) => p.endsWith('.ts'));
    assert.deepEqual(files, []);
    for (let d = 0; d < FOLDERS; d++) assert.equal(fs.realpaths.filter((p) => p === path.join(root, `d${d}`)).length, 1, `d${d} resolved once`);
  });

  it('a folder swapped for a link out of the workspace right after its real path was resolved: refused, nothing outside changes', async () => {
    const rels = all().filter((rel) => rel.startsWith('d1/'));
    const { patch, expected } = patchOf(rels);
    const ws = workspaces.list()[0];
    assert.ok(ws);
    const outsideBefore = await Promise.all(rels.map((rel) => fsp.readFile(path.join(outside, rel), 'utf8')));
    // The adversary: right after the folder's real path is resolved, the folder becomes a link out of the workspace.
    let swapped = false;
    fs.afterRealpath = async (p) => {
      if (swapped || p !== path.join(root, 'd1')) return;
      swapped = true;
      await fsp.rename(path.join(root, 'd1'), path.join(base, 'd1-moved'));
      await fsp.symlink(path.join(outside, 'd1'), path.join(root, 'd1'));
    };
    let refused: unknown;
    try {
      const r = await assembled.patches.apply(ws, { workspace_id: ws.id, patch, expected_versions: expected, operation_key: 'folders-swapped' });
      assert.notEqual(r.status, 'applied', 'a patch through a folder swapped for a link out of the workspace must not apply');
    } catch (err) {
      refused = err;
    }
    assert.ok(refused instanceof ToolError, `refused with a tool error, got ${String(refused)}`);
    assert.equal(refused.code, 'PATH_OUTSIDE_WORKSPACE');
    const outsideAfter = await Promise.all(rels.map((rel) => fsp.readFile(path.join(outside, rel), 'utf8')));
    assert.ok(swapped, 'the folder was swapped during the patch');
    assert.deepEqual(outsideAfter, outsideBefore);
  });
});
