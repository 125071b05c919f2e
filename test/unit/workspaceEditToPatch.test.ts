import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { TextRange } from '../../src/features/editor/common/languageFeatures';
import { parsePatch } from '../../src/features/patches/common/parser';
import type { UpdateFileOp } from '../../src/features/patches/common/parser';
import { planFileUpdate } from '../../src/features/patches/common/planner';
import { workspaceEditToPatch } from '../../src/features/patches/common/workspaceEditToPatch';
import type { FileEdits } from '../../src/features/patches/common/workspaceEditToPatch';

const enc = new TextEncoder();
const dec = new TextDecoder();
const sha = (b: Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const r = (line: number, character: number, endLine: number, endCharacter: number): TextRange => ({ start: { line, character }, end: { line: endLine, character: endCharacter } });

/** Applies the generated patch the way apply_patch does, file by file, and returns the new contents. */
function applyGenerated(files: readonly FileEdits[]): Record<string, Uint8Array> {
  const built = workspaceEditToPatch(files);
  const parsed = parsePatch(built.patch);
  const out: Record<string, Uint8Array> = {};
  for (const op of parsed.files) {
    assert.equal(op.kind, 'update');
    const file = files.find((f) => f.path === op.path);
    assert.ok(file);
    assert.equal(built.expected_versions[op.path], sha(file.bytes), 'the patch expects the version the edits were made on');
    out[op.path] = planFileUpdate(op.path, file.bytes, (op as UpdateFileOp).hunks).after;
  }
  return out;
}

/** The edits applied to the text directly (the reference result). */
function direct(text: string, edits: FileEdits['edits']): string {
  const lines = text.split(/\r\n|\n/);
  const starts: number[] = [];
  for (let i = 0, at = 0; i < lines.length; i++) {
    starts.push(at);
    at += (lines[i] as string).length + (text.startsWith('\r\n', at + (lines[i] as string).length) ? 2 : 1);
  }
  const off = (p: { line: number; character: number }): number => (starts[p.line - 1] as number) + p.character - 1;
  return [...edits].sort((a, b) => off(b.range.start) - off(a.range.start)).reduce((t, e) => t.slice(0, off(e.range.start)) + e.newText + t.slice(off(e.range.end)), text);
}

describe('workspaceEditToPatch (a language server\'s edits as a V4A patch)', () => {
  it('converts a multi-file rename into one patch with each file\'s version', () => {
    const a = 'export function add(a: number, b: number) {\n  return a + b;\n}\n';
    const b = "import { add } from './a';\nconst x = add(1, add(2, 3));\n";
    const files: FileEdits[] = [
      { path: 'src/a.ts', bytes: enc.encode(a), edits: [{ range: r(1, 17, 1, 20), newText: 'plus' }] },
      { path: 'src/b.ts', bytes: enc.encode(b), edits: [r(1, 10, 1, 13), r(2, 11, 2, 14), r(2, 18, 2, 21)].map((range) => ({ range, newText: 'plus' })) },
    ];
    const built = workspaceEditToPatch(files);
    assert.deepEqual(Object.keys(built.expected_versions), ['src/a.ts', 'src/b.ts']);
    assert.deepEqual(built.files.map((f) => [f.path, f.edits]), [['src/a.ts', 1], ['src/b.ts', 3]]);
    const out = applyGenerated(files);
    assert.equal(dec.decode(out['src/a.ts']), a.replace('add', 'plus'));
    assert.equal(dec.decode(out['src/b.ts']), b.replaceAll('add', 'plus'));
  });

  it('grows the context until each hunk matches one place only (repeated lines)', () => {
    const lines = Array.from({ length: 60 }, () => 'value = value + 1;');
    lines[30] = 'value = value + 2;';
    const text = `${lines.join('\n')}\n`;
    // Rename the first `value` on line 31 and on line 5, among many identical lines.
    const edits = [{ range: r(31, 1, 31, 6), newText: 'count' }, { range: r(5, 1, 5, 6), newText: 'count' }];
    const out = applyGenerated([{ path: 'rep.ts', bytes: enc.encode(text), edits }]);
    assert.equal(dec.decode(out['rep.ts']), direct(text, edits));
  });

  it('keeps CRLF endings, a BOM and a missing final newline; handles several edits in one line and multi-line edits', () => {
    const crlf = 'let a = 1;\r\nlet b = a + a;\r\nlet c = b;\r\n';
    const e1 = [r(1, 5, 1, 6), r(2, 9, 2, 10), r(2, 13, 2, 14)].map((range) => ({ range, newText: 'alpha' }));
    assert.equal(dec.decode(applyGenerated([{ path: 'crlf.ts', bytes: enc.encode(crlf), edits: e1 }])['crlf.ts']), direct(crlf, e1));

    const bomText = 'const x = 1;\nconst y = x;';
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode(bomText)]);
    const e2 = [{ range: r(2, 11, 2, 12), newText: 'renamed' }, { range: r(1, 7, 1, 8), newText: 'renamed' }];
    const out2 = applyGenerated([{ path: 'bom.ts', bytes: bom, edits: e2 }])['bom.ts'] as Uint8Array;
    assert.deepEqual([...out2.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(dec.decode(out2.subarray(3)), direct(bomText, e2));

    const multi = 'function f(\n  a: number,\n  b: number,\n) {}\n';
    const e3 = [{ range: r(1, 12, 3, 12), newText: 'a: number, b: number' }];
    assert.equal(dec.decode(applyGenerated([{ path: 'm.ts', bytes: enc.encode(multi), edits: e3 }])['m.ts']), direct(multi, e3));
  });

  it('takes edits that reach the empty line after the final newline: a formatter replacing the whole document, an insertion at the very end', () => {
    const text = 'export function f( a:number ){return a}\nf(1)\n';
    const whole = 'export function f(a: number) {\n  return a;\n}\nf(1);\n';
    for (const eol of ['\n', '\r\n']) {
      const bytes = enc.encode(text.replace(/\n/g, eol));
      const want = whole.replace(/\n/g, eol);
      assert.equal(dec.decode(applyGenerated([{ path: 'f.ts', bytes, edits: [{ range: r(1, 1, 3, 1), newText: want }] }])['f.ts']), want);
      assert.equal(dec.decode(applyGenerated([{ path: 'f.ts', bytes, edits: [{ range: r(3, 1, 3, 1), newText: `g(2)${eol}` }] }])['f.ts']), `${text.replace(/\n/g, eol)}g(2)${eol}`);
    }
    // Removing the final newline is not something a patch expresses: refused, never a different result.
    assert.throws(() => workspaceEditToPatch([{ path: 'f.ts', bytes: enc.encode(text), edits: [{ range: r(2, 5, 3, 1), newText: '' }] }]), (e: { code?: string }) => e.code === 'PATCH_INVALID');
    // Unchanged edits are an empty patch when the caller says so (format of a formatted file).
    assert.equal(workspaceEditToPatch([{ path: 'f.ts', bytes: enc.encode(text), edits: [] }], 'empty').files.length, 0);
  });

  it('refuses edits that change nothing, and a carriage return inside a line', () => {
    const text = 'a\n';
    assert.throws(() => workspaceEditToPatch([{ path: 'a.ts', bytes: enc.encode(text), edits: [{ range: r(1, 1, 1, 2), newText: 'a' }] }]), /changes nothing/);
    assert.throws(() => workspaceEditToPatch([{ path: 'a.ts', bytes: enc.encode('a\rb\n'), edits: [{ range: r(1, 1, 1, 2), newText: 'x' }] }]), (e: { code?: string }) => e.code === 'PATCH_INVALID');
  });

  it('refuses edit positions outside the file and overlapping edits (a bug, never a silent wrong patch)', () => {
    const bytes = enc.encode('abc\n');
    assert.throws(() => workspaceEditToPatch([{ path: 'a.ts', bytes, edits: [{ range: r(9, 1, 9, 2), newText: 'x' }] }]), /outside/);
    assert.throws(() => workspaceEditToPatch([{ path: 'a.ts', bytes, edits: [{ range: r(1, 1, 1, 3), newText: 'x' }, { range: r(1, 2, 1, 4), newText: 'y' }] }]), /overlap/);
  });

  it('matches the direct application on random edits of random files (property)', () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const words = ['foo', 'bar', 'foo', '', '  x', 'foo bar foo'];
    for (let round = 0; round < 200; round++) {
      const count = 1 + rand(25);
      const eol = rand(2) ? '\r\n' : '\n';
      const lines = Array.from({ length: count }, () => words[rand(words.length)] as string);
      const text = lines.join(eol) + (rand(3) ? eol : '');
      const all = text.split(/\r\n|\n/);
      const edits: FileEdits['edits'][number][] = [];
      for (let i = 0; i < all.length; i++) {
        const line = all[i] as string;
        const at = line.indexOf('foo');
        if (at >= 0 && rand(2)) edits.push({ range: r(i + 1, at + 1, i + 1, at + 4), newText: 'renamed' });
      }
      if (edits.length === 0) continue;
      const out = applyGenerated([{ path: 'p.ts', bytes: enc.encode(text), edits }]);
      assert.equal(dec.decode(out['p.ts']), direct(text, edits), `round ${round}: ${JSON.stringify(text)}`);
    }
  });
});
