import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';

const SWAPPER = path.join(__dirname, 'helpers', 'linkSwapper.js');
const MIN_SWAPS = 3000;
const RUN_MS = 6000;
const POOL = 400;

interface Snap { hash: string; mtimeMs: number; ino: number; size: number }

/** Every entry of a folder (flat) with hash, mtime and inode: what "untouched" means. */
async function snapshot(dir: string): Promise<Record<string, Snap>> {
  const out: Record<string, Snap> = {};
  for (const name of (await fsp.readdir(dir)).sort()) {
    const abs = path.join(dir, name);
    const st = await fsp.lstat(abs);
    out[name] = { hash: createHash('sha256').update(await fsp.readFile(abs)).digest('hex'), mtimeMs: st.mtimeMs, ino: st.ino, size: st.size };
  }
  return out;
}

function startSwapper(triples: string[]): Promise<{ child: ChildProcess; stop: () => Promise<number> }> {
  const child = spawn(process.execPath, [SWAPPER, ...triples], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const check = (): void => {
      if (!out.includes('ready')) return;
      child.stdout?.off('data', check);
      resolve({
        child,
        stop: () =>
          new Promise<number>((done) => {
            child.once('exit', () => done((JSON.parse(out.slice(out.indexOf('{'))) as { swaps: number }).swaps));
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout?.on('data', check);
  });
}

function body(r: CallToolResult): Record<string, unknown> {
  const first = r.content[0];
  return JSON.parse(first?.type === 'text' ? first.text : '{}') as Record<string, unknown>;
}

/** Fails the test on INTERNAL or any code a confinement refusal should not produce. */
function errorCode(r: CallToolResult, allowed: readonly string[]): string {
  const code = (body(r).error as { code: string }).code;
  assert.ok(allowed.includes(code), `unexpected error ${JSON.stringify(body(r))}`);
  return code;
}

describe('confinement against a concurrent symlink swapper', function () {
  this.timeout(120_000);
  let world: PatchWorld;

  afterEach(async () => {
    await world?.dispose();
  });

  it(`never reads, previews, updates, adds, deletes or moves outside while links are swapped (≥ ${MIN_SWAPS} swaps)`, async () => {
    const same = 'same\n';
    const files: Record<string, string> = { 'in/secret.txt': 'inside\n', 'w/t1.txt': same, 'w/t2.txt': same };
    for (let i = 0; i < POOL; i++) {
      files[`w/del-${i}.txt`] = same;
      files[`w/mv-${i}.txt`] = same;
    }
    world = await openPatchWorld(files);
    const root = world.root;
    // Outside: files the agent must never see (different content) or touch (the same content, so a version
    // check cannot tell them apart from the inside ones: only confinement protects them).
    const outR = path.join(world.tmp, 'outside-r');
    const outW = path.join(world.tmp, 'outside-w');
    await fsp.mkdir(outR);
    await fsp.mkdir(outW);
    await fsp.writeFile(path.join(outR, 'secret.txt'), 'OUTSIDE\n');
    for (const name of Object.keys(files).filter((f) => f.startsWith('w/'))) await fsp.writeFile(path.join(outW, name.slice(2)), same);
    const links: [string, string, string][] = [
      ['rl', 'in', '../outside-r'], // a folder swapped for a link to an outside folder
      ['rf', 'in/secret.txt', '../outside-r/secret.txt'], // the file itself a swapped link
      ['wl', 'w', '../outside-w'],
      ['wf', 'w/t2.txt', '../outside-w/t2.txt'],
    ];
    for (const [link, inside] of links) await fsp.symlink(inside, path.join(root, link));
    const before = await snapshot(outW);
    const beforeR = await snapshot(outR);

    const swapper = await startSwapper(links.flatMap(([link, a, b]) => [path.join(root, link), a, b]));
    const counts: Record<string, number> = {};
    const count = (k: string): void => void (counts[k] = (counts[k] ?? 0) + 1);
    const deadline = Date.now() + RUN_MS;
    const refusals = ['PATH_OUTSIDE_WORKSPACE', 'NOT_FOUND'];
    const v = sha256(same);

    const reader = async (): Promise<void> => {
      while (Date.now() < deadline) {
        for (const p of ['rl/secret.txt', 'rf']) {
          const r = await world.call('read', { workspace_id: WS_ID, path: p });
          if (r.isError) count(`read ${errorCode(r, refusals)}`);
          else {
            assert.equal((r.structuredContent as { content: string }).content, 'inside\n', `read ${p} returned outside content`);
            count('read ok');
          }
        }
      }
    };
    const previewer = async (): Promise<void> => {
      for (let i = 0; Date.now() < deadline; i++) {
        const r = await world.call('apply_patch', {
          workspace_id: WS_ID,
          patch: v4a('*** Update File: rl/secret.txt', '@@', '-inside', '+changed'),
          expected_versions: { 'rl/secret.txt': sha256('inside\n') },
          operation_key: `preview-${i}`,
          check_only: true,
        });
        if (r.isError) count(`preview ${errorCode(r, [...refusals, 'PATCH_CONTEXT_NOT_FOUND', 'VERSION_CONFLICT'])}`);
        else {
          assert.doesNotMatch(JSON.stringify(r.structuredContent), /OUTSIDE/);
          count('preview ok');
        }
      }
    };
    /** Updates `rel` (reached through a swapped link) from "same" and puts the inside file back for the next round. */
    const updater = (rel: string, insideFile: string) => async (): Promise<void> => {
      for (let i = 0; Date.now() < deadline; i++) {
        const r = await world.call('apply_patch', {
          workspace_id: WS_ID,
          patch: v4a(`*** Update File: ${rel}`, '@@', '-same', '+changed'),
          expected_versions: { [rel]: v },
          operation_key: `update-${rel}-${i}`,
        });
        if (r.isError) count(`update ${errorCode(r, [...refusals, 'VERSION_CONFLICT'])}`);
        else count(`update ${(r.structuredContent as { status: string }).status}`);
        await fsp.writeFile(path.join(root, insideFile), same);
      }
    };
    const structural = async (): Promise<void> => {
      for (let i = 0; i < POOL && Date.now() < deadline; i++) {
        for (const [kind, patch, expected] of [
          ['add', v4a(`*** Add File: wl/new-${i}.txt`, '+new'), {}],
          ['delete', v4a(`*** Delete File: wl/del-${i}.txt`), { [`wl/del-${i}.txt`]: v }],
          ['move', v4a(`*** Update File: wl/mv-${i}.txt`, `*** Move to: wl/mv-${i}.moved.txt`, '@@', '-same', '+moved'), { [`wl/mv-${i}.txt`]: v }],
        ] as const) {
          const r = await world.call('apply_patch', { workspace_id: WS_ID, patch, expected_versions: expected, operation_key: `${kind}-${i}` });
          if (r.isError) count(`${kind} ${errorCode(r, [...refusals, 'FILE_EXISTS'])}`);
          else count(`${kind} ${(r.structuredContent as { status: string }).status}`);
        }
      }
    };

    try {
      await Promise.all([reader(), previewer(), updater('wl/t1.txt', 'w/t1.txt')(), updater('wf', 'w/t2.txt')(), structural()]);
    } finally {
      const swaps = await swapper.stop();
      counts.swaps = swaps;
    }
    // Evidence the race was real: many swaps, and both outcomes happened for every kind of operation.
    assert.ok((counts.swaps ?? 0) >= MIN_SWAPS, `only ${counts.swaps} swaps: ${JSON.stringify(counts)}`);
    for (const k of ['read ok', 'preview ok', 'update applied', 'add applied', 'delete applied', 'move applied']) {
      assert.ok((counts[k] ?? 0) > 0, `no "${k}" at all: ${JSON.stringify(counts)}`);
    }
    // Nothing outside changed: same names, bytes, mtimes and inodes; no temp file left anywhere.
    assert.deepEqual(await snapshot(outW), before, `outside files changed: ${JSON.stringify(counts)}`);
    assert.deepEqual(await snapshot(outR), beforeR);
    const leftovers = (await fsp.readdir(path.join(root, 'w'))).filter((n) => n.includes('.codespace-'));
    assert.deepEqual(leftovers, []);
    console.log(`      ${JSON.stringify(counts)}`);
  });
});
