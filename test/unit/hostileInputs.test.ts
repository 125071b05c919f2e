import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { PATCH_LIMITS } from '../../src/features/patches/common/parser';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { STALL_BOUND_MS, whileHostile } from './helpers/stallProbe';
import { ok, toolError } from './helpers/workspaceFixture';

/**
 * Hostile but legal inputs, each against the real services over a real MCP client, while a second session on another
 * workspace keeps calling `read`: the hostile call finishes or fails with the limit it hit, the other session is
 * answered meanwhile, and the event loop never stalls for long.
 */
describe('hostile inputs do not stall the extension host', function () {
  this.timeout(120_000);
  let hostile: PatchWorld;
  let other: PatchWorld;
  let otherReads = 0;
  const ordinary = async (): Promise<void> => {
    const r = await other.read('hello.txt');
    assert.equal(r.content, 'hello\n');
    otherReads++;
  };

  beforeEach(async () => {
    other = await openPatchWorld({ 'hello.txt': 'hello\n' });
    otherReads = 0;
  });
  afterEach(async () => {
    await hostile?.dispose();
    await other.dispose();
  });

  it('find with a pattern of a thousand stars', async () => {
    const files: Record<string, string> = {};
    for (let d = 0; d < 40; d++) for (let f = 0; f < 25; f++) files[`d${d}/${'n'.repeat(60)}${f}.txt`] = '';
    hostile = await openPatchWorld(files);
    const probe = await whileHostile(() => hostile.call('find', { workspace_id: WS_ID, pattern: `**/${'*'.repeat(990)}x` }), ordinary);
    assert.equal(probe.outcome.status, 'fulfilled');
    const r = ok<{ paths: string[] }>((probe.outcome as PromiseFulfilledResult<Awaited<ReturnType<PatchWorld['call']>>>).value);
    assert.deepEqual(r.paths, []);
    assert.ok(probe.maxDelayMs < STALL_BOUND_MS, `event loop stalled ${probe.maxDelayMs} ms`);
    assert.ok(otherReads >= 1);
  });

  it('a hunk whose context is a long run of identical lines', async () => {
    // 200,000 identical lines, then the line to change. A naive matcher compares up to 100,000 lines at each of
    // 100,000 places, three times (one per tolerance level).
    const body = `${'a\n'.repeat(200_000)}b\n`;
    hostile = await openPatchWorld({ 'same.txt': body });
    const hunk = ['@@', ...Array.from({ length: 100_000 }, () => ' a'), '-b', '+B'].join('\n');
    const probe = await whileHostile(
      () => hostile.apply({ patch: v4a('*** Update File: same.txt', hunk), expected_versions: { 'same.txt': sha256(body) }, operation_key: 'same' }),
      ordinary,
    );
    assert.equal(probe.outcome.status, 'fulfilled', String((probe.outcome as PromiseRejectedResult).reason));
    assert.equal((await fsp.readFile(hostile.abs('same.txt'), 'utf8')).endsWith('a\nB\n'), true);
    assert.ok(probe.answeredDuring >= 1, 'the other session was answered while the patch was planned');
    assert.ok(probe.maxDelayMs < STALL_BOUND_MS, `event loop stalled ${probe.maxDelayMs} ms`);
  });

  it('a hunk of identical lines that matches nowhere fails with the context error, not after minutes', async () => {
    const body = `b\n${'a\n'.repeat(150_000)}`;
    hostile = await openPatchWorld({ 'same.txt': body });
    const hunk = ['@@', ...Array.from({ length: 75_000 }, () => ' a'), '-b', '+B'].join('\n');
    const probe = await whileHostile(
      () => hostile.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Update File: same.txt', hunk), expected_versions: { 'same.txt': sha256(body) }, operation_key: 'nowhere' }),
      ordinary,
    );
    assert.equal(probe.outcome.status, 'fulfilled');
    const e = toolError((probe.outcome as PromiseFulfilledResult<Awaited<ReturnType<PatchWorld['call']>>>).value);
    assert.equal(e.code, 'PATCH_CONTEXT_NOT_FOUND');
    assert.ok(probe.maxDelayMs < STALL_BOUND_MS, `event loop stalled ${probe.maxDelayMs} ms`);
    // The workspace is released: the next patch runs.
    const ok2 = await hostile.apply({ patch: v4a('*** Add File: next.txt', '+n'), expected_versions: {}, operation_key: 'next' });
    assert.equal((ok2 as { status: string }).status, 'applied');
  });

  it('tens of thousands of Add File sections stop at the section limit, before any file is looked at', async () => {
    hostile = await openPatchWorld();
    const sections = Array.from({ length: 30_000 }, (_, i) => `*** Add File: many/f${i}.txt\n+${i}`);
    const probe = await whileHostile(
      () => hostile.call('apply_patch', { workspace_id: WS_ID, patch: v4a(...sections), expected_versions: {}, operation_key: 'many' }),
      ordinary,
    );
    assert.equal(probe.outcome.status, 'fulfilled');
    const e = toolError((probe.outcome as PromiseFulfilledResult<Awaited<ReturnType<PatchWorld['call']>>>).value);
    assert.equal(e.code, 'TOO_LARGE');
    assert.equal(e.details?.limit, 'maxFiles');
    assert.equal(e.details?.max, PATCH_LIMITS.maxFiles);
    assert.match(e.message, /more than 1000 file sections/);
    assert.equal(hostile.spy.calls.filter((c) => c.startsWith('stat ')).length, 0, 'no file was looked up');
    await assert.rejects(fsp.stat(path.join(hostile.root, 'many')));
    assert.ok(probe.maxDelayMs < STALL_BOUND_MS, `event loop stalled ${probe.maxDelayMs} ms`);
  });

  it('the largest allowed patch (1000 sections of 16 KiB) is answered while the other session keeps working', async () => {
    hostile = await openPatchWorld();
    const line = `+${'x'.repeat(60)}`;
    const content = Array.from({ length: 256 }, () => line).join('\n');
    const sections = Array.from({ length: PATCH_LIMITS.maxFiles }, (_, i) => `*** Add File: big/d${i % 20}/f${i}.txt\n${content}`);
    const probe = await whileHostile(
      () => hostile.apply({ patch: v4a(...sections), expected_versions: {}, operation_key: 'big', check_only: true }),
      ordinary,
    );
    assert.equal(probe.outcome.status, 'fulfilled', String((probe.outcome as PromiseRejectedResult).reason));
    assert.equal((probe.outcome as PromiseFulfilledResult<{ status: string }>).value.status, 'checked');
    assert.ok(probe.answeredDuring >= 1, 'the other session was answered while the patch was checked');
    assert.ok(probe.maxDelayMs < STALL_BOUND_MS, `event loop stalled ${probe.maxDelayMs} ms`);
  });
});
