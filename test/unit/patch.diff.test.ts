import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { unifiedDiff } from '../../src/features/patches/common/diff';
import { parsePatch } from '../../src/features/patches/common/parser';
import { planPatch } from '../../src/features/patches/common/plan';

/** A small deterministic PRNG so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let tmp = '';

/**
 * Checks with git that `diff` turns `before` into `after` exactly: writes `before` (unless it is an add),
 * runs `git apply --check` and `git apply`, and reads the result back. Diffs without context need
 * `--unidiff-zero`, since git otherwise anchors such hunks to the start or end of the file.
 */
function gitApplies(name: string, before: string | null, after: string | null, diff: string, zeroContext = false): void {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  if (before !== null) fs.writeFileSync(path.join(dir, name), before, 'utf8');
  fs.writeFileSync(path.join(dir, 'change.diff'), diff, 'utf8');
  const extra = zeroContext ? ['--unidiff-zero'] : [];
  for (const args of [['apply', '--check', ...extra, 'change.diff'], ['apply', ...extra, 'change.diff']]) {
    const r = spawnSync('git', ['-c', 'core.autocrlf=false', '-c', 'apply.whitespace=nowarn', ...args], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, `git ${args.join(' ')} failed: ${r.stderr}\n--- diff ---\n${diff.slice(0, 2000)}`);
  }
  if (after === null) assert.equal(fs.existsSync(path.join(dir, name)), false, 'the file is deleted');
  else assert.equal(fs.readFileSync(path.join(dir, name), 'utf8'), after, 'git reproduces the after content');
}

