/**
 * Atomic replace: every target is present and wholly old or wholly new at every instant, and a SIGKILL at any
 * moment of a 200-file patch leaves only whole files; the temp files such a kill leaves are removed at the next
 * start. The readers and the killed applier are separate processes, so they race the writes for real.
 */
import * as assert from 'node:assert/strict';
import { fork, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { BULK_FILES, BULK_KEY, bulkFiles, bulkName, bulkPatch, hex, newContent, oldContent } from './helpers/bulkPatchScenario';
import type { PatchWorld } from './helpers/patchWorld';
import { makeDirs, openPatchWorld, writeFiles } from './helpers/patchWorld';

const HELPERS = path.join(__dirname, 'helpers');

async function startPoller(manifest: string): Promise<() => Promise<{ reads: number; missing: number; partial: number; examples: string[] }>> {
  const child = spawn(process.execPath, [path.join(HELPERS, 'filePoller.js'), manifest], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    const check = (): void => {
      if (out.includes('ready')) resolve();
      else setTimeout(check, 5);
    };
    check();
  });
  return () =>
    new Promise((resolve) => {
      child.once('exit', () => resolve(JSON.parse(out.slice(out.indexOf('{'))) as { reads: number; missing: number; partial: number; examples: string[] }));
      child.kill('SIGTERM');
    });
}

/** Where every bulk file stands: 'old', 'new', or what is wrong with it. */
async function states(root: string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < BULK_FILES; i++) {
    const text = await fsp.readFile(path.join(root, bulkName(i)), 'utf8').catch((e: NodeJS.ErrnoException) => `missing (${e.code})`);
    out.push(text === oldContent(i) ? 'old' : text === newContent(i) ? 'new' : text.startsWith('missing') ? text : `partial (${text.length} chars)`);
  }
  return out;
}

async function tempFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.name.includes('.codespace-')) found.push(e.name);
  }
  return found;
}

describe('atomic writes', function () {
  this.timeout(180_000);
  let world: PatchWorld | undefined;

  afterEach(async () => {
    await world?.dispose();
    world = undefined;
  });

  it('a reader polling all 200 targets during repeated 200-file applies never sees one missing or partial', async () => {
    world = await openPatchWorld(bulkFiles());
    const manifest = path.join(world.tmp, 'manifest.json');
    const allowed: Record<string, [string, string]> = {};
    for (let i = 0; i < BULK_FILES; i++) allowed[world.abs(bulkName(i))] = [hex(oldContent(i)), hex(newContent(i))];
    await fsp.writeFile(manifest, JSON.stringify(allowed));
    const stop = await startPoller(manifest);
    let report;
    try {
      for (let round = 0; round < 6; round++) {
        const r: { status: string } = await world.apply({ ...bulkPatch(round % 2 === 1), operation_key: `round-${round}` });
        assert.equal(r.status, 'applied');
      }
    } finally {
      report = await stop();
    }
    assert.ok(report.reads > BULK_FILES * 6, `the reader ran (${report.reads} reads)`);
    assert.deepEqual({ missing: report.missing, partial: report.partial, examples: report.examples }, { missing: 0, partial: 0, examples: [] });
    assert.deepEqual(await tempFiles(world.root), []);
  });

  it('a SIGKILL at a random moment of a 200-file apply leaves every file whole; the next start removes temp files and settles the operation', async () => {
    const rounds = 8;
    const seen = new Set<string>();
    // The first round runs to completion, to learn how long the write phase takes here.
    let duration = 0;
    for (let round = 0; round < rounds; round++) {
      const dirs = await makeDirs();
      await writeFiles(dirs.root, bulkFiles());
      const delay = round === 0 ? Number.POSITIVE_INFINITY : Math.floor(Math.random() * duration);
      const child = fork(path.join(HELPERS, 'bulkPatchChild.js'), [dirs.storage, dirs.root], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      let started = 0;
      let finished = false;
      child.on('message', (m) => {
        if (m === 'go') {
          started = Date.now();
          if (Number.isFinite(delay)) setTimeout(() => child.kill('SIGKILL'), delay);
        }
        if (m === 'done') {
          finished = true;
          if (round === 0) duration = Date.now() - started;
        }
      });
      const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
      if (round === 0) assert.equal(exit.code, 0, stderr);
      else assert.ok(exit.signal === 'SIGKILL' || exit.code === 0, `child ended with ${exit.code}: ${stderr}`);

      const after = await states(dirs.root);
      const bad = after.filter((s) => s !== 'old' && s !== 'new');
      assert.deepEqual(bad, [], `round ${round} (kill after ${delay} ms): files not whole`);

      world = await openPatchWorld({}, { dirs });
      assert.deepEqual(await tempFiles(dirs.root), [], `round ${round}: temp files left after the restart`);
      const st = await world.status({ operation_key: BULK_KEY }).catch(() => undefined);
      const news = after.filter((s) => s === 'new').length;
      const expected = news === BULK_FILES ? 'applied' : news === 0 ? (st === undefined ? 'none' : 'not_applied') : 'unknown';
      assert.equal(st?.status ?? 'none', expected, `round ${round}: ${news} of ${BULK_FILES} files new`);
      seen.add(finished ? 'finished' : `${expected}`);
      await world.dispose();
      world = undefined;
    }
    console.log(`      outcomes: ${[...seen].join(', ')} (write phase ≈ ${duration} ms)`);
  });
});
