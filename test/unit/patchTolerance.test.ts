import * as assert from 'node:assert/strict';
import { ToolError } from '../../src/base/errors';
import { headerPath, parsePatch } from '../../src/features/patches/common/parser';
import { planFileUpdate } from '../../src/features/patches/common/planner';
import type { UpdateFileOp } from '../../src/features/patches/common/parser';

/**
 * The format's tolerance (blanks around every marker, at the start as at the end) and its errors: every parse error
 * names the line, what was expected and what was found, and only a last line that reads as patch content is said to
 * be possibly cut short.
 */
const enc = new TextEncoder();
const dec = new TextDecoder();

function update(patch: string, before: string): string {
  const op = parsePatch(patch).files[0] as UpdateFileOp;
  return dec.decode(planFileUpdate(op.path, enc.encode(before), op.hunks).after);
}

describe('patch format: blanks around markers', () => {
  const padded = ['', ' ', '  ', '\t', ' \t '];
  for (const lead of padded) {
    for (const trail of padded) {
      it(`markers with ${JSON.stringify(lead)} before and ${JSON.stringify(trail)} after`, () => {
        const m = (s: string): string => `${lead}${s}${trail}`;
        const text = [
          m('*** Begin Patch'),
          m('*** Update File: a.txt'),
          m('*** Move to: b.txt'),
          m('@@ one'),
          '-two',
          '+TWO',
          m('*** End of File'),
          m('*** Add File: c.txt'),
          '+c',
          m('*** Delete File: d.txt'),
          m('*** End Patch'),
        ].join('\n');
        const files = parsePatch(text).files;
        assert.deepEqual(
          files.map((f) => [f.kind, f.path, f.kind === 'update' ? f.moveTo : undefined]),
          [
            ['update', 'a.txt', 'b.txt'],
            ['add', 'c.txt', undefined],
            ['delete', 'd.txt', undefined],
          ],
        );
        const hunk = (files[0] as UpdateFileOp).hunks[0];
        assert.deepEqual(hunk?.anchors, ['one']);
        assert.equal(hunk?.endOfFile, true);
      });
    }
  }

  it('blank lines between file sections are skipped', () => {
    const files = parsePatch('*** Begin Patch\n\n*** Delete File: a.txt\n\n  \n*** Delete File: b.txt\n*** End Patch').files;
    assert.deepEqual(files.map((f) => f.path), ['a.txt', 'b.txt']);
  });

  it('inside a hunk, a context line whose text only looks like a marker stays content', () => {
    const patch = '*** Begin Patch\n*** Update File: n.md\n@@\n  *** NOTE ***\n @@ -1,2 +1,2 @@\n-old\n+new\n*** End Patch';
    assert.equal(update(patch, ' *** NOTE ***\n@@ -1,2 +1,2 @@\nold\n'), ' *** NOTE ***\n@@ -1,2 +1,2 @@\nnew\n');
  });

  it('a hunk that only adds lines goes after its anchor, or at the end of the file without one', () => {
    assert.equal(update('*** Begin Patch\n*** Update File: a\n@@ one\n+new\n*** End Patch', 'one\ntwo\n'), 'one\nnew\ntwo\n');
    assert.equal(update('*** Begin Patch\n*** Update File: a\n@@\n+new\n*** End Patch', 'one\ntwo\n'), 'one\ntwo\nnew\n');
    assert.equal(update('*** Begin Patch\n*** Update File: a\n+new\n*** End Patch', 'one\ntwo'), 'one\ntwo\nnew', 'no final newline stays none');
    assert.equal(update('*** Begin Patch\n*** Update File: a\n+new\n*** End Patch', ''), 'new\n');
  });

  it('context with ASCII dashes and quotes matches typographic ones, and the file keeps its own text', () => {
    const before = 'a \u2014 \u201cb\u201d\u00a0\u2018c\u2019\nold\n';
    assert.equal(update('*** Begin Patch\n*** Update File: a\n@@\n a - "b" \'c\'\n-old\n+new\n*** End Patch', before), 'a \u2014 \u201cb\u201d\u00a0\u2018c\u2019\nnew\n');
  });

  it('a JSON-string header path round-trips every awkward name', () => {
    for (const name of [' lead', 'trail ', 'new\nline', 'car\rriage', '"q"', 'tab\t', 'del\u007f', 'plain name.txt', 'a\\b']) {
      const files = parsePatch(`*** Begin Patch\n*** Add File: ${headerPath(name)}\n+x\n*** End Patch`).files;
      assert.equal(files[0]?.path, name);
    }
    assert.equal(headerPath('plain name.txt'), 'plain name.txt', 'a plain name is written as it is');
  });
});

