import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { TURN_SLICE_MS } from '../../src/kernel/node/confinedFs';
import { NodeWorkspaceFs } from '../../src/kernel/node/nodeWorkspaceFs';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { makeTree, removeTree } from './helpers/workspaceFixture';

/**
 * A one-file patch needs no worker of libuv's thread pool, apart from the ledger's fsyncs: every other step is a
 * synchronous call on the page cache (src/kernel/node/confinedFs.ts says why). Proven by occupying every worker with an open
 * of a FIFO that has no writer yet, and checking that reads, writes and the patch's file steps still complete.
 */
describe('confined file access on a busy thread pool', () => {
  let base: string;
  let root: string;
  let fifos: string[] = [];
  let blocked: Promise<unknown>[] = [];
  const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4) || 4;

  /** Occupies every thread-pool worker until `release`. */
  function occupyPool(): void {
    fifos = Array.from({ length: poolSize }, (_, i) => path.join(base, `pool-${i}`));
    for (const f of fifos) execFileSync('mkfifo', [f]);
    blocked = fifos.map((f) => fs.promises.open(f, 'r').then((h) => h.close()));
  }

  function release(): Promise<unknown> {
    // Opening the write end completes each blocked open (a reader is waiting in it), which frees its worker.
    for (const f of fifos) fs.closeSync(fs.openSync(f, 'w'));
    fifos = [];
    return Promise.all(blocked);
  }

  /** `work` settles while the pool is occupied (generous deadline: the machine may be loaded), or the test fails. */
  async function completesWithoutThreadPool<T>(work: () => Promise<T>): Promise<T> {
    occupyPool();
    try {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the call waited for a thread-pool worker')), 20_000);
      });
      try {
        return await Promise.race([work(), deadline]);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await release();
    }
  }

  beforeEach(async () => {
    base = await makeTree({ 'proj/src/a.ts': 'export const a = 1;\n' }, 'codespace-pool-');
    root = fs.realpathSync(path.join(base, 'proj'));
  });
  afterEach(() => removeTree(base));

  it('a loop of synchronous file operations still gives timers and I/O their turns', async () => {
    // Every call below is answered by synchronous system calls; the loop must still let the event loop run at
    // least every TURN_SLICE_MS, or a timer due at once would wait for the whole loop.
    const disk = new NodeWorkspaceFs();
    const file = path.join(root, 'src', 'a.ts');
    const sawTimer: number[] = [];
    let calls = 0;
    const timer = setTimeout(() => sawTimer.push(calls), 0);
    try {
      const started = performance.now();
      // Run well past several slices (bounded by count, not by time, so a slow machine only makes it longer).
      while (calls < 20_000 && (sawTimer.length === 0 || performance.now() - started < 10 * TURN_SLICE_MS)) {
        await disk.readFile(file, { within: root, maxBytes: 1024 });
        calls++;
      }
    } finally {
      clearTimeout(timer);
    }
    assert.equal(sawTimer.length, 1, 'the timer ran while the loop went on');
    assert.ok((sawTimer[0] as number) < calls, `the timer ran during the loop (after ${sawTimer[0]} of ${calls} calls)`);
  });

  it('reads, inspects, writes, links and deletes a small file without a worker', async () => {
    const disk = new NodeWorkspaceFs();
    const file = path.join(root, 'src', 'a.ts');
    await completesWithoutThreadPool(async () => {
      assert.equal(Buffer.from((await disk.readFile(file, { within: root, maxBytes: 1024 })).bytes).toString(), 'export const a = 1;\n');
      assert.equal((await disk.inspect(file, { within: root, expect: 'file' })).type, 'file');
      assert.equal((await disk.stat(file))?.type, 'file');
      assert.equal((await disk.lstat(file))?.type, 'file');
      assert.equal(await disk.realpath(file), file);
      await disk.writeFile(path.join(root, 'new', 'b.ts'), Buffer.from('b\n'), { within: root, tag: 'op-1' });
      await disk.createLink('b.ts', path.join(root, 'new', 'link'), { within: root });
      assert.equal(await disk.readLink(path.join(root, 'new', 'link')), 'b.ts');
      await disk.deleteFile(path.join(root, 'new', 'link'), { within: root });
      await disk.deleteFile(path.join(root, 'new', 'b.ts'), { within: root });
      await disk.removeEmptyFolder(path.join(root, 'new'), { within: root });
    });
    assert.deepEqual(fs.readdirSync(root), ['src']);
  });

  it('validates and plans a one-file patch without a worker (then writes it: only the ledger fsyncs wait)', async () => {
    const world = await openPatchWorld({ 'src/a.ts': 'export const a = 1;\n' });
    try {
      const { patches, workspaces } = world.assembled;
      const ws = workspaces.get(WS_ID);
      const prepared = await completesWithoutThreadPool(() =>
        patches.prepare(ws, {
          workspace_id: WS_ID,
          patch: v4a('*** Update File: src/a.ts\n@@\n-export const a = 1;\n+export const a = 2;'),
          expected_versions: { 'src/a.ts': sha256('export const a = 1;\n') },
          operation_key: 'k1',
        }),
      );
      assert.ok('intent' in prepared);
      assert.equal((await patches.commit(prepared.intent)).status, 'applied');
      assert.equal(fs.readFileSync(world.abs('src/a.ts'), 'utf8'), 'export const a = 2;\n');
    } finally {
      await world.dispose();
    }
  });
});
