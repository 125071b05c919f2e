/**
 * Files that would stall or confuse a naive reader: a named pipe (FIFO) with no writer, files far over the size
 * limits (sparse, so the test is cheap), a file that keeps vanishing and reappearing, and over-long paths. Each gets
 * a specific error at once, and ordinary calls keep being answered meanwhile.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';

function code(r: CallToolResult): string {
  assert.equal(r.isError, true, `expected an error, got ${JSON.stringify(r.structuredContent)}`);
  const first = r.content[0];
  return (JSON.parse(first?.type === 'text' ? first.text : '{}') as { error: { code: string } }).error.code;
}

describe('hostile files', function () {
  this.timeout(60_000);
  let world: PatchWorld;

  beforeEach(async () => {
    world = await openPatchWorld({ 'ok.txt': 'fine\n' });
  });
  afterEach(async () => {
    await world.dispose();
  });

  it('a FIFO is refused at once by read and apply_patch, and never ties up the file thread pool', async () => {
    execFileSync('mkfifo', [world.abs('pipe')]);
    // More blocked opens than libuv has threads (4) would freeze every other file call if opens blocked.
    const hostile = await Promise.all([
      ...Array.from({ length: 6 }, () => world.call('read', { workspace_id: WS_ID, path: 'pipe' })),
      world.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Update File: pipe', '@@', '-a', '+b'), expected_versions: { pipe: sha256('a\n') }, operation_key: 'fifo-1' }),
      world.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Delete File: pipe'), expected_versions: { pipe: sha256('') }, operation_key: 'fifo-2' }),
    ]);
    for (const r of hostile) assert.equal(code(r), 'NOT_TEXT');
    const first = hostile[0]?.content[0];
    assert.match(first?.type === 'text' ? first.text : '', /named pipe \(FIFO\)/);
    // And the workspace is free: an ordinary read and patch go through.
    assert.equal((await world.read('ok.txt')).content, 'fine\n');
    const applied = await world.apply<{ status: string }>({ patch: v4a('*** Update File: ok.txt', '@@', '-fine', '+still fine'), expected_versions: { 'ok.txt': sha256('fine\n') }, operation_key: 'after-fifo' });
    assert.equal(applied.status, 'applied');
  });

  it('refuses files over the limits before reading them (TOO_LARGE naming the limit)', async () => {
    // Sparse files: their size is real, their blocks are not.
    await fsp.writeFile(world.abs('huge.log'), '');
    await fsp.truncate(world.abs('huge.log'), 300 * 1024 * 1024);
    await fsp.writeFile(world.abs('big.txt'), '');
    await fsp.truncate(world.abs('big.txt'), 100 * 1024 * 1024);
    const read = await world.call('read', { workspace_id: WS_ID, path: 'huge.log' });
    assert.equal(code(read), 'TOO_LARGE');
    const patch = await world.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Update File: big.txt', '@@', '-a', '+b'), expected_versions: { 'big.txt': sha256('x') }, operation_key: 'big' });
    assert.equal(code(patch), 'TOO_LARGE');
    const first = patch.content[0];
    const body = JSON.parse(first?.type === 'text' ? first.text : '{}') as { error: { message: string; details: { limit: number; size: number } } };
    assert.equal(body.error.details.limit, 64 * 1024 * 1024);
    assert.equal(body.error.details.size, 100 * 1024 * 1024);
    assert.match(body.error.message, /limit is 67108864 bytes/);
  });

  it('a file vanishing and reappearing under read answers the content or NOT_FOUND, never INTERNAL', async () => {
    const target = world.abs('flicker.txt');
    // Another process deletes and recreates the file as fast as it can.
    const flicker = spawn(process.execPath, ['-e', `
      const fs = require('fs'); let stop = false; process.on('SIGTERM', () => { stop = true; });
      (function loop() { for (let i = 0; i < 50; i++) { try { fs.writeFileSync(${JSON.stringify(target)}, 'here\\n'); fs.unlinkSync(${JSON.stringify(target)}); } catch {} }
        if (stop) process.exit(0); setImmediate(loop); })();`]);
    const seen: Record<string, number> = {};
    try {
      for (let i = 0; i < 1500; i++) {
        const r = await world.call('read', { workspace_id: WS_ID, path: 'flicker.txt' });
        const k = r.isError ? code(r) : `ok:${(r.structuredContent as { content: string }).content}`;
        seen[k] = (seen[k] ?? 0) + 1;
      }
    } finally {
      await new Promise<void>((resolve) => {
        flicker.once('exit', () => resolve());
        flicker.kill('SIGTERM');
      });
    }
    assert.deepEqual(Object.keys(seen).filter((k) => k !== 'NOT_FOUND' && k !== 'ok:here\n' && k !== 'ok:'), [], JSON.stringify(seen));
    assert.ok((seen.NOT_FOUND ?? 0) > 0, JSON.stringify(seen));
  });

  it('an over-long path is INVALID_ARGUMENTS naming the limit, for every file tool', async () => {
    const long = `${'a'.repeat(200)}/`.repeat(25) + 'f.txt';
    const segment = 'b'.repeat(300);
    for (const p of [long, segment]) {
      const calls = [
        world.call('read', { workspace_id: WS_ID, path: p }),
        world.call('apply_patch', { workspace_id: WS_ID, patch: v4a(`*** Add File: ${p}`, '+x'), expected_versions: {}, operation_key: `long-${p.length}` }),
      ];
      for (const r of await Promise.all(calls)) {
        assert.equal(code(r), 'INVALID_ARGUMENTS');
        const first = r.content[0];
        assert.match(first?.type === 'text' ? first.text : '', /limit is 4000 bytes|at most 255 bytes/);
      }
    }
    assert.equal(path.basename(world.abs('x')), 'x');
  });
});
