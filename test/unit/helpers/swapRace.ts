/**
 * The symlink-swap race, shared by the unit suite (Node adapter) and the suite inside VS Code (the extension as
 * users run it). Builds a `race/` folder in the workspace and two folders outside it, starts a swapper process
 * (linkSwapper.ts) that flips links between inside and outside targets, and meanwhile reads, previews, updates,
 * adds, deletes and moves through those links. Asserts that no answer carries outside content, that every outside
 * file stays byte-identical with the same mtime and inode, and that the race was real (swaps, and successes of
 * every kind of operation).
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const SWAPPER = path.join(__dirname, 'linkSwapper.js');
export const MIN_SWAPS = 3000;
const POOL = 400;

export interface RaceOptions {
  /** The workspace root on disk (its real path). */
  readonly root: string;
  /** An empty folder outside the workspace. */
  readonly outside: string;
  readonly workspaceId: string;
  readonly call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;
  readonly runMs: number;
  /** The Node binary to run the swapper with (inside VS Code: process.execPath with ELECTRON_RUN_AS_NODE). */
  readonly node?: { execPath: string; env?: NodeJS.ProcessEnv };
  /**
   * Starts the swapper another way (for example as an agent's command in the sandbox): `args` are linkSwapper.js's
   * arguments. Default: a child process of the test.
   */
  readonly startSwapper?: (script: string, args: string[]) => Promise<Swapper>;
}
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

export interface Swapper {
  /** Swaps done so far (as last reported). */
  readonly swaps: () => number;
  stop(): Promise<number>;
}

