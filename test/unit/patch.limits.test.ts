import * as assert from 'node:assert/strict';
import { ToolError } from '../../src/base/errors';
import { Pacer } from '../../src/features/patches/common/pacer';
import { PATCH_LIMITS, parsePatch, parsePatchPaced } from '../../src/features/patches/common/parser';
import { contentVersionSteps, planPatch } from '../../src/features/patches/common/plan';
import { runSync } from '../../src/features/patches/common/pacer';
import { contentVersion } from '../../src/features/patches/common/version';
import { MAX_UPDATE_FILE_BYTES, planFileUpdate } from '../../src/features/patches/common/planner';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);
const v4a = (...sections: string[]): string => ['*** Begin Patch', ...sections, '*** End Patch'].join('\n');

function thrown(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    assert.ok(ToolError.is(err), `expected a ToolError, got ${String(err)}`);
    return err;
  }
  assert.fail('did not throw');
}

function hunksOf(patch: string): ReturnType<typeof parsePatch>['files'][number] & { kind: 'update' } {
  const op = parsePatch(patch).files[0];
  assert.ok(op?.kind === 'update');
  return op;
}

describe('patch engine bounds and linear matching', () => {
  it('refuses a patch over maxPatchChars before reading it, naming the limit', () => {
    const text = v4a('*** Add File: a.txt', `+${'x'.repeat(PATCH_LIMITS.maxPatchChars)}`);
    const e = thrown(() => parsePatch(text));
    assert.equal(e.code, 'TOO_LARGE');
    assert.deepEqual(e.details, { limit: 'maxPatchChars', max: PATCH_LIMITS.maxPatchChars, actual: text.length });
  });

  it('refuses the section after maxFiles and the hunk after maxHunksPerFile, naming the limit and the line', () => {
    const files = Array.from({ length: PATCH_LIMITS.maxFiles + 1 }, (_, i) => `*** Delete File: f${i}.txt`);
    assert.equal(parsePatch(v4a(...files.slice(0, -1))).files.length, PATCH_LIMITS.maxFiles);
    const e = thrown(() => parsePatch(v4a(...files)));
    assert.equal(e.code, 'TOO_LARGE');
    assert.equal(e.details?.limit, 'maxFiles');
    assert.equal(e.details?.line, PATCH_LIMITS.maxFiles + 2);

    const hunks = Array.from({ length: PATCH_LIMITS.maxHunksPerFile + 1 }, (_, i) => `@@\n-l${i}\n+L${i}`);
    assert.equal(hunksOf(v4a('*** Update File: f.txt', ...hunks.slice(0, -1))).hunks.length, PATCH_LIMITS.maxHunksPerFile);
    const h = thrown(() => parsePatch(v4a('*** Update File: f.txt', ...hunks)));
    assert.equal(h.code, 'TOO_LARGE');
    assert.equal(h.details?.limit, 'maxHunksPerFile');
    assert.equal(h.details?.path, 'f.txt');
  });

  it('refuses to update a file over max_update_file_bytes before decoding it', () => {
    const big = new Uint8Array(MAX_UPDATE_FILE_BYTES + 1).fill(0x61);
    const e = thrown(() => planFileUpdate('big.txt', big, hunksOf(v4a('*** Update File: big.txt', '@@', '-a', '+b')).hunks));
    assert.equal(e.code, 'TOO_LARGE');
    assert.equal(e.details?.limit, 'max_update_file_bytes');
  });

  it('the paced parser reads what the one-shot parser reads (CRLF, blank edges, every section kind)', async () => {
    const text = `\r\n  \n*** Begin Patch\r\n*** Add File: a.txt\r\n+one\r\n+\r\n*** Update File: b.txt\n*** Move to: c.txt\n@@ anchor\n ctx\n-old\r\n+new\n\n*** End of File\n*** Delete File: d.txt\n*** End Patch  \n\n`;
    assert.deepEqual(await parsePatchPaced(text, new Pacer()), parsePatch(text));
    assert.deepEqual(parsePatch(text).files.map((f) => f.patchLine), [4, 7, 15]);
  });

  it('finds a hunk in a periodic file where every hunk line is common (the automaton path), and sees ambiguity', () => {
    // 2,000 periods of 99 "a" lines and one "b", with a run of 100 more "a" lines in the middle. Every line of the
    // hunks below occurs thousands of times, so no rare line can narrow the search.
    const period = `${'a\n'.repeat(99)}b\n`;
    const file = `${period.repeat(1000)}${'a\n'.repeat(100)}${period.repeat(1000)}`;
    const ctx = (text: string): string[] => text.split('\n').slice(0, -1).map((l) => ` ${l}`);
    const want = [...ctx(`${period.repeat(500)}${'a\n'.repeat(99)}`), '-a', '+A'];
    const update = planFileUpdate('p.txt', enc(file), hunksOf(v4a('*** Update File: p.txt', '@@', ...want)).hunks);
    const lines = file.split('\n');
    lines[50_000 + 50_000 + 99] = 'A';
    assert.equal(dec(update.after), lines.join('\n'));

    const e = thrown(() => planFileUpdate('p.txt', enc(period.repeat(2000)), hunksOf(v4a('*** Update File: p.txt', '@@', ...ctx(period.repeat(500)), '-a', '+A')).hunks));
    assert.equal(e.code, 'PATCH_AMBIGUOUS');
    assert.deepEqual(e.details?.candidates, [1, 101, 201, 301, 401]);
  });

  it('matches among lines no hunk names (they share one id): exact, tolerant, absent and ambiguous hunks', () => {
    // 20,000 distinct lines, none of which the hunks name, around the few they do.
    const filler = Array.from({ length: 20_000 }, (_, i) => `filler ${i}`);
    const file = [...filler.slice(0, 10_000), 'target', 'next  ', ...filler.slice(10_000), '  twin', 'twin', ''].join('\n');
    const exact = planFileUpdate('f.txt', enc(file), hunksOf(v4a('*** Update File: f.txt', '@@', '-target', '+changed', ' next  ')).hunks);
    assert.equal(dec(exact.after), file.replace('\ntarget\n', '\nchanged\n'));
    // `next` is in the file only with trailing spaces: found ignoring trailing whitespace, and the file's text kept.
    const tolerant = planFileUpdate('f.txt', enc(file), hunksOf(v4a('*** Update File: f.txt', '@@', ' target', '-next', '+after')).hunks);
    assert.equal(dec(tolerant.after), file.replace('\nnext  \n', '\nafter\n'));
    // A line the file does not have at any level: not found, not matched against the shared id of the filler.
    assert.equal(thrown(() => planFileUpdate('f.txt', enc(file), hunksOf(v4a('*** Update File: f.txt', '@@', '-missing', '+x')).hunks)).code, 'PATCH_CONTEXT_NOT_FOUND');
    // Two lines that are one ignoring surrounding whitespace: ambiguous at that level.
    const e = thrown(() => planFileUpdate('f.txt', enc(file.replace('\ntwin\n', '\n twin \n')), hunksOf(v4a('*** Update File: f.txt', '@@', '-twin', '+x')).hunks));
    assert.equal(e.code, 'PATCH_AMBIGUOUS');
    assert.deepEqual(e.details?.candidates, [20_003, 20_004]);
  });

  it('drops trailing blank context lines the file cannot have in one step, keeping the old result', () => {
    const file = 'a\n\nb\n';
    const lines = ['@@', ' a', '-', '+x', ' b', ...Array.from({ length: 50_000 }, () => '')];
    const update = planFileUpdate('f.txt', enc(file), hunksOf(v4a('*** Update File: f.txt', ...lines)).hunks);
    assert.equal(dec(update.after), 'a\nx\nb\n');
  });

  it('hashes a version in chunks to the same value as in one go', () => {
    for (const size of [0, 1, 1024 * 1024 - 1, 1024 * 1024, 3 * 1024 * 1024 + 7]) {
      const bytes = new Uint8Array(size).map((_, i) => (i * 31) & 0xff);
      assert.equal(runSync(contentVersionSteps(bytes)), contentVersion(bytes), `${size} bytes`);
    }
  });

  it('a pacer past its deadline fails the plan with TIMEOUT naming the limit', async () => {
    const file = 'a\n'.repeat(300_000);
    const parsed = parsePatch(v4a('*** Update File: f.txt', '@@', ' a', '-a', '+b', '*** End of File'));
    let now = 0;
    const pacer = new Pacer({ deadlineMs: 1000, sliceMs: 1, now: () => (now += 100) });
    await assert.rejects(planPatch(parsed, () => Promise.resolve({ bytes: enc(file) }), { pacer }), (e: unknown) => {
      assert.ok(ToolError.is(e, 'TIMEOUT'), String(e));
      assert.equal(e.details?.limit, 'patch_deadline_ms');
      return true;
    });
  });
});