describe('patch format: every parse error says where, what was expected and what was found', () => {
  const cases: [string, string, number, RegExp][] = [
    ['empty', '', 1, /expected "\*\*\* Begin Patch" but found an empty patch/],
    ['no Begin', '*** Update File: a\n*** End Patch', 1, /expected "\*\*\* Begin Patch" but found "\*\*\* Update File: a"/],
    ['only Begin', '*** Begin Patch', 1, /expected file sections and "\*\*\* End Patch" after "\*\*\* Begin Patch" but the patch ends there/],
    ['no sections', '*** Begin Patch\n*** End Patch', 1, /expected a file section after "\*\*\* Begin Patch" but found none/],
    ['cut short', '*** Begin Patch\n*** Update File: a\n@@\n-x\n+y', 5, /expected "\*\*\* End Patch" as the last line but found "\+y"/],
    ['misspelt End', '*** Begin Patch\n*** Delete File: a\n*** End patch.', 3, /expected "\*\*\* End Patch" as the last line but found "\*\*\* End patch\." \(misspelt\?\)/],
    ['text after End', '*** Begin Patch\n*** Delete File: a\n*** End Patch\nthanks!', 4, /expected the end of the patch after "\*\*\* End Patch" \(line 3\) but found "thanks!"/],
    ['unknown header', '*** Begin Patch\n*** Rename File: a\n*** End Patch', 2, /expected "\*\*\* Add File: <path>", .* but found the unknown header "\*\*\* Rename File: a"/],
    ['stray text', '*** Begin Patch\nhello\n*** End Patch', 2, /expected a file header .* but found "hello"/],
    ['add without +', '*** Begin Patch\n*** Add File: a\nx\n*** End Patch', 3, /expected a line of the added file starting with "\+" .* but found "x"/],
    ['delete with body', '*** Begin Patch\n*** Delete File: a\n+x\n*** End Patch', 3, /expected the next file header after "\*\*\* Delete File:" .* but found "\+x"/],
    ['update without hunk', '*** Begin Patch\n*** Update File: a\n*** End Patch', 2, /expected a hunk after "\*\*\* Update File: a" but found "\*\*\* End Patch"/],
    ['bad hunk line', '*** Begin Patch\n*** Update File: a\n@@\n-x\n*y\n*** End Patch', 5, /expected a hunk line starting with " ", "-", "\+" or "@@" .* but found "\*y"|unknown header/],
    ['unified range', '*** Begin Patch\n*** Update File: a\n@@ -1,2 +1,2 @@\n-x\n+y\n*** End Patch', 3, /expected "@@" or "@@ <anchor line>" but found the unified-diff range/],
    ['context-only hunk', '*** Begin Patch\n*** Update File: a\n@@\n x\n*** End Patch', 3, /expected a "-" or "\+" line in hunk 1 of "a" but found only context/],
    ['End of File first', '*** Begin Patch\n*** Update File: a\n*** End of File\n*** End Patch', 3, /expected the lines of a hunk before "\*\*\* End of File" but found none/],
    ['hunk after End of File', '*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End of File\n-z\n*** End Patch', 7, /expected a file header or "\*\*\* End Patch" after "\*\*\* End of File" in "a" but found "-z"/],
    ['Move without Update', '*** Begin Patch\n*** Move to: b\n*** End Patch', 2, /expected a file header but found "\*\*\* Move to: b"/],
    ['empty path', '*** Begin Patch\n*** Delete File:\n*** End Patch', 2, /expected a path after the colon but found none/],
    ['unclosed JSON path', '*** Begin Patch\n*** Delete File: "a\n*** End Patch', 2, /expected a path, or a path written as one JSON string, but found "\\"a"/],
  ];
  for (const [name, patch, line, message] of cases) {
    it(name, () => {
      assert.throws(
        () => parsePatch(patch),
        (e: unknown) => {
          assert.ok(ToolError.is(e, 'PATCH_INVALID'), String(e));
          assert.equal(e.details?.line, line, e.message);
          assert.ok(e.message.startsWith(`Invalid patch at line ${line}: expected`), e.message);
          assert.match(e.message, message);
          assert.ok(e.hint !== undefined && e.hint.length > 0);
          return true;
        },
      );
    });
  }

  it('only a last line that reads as patch content is said to be possibly cut short', () => {
    const hint = (patch: string): string => {
      try {
        parsePatch(patch);
      } catch (e) {
        if (ToolError.is(e)) return e.hint ?? '';
      }
      assert.fail('parsed');
    };
    assert.match(hint('*** Begin Patch\n*** Update File: a\n@@\n-x\n+y'), /cut short/);
    assert.doesNotMatch(hint('*** Begin Patch\n*** Delete File: a\n*** End patch.'), /cut|may have been/);
    assert.doesNotMatch(hint('*** Begin Patch\n*** Delete File: a\nEnd Patch'), /cut|may have been/);
  });
});