function startSwapper(triples: string[], node: { execPath: string; env?: NodeJS.ProcessEnv }): Promise<Swapper> {
  const child: ChildProcess = spawn(node.execPath, [SWAPPER, ...triples], { stdio: ['ignore', 'pipe', 'inherit'], ...(node.env ? { env: node.env } : {}) });
  let out = '';
  let latest = 0;
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    out += c;
    const last = /(\d+)\n(?!.*\d+\n)/s.exec(out);
    if (last) latest = Number(last[1]);
    if (out.length > 4096 && !out.includes('{')) out = out.slice(-64);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const check = (): void => {
      if (!out.includes('ready')) return void setTimeout(check, 5);
      resolve({
        swaps: () => latest,
        stop: () =>
          new Promise<number>((done) => {
            child.once('exit', () => done((JSON.parse(out.slice(out.indexOf('{'))) as { swaps: number }).swaps));
            child.kill('SIGTERM');
          }),
      });
    };
    check();
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

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

function v4a(...sections: string[]): string {
  return ['*** Begin Patch', ...sections, '*** End Patch'].join('\n');
}

/** Runs the race; returns the counts of each outcome (for the test log). */
export async function runSwapRace(o: RaceOptions): Promise<Record<string, number>> {
  const WS_ID = o.workspaceId;
  const call = o.call;
  const same = 'same\n';
  const race = path.join(o.root, 'race');
  const files: Record<string, string> = { 'in/secret.txt': 'inside\n', 'w/t1.txt': same, 'w/t2.txt': same };
  for (let i = 0; i < POOL; i++) {
    files[`w/del-${i}.txt`] = same;
    files[`w/mv-${i}.txt`] = same;
  }
  for (const [rel, content] of Object.entries(files)) {
    await fsp.mkdir(path.dirname(path.join(race, rel)), { recursive: true });
    await fsp.writeFile(path.join(race, rel), content);
  }
  // Outside: files the agent must never see (different content) or touch (the same content, so a version
  // check cannot tell them apart from the inside ones: only confinement protects them).
  const outR = path.join(o.outside, 'outside-r');
  const outW = path.join(o.outside, 'outside-w');
  await fsp.mkdir(outR);
  await fsp.mkdir(outW);
  await fsp.writeFile(path.join(outR, 'secret.txt'), 'OUTSIDE\n');
  for (const name of Object.keys(files).filter((f) => f.startsWith('w/'))) await fsp.writeFile(path.join(outW, name.slice(2)), same);
  const links: [string, string, string][] = [
    ['rl', 'in', outR], // a folder swapped for a link to an outside folder
    ['rf', 'in/secret.txt', path.join(outR, 'secret.txt')], // the file itself a swapped link
    ['wl', 'w', outW],
    ['wf', 'w/t2.txt', path.join(outW, 't2.txt')],
  ];
  for (const [link, inside] of links) await fsp.symlink(inside, path.join(race, link));
  const before = await snapshot(outW);
  const beforeR = await snapshot(outR);

  const triples = links.flatMap(([link, a, b]) => [path.join(race, link), a, b]);
  const swapper = o.startSwapper ? await o.startSwapper(SWAPPER, triples) : await startSwapper(triples, o.node ?? { execPath: process.execPath });
  const counts: Record<string, number> = {};
  const count = (k: string): void => void (counts[k] = (counts[k] ?? 0) + 1);
  // Run at least runMs and until the swapper has done MIN_SWAPS (a loaded machine swaps slower), at most 90 s.
  const started = Date.now();
  // Also until every kind of operation has succeeded once: on a loaded machine a few dozen structural patches may
  // all meet a swapped link, and the evidence below needs both outcomes.
  const needed = ['read ok', 'preview ok', 'update applied', 'add applied', 'delete applied'];
  const going = (): boolean =>
    Date.now() - started < 90_000 && (Date.now() - started < o.runMs || swapper.swaps() < MIN_SWAPS || needed.some((k) => (counts[k] ?? 0) === 0));
  const refusals = ['PATH_OUTSIDE_WORKSPACE', 'NOT_FOUND'];
  const v = sha256(same);
  const reader = async (): Promise<void> => {
    while (going()) {
      for (const p of ['race/rl/secret.txt', 'race/rf']) {
        const r = await call('read', { workspace_id: WS_ID, path: p });
        if (r.isError) count(`read ${errorCode(r, refusals)}`);
        else {
          assert.equal((r.structuredContent as { content: string }).content, 'inside\n', `read ${p} returned outside content`);
          count('read ok');
        }
      }
    }
  };
  const previewer = async (): Promise<void> => {
    for (let i = 0; going(); i++) {
      const r = await call('apply_patch', {
        workspace_id: WS_ID,
        patch: v4a('*** Update File: race/rl/secret.txt', '@@', '-inside', '+changed'),
        expected_versions: { 'race/rl/secret.txt': sha256('inside\n') },
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
    for (let i = 0; going(); i++) {
      const r = await call('apply_patch', {
        workspace_id: WS_ID,
        patch: v4a(`*** Update File: ${rel}`, '@@', '-same', '+changed'),
        expected_versions: { [rel]: v },
        operation_key: `update-${rel}-${i}`,
      });
      if (r.isError) count(`update ${errorCode(r, [...refusals, 'VERSION_CONFLICT'])}`);
      else count(`update ${(r.structuredContent as { status: string }).status}`);
      await fsp.writeFile(path.join(race, insideFile), same);
    }
  };
  const structural = async (): Promise<void> => {
    for (let i = 0; i < POOL && going(); i++) {
      for (const [kind, patch, expected] of [
        ['add', v4a(`*** Add File: race/wl/new-${i}.txt`, '+new'), {}],
        ['delete', v4a(`*** Delete File: race/wl/del-${i}.txt`), { [`race/wl/del-${i}.txt`]: v }],
        ['move', v4a(`*** Update File: race/wl/mv-${i}.txt`, `*** Move to: race/wl/mv-${i}.moved.txt`, '@@', '-same', '+moved'), { [`race/wl/mv-${i}.txt`]: v }],
      ] as const) {
        const r = await call('apply_patch', { workspace_id: WS_ID, patch, expected_versions: expected, operation_key: `${kind}-${i}` });
        if (r.isError) count(`${kind} ${errorCode(r, [...refusals, 'FILE_EXISTS'])}`);
        else count(`${kind} ${(r.structuredContent as { status: string }).status}`);
      }
    }
  };

    try {
      await Promise.all([reader(), previewer(), updater('race/wl/t1.txt', 'w/t1.txt')(), updater('race/wf', 'w/t2.txt')(), structural()]);
    } finally {
      const swaps = await swapper.stop();
      counts.swaps = swaps;
    }
    // Evidence the race was real: many swaps, and both outcomes happened for every kind of operation.
    assert.ok((counts.swaps ?? 0) >= MIN_SWAPS, `only ${counts.swaps} swaps: ${JSON.stringify(counts)}`);
    // A move is two steps (write the target, remove the source) through the moving link, so under a fast swapper
    // it may never succeed from start to end; it must still have been tried, and touched nothing outside.
    assert.ok(Object.keys(counts).some((k) => k.startsWith('move ')), `no move was tried: ${JSON.stringify(counts)}`);
    for (const k of needed) {
      assert.ok((counts[k] ?? 0) > 0, `no "${k}" at all: ${JSON.stringify(counts)}`);
    }
    // Nothing outside changed: same names, bytes, mtimes and inodes; no temp file left anywhere.
    assert.deepEqual(await snapshot(outW), before, `outside files changed: ${JSON.stringify(counts)}`);
    assert.deepEqual(await snapshot(outR), beforeR);
    const leftovers = (await fsp.readdir(path.join(race, 'w'))).filter((n) => n.includes('.codespace-'));
    assert.deepEqual(leftovers, []);
    return counts;
}