describe('unifiedDiff', () => {
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-diff-'));
  });
  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('prints a git-style hunk with three lines of context', () => {
    const before = 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n';
    const after = 'l1\nl2\nl3\nl4\nL5\nl6\nl7\nl8\nl9\n';
    assert.equal(unifiedDiff('f.txt', 'f.txt', before, after), ['--- a/f.txt', '+++ b/f.txt', '@@ -2,7 +2,7 @@', ' l2', ' l3', ' l4', '-l5', '+L5', ' l6', ' l7', ' l8', ''].join('\n'));
  });

  it('merges nearby changes into one hunk and splits distant ones', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const near = [...lines];
    near[4] = 'X';
    near[9] = 'Y';
    assert.equal((unifiedDiff('f', 'f', `${lines.join('\n')}\n`, `${near.join('\n')}\n`).match(/^@@/gm) ?? []).length, 1);
    const far = [...lines];
    far[2] = 'X';
    far[25] = 'Y';
    const d = unifiedDiff('f', 'f', `${lines.join('\n')}\n`, `${far.join('\n')}\n`);
    assert.deepEqual(d.match(/^@@.*@@$/gm), ['@@ -1,6 +1,6 @@', '@@ -23,7 +23,7 @@']);
  });

  it('uses /dev/null and zero ranges for an add and a delete', () => {
    assert.equal(unifiedDiff(null, 'n.txt', '', 'a\nb\n'), '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n');
    assert.equal(unifiedDiff('d.txt', null, 'only\n', ''), '--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-only\n');
    assert.equal(unifiedDiff(null, 'e.txt', '', ''), '--- /dev/null\n+++ b/e.txt\n');
  });

  it('returns nothing for equal texts', () => {
    assert.equal(unifiedDiff('a', 'a', 'x\ny', 'x\ny'), '');
  });

  it('marks a missing final newline on either side', () => {
    assert.equal(unifiedDiff('f', 'f', 'a\nb', 'a\nb\n'), '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n');
    assert.equal(unifiedDiff('f', 'f', 'a\nb\n', 'a\nc'), '--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n');
    assert.equal(unifiedDiff('f', 'f', 'x\na\nb', 'y\na\nb'), '--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-x\n+y\n a\n b\n\\ No newline at end of file\n');
  });

  it('is reproduced by git apply (fixed cases)', () => {
    const cases: [string | null, string | null][] = [
      ['a\nb\nc\n', 'a\nB\nc\n'],
      ['a\nb', 'a\nb\n'],
      ['a\nb\n', 'a\nb'],
      ['a\r\nb\r\nc\r\n', 'a\r\nb2\r\nb3\r\nc\r\n'],
      ['\uFEFFbom\nline\n', '\uFEFFBOM\nline\n'],
      ['naïve ☕\n👨‍👩‍👧\nשלום\n', 'naïve ☕\n👍\nשלום\nمرحبا\n'],
      [null, 'new\nfile\n'],
      ['gone\nsoon\n', null],
      ['x\n', ''],
      ['', 'y\n'],
    ];
    cases.forEach(([b, a], i) => {
      const name = `f${i}.txt`;
      gitApplies(name, b, a, unifiedDiff(b === null ? null : name, a === null ? null : name, b ?? '', a ?? ''));
    });
  });

  it('is reproduced by git apply (random edits, varying context)', function () {
    // Runs git apply once per case: seconds on a quiet machine, past 20 s on a loaded one.
    this.timeout(120_000);
    const rand = rng(42);
    const vocab = ['{', '}', '', 'return x;', 'let a = 1;', 'foo();', 'bar();', '// note', '  indent', 'if (x) {'];
    for (let n = 0; n < 40; n++) {
      const len = Math.floor(rand() * 60);
      const a = Array.from({ length: len }, () => vocab[Math.floor(rand() * vocab.length)] as string);
      const b = [...a];
      const edits = Math.floor(rand() * 8);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * (b.length + 1));
        const op = rand();
        if (op < 0.35) b.splice(at, 1);
        else if (op < 0.7) b.splice(at, 0, vocab[Math.floor(rand() * vocab.length)] as string, `new ${n}.${e}`);
        else b[at] = `changed ${n}.${e}`;
      }
      const ta = a.join('\n') + (rand() < 0.7 ? '\n' : '');
      const tb = b.join('\n') + (rand() < 0.7 ? '\n' : '');
      if (ta === tb) continue;
      const ctx = Math.floor(rand() * 4);
      gitApplies(`r${n}.txt`, ta, tb, unifiedDiff(`r${n}.txt`, `r${n}.txt`, ta, tb, ctx), ctx === 0);
    }
  });

  it('handles a 5 MB file with 100 hunks, through the planner and git apply', async () => {
    const rand = rng(7);
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i} ${'x'.repeat(30 + Math.floor(rand() * 20))};`);
    const before = `${lines.join('\n')}\n`;
    assert.ok(before.length >= 5_000_000);
    // A V4A patch with 100 hunks spread across the file.
    const body: string[] = ['*** Begin Patch', '*** Update File: big.txt'];
    const expected = [...lines];
    for (let h = 0; h < 100; h++) {
      const at = h * 1000 + 500;
      body.push('@@', ` ${lines[at - 1] as string}`, `-${lines[at] as string}`, `+changed ${h}`, `+added ${h}`, ` ${lines[at + 1] as string}`);
      expected[at] = `changed ${h}\nadded ${h}`;
    }
    body.push('*** End Patch');
    const planned = await planPatch(parsePatch(body.join('\n')), (rel) => Promise.resolve(rel === 'big.txt' ? { bytes: new TextEncoder().encode(before) } : undefined));
    const file = planned.files[0];
    assert.ok(file?.after !== undefined);
    const after = new TextDecoder().decode(file.after);
    assert.equal(after, `${expected.join('\n')}\n`);
    assert.equal((file.diff.match(/^@@/gm) ?? []).length, 100);
    gitApplies('big.txt', before, after, file.diff);
  });

  it('stays correct when two large texts share nothing (no minimal diff needed)', () => {
    const rand = rng(99);
    const a = Array.from({ length: 30_000 }, () => `a${Math.floor(rand() * 1000)}`).join('\n');
    const b = Array.from({ length: 30_000 }, () => `b${Math.floor(rand() * 1000)}`).join('\n');
    gitApplies('swap.txt', a, b, unifiedDiff('swap.txt', 'swap.txt', a, b));
  });

  it('stays correct for a large text with many repeated lines and scattered edits', () => {
    const rand = rng(5);
    const a = Array.from({ length: 40_000 }, () => ['{', '}', '', 'return;'][Math.floor(rand() * 4)] as string);
    const b = [...a];
    for (let i = 0; i < 300; i++) b.splice(Math.floor(rand() * b.length), 1, `edit ${i}`);
    const ta = `${a.join('\n')}\n`;
    const tb = `${b.join('\n')}\n`;
    gitApplies('rep.txt', ta, tb, unifiedDiff('rep.txt', 'rep.txt', ta, tb));
  });
});
