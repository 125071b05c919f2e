import * as assert from 'node:assert/strict';
import { sep } from 'node:path';
import { InvalidArgumentsError } from '../../src/base/errors';
import { GLOB_LIMITS, checkGlob, compileGlob } from '../../src/base/glob';
import { vscodeGlobMatch } from './helpers/vscodeGlobReference';

/** Patterns in the editor's dialect, and paths to try each on; small enough for VS Code's backtracking regex. */
const PATTERNS = [
  '*.ts', '**/*.ts', 'src/**/*.ts', 'src/**', '**', '**/**', '**/**/x', 'x/**/**', 'a/**/b', '**/a/**/b/**', '*', '*/*',
  'src/*.{ts,js}', '{src,test}/**/*.md', '{**/*.ts,**/*.js}', '{**,a}', '*.{,x}', 'a{b,c/d}e', 'a{/b,}', '{a/**,b}/c',
  '?', '??.ts', 'a?c', '[abc].ts', '[a-c]*', '[!a]*', '[^a]x', '[]]', '[[]', '[a-]', '[-a]z', '[+--]', 'a[!b]c',
  'a**b', '***', 'a/***/b', '**x', 'x**', '****/*.ts', '**/*.*', '.*', '**/.*', 'a.b', 'a+b(c)|$^', 'é*', 'a\\b',
  ' *.ts ', '**/test_*_*.py', '*a*b*', '*/**', '**/*/', 'a/', '/a', '**/', 'src/**/', '{a,b}{c,d}',
];
const PATHS = [
  'a.ts', 'x.ts', 'src/a.ts', 'src/deep/b.ts', 'src/c.js', 'test/r.md', 'README.md', 'src', 'x', 'x/', 'x/a', 'x/a/',
  'a/b', 'a/x/b', 'a/x/y/b', 'a//b', 'b/c', 'a/c', 'a/b/c', 'abe', 'ac/de', 'ace', 'a/be', 'a', 'ab', 'ab.ts', 'abc',
  'axc', 'a/c', 'b', ']', '[', '-', 'z', '-z', 'az', ',', '+', 'aab', 'ab/cb', 'a.b', '.env', 'src/.hidden', 'é', 'éa',
  'a\\b', 'a/b\\c', 'test_1_2.py', 'lib/test_a_b.py', 'test_x.py', 'xab', 'ba', 'a/b/', '/a', 'ac', 'bd', 'bc', 'a.x',
  'a.', 'x/y/z', 'src/', '..', 'a+b(c)|$^', '',
];

function refusal(pattern: string): string {
  try {
    checkGlob(pattern);
  } catch (err) {
    assert.ok(err instanceof InvalidArgumentsError, `expected InvalidArgumentsError, got ${String(err)}`);
    return err.message;
  }
  assert.fail(`${JSON.stringify(pattern)} was accepted`);
}

describe('find globs (VS Code dialect, linear matcher)', () => {
  it('matches exactly what VS Code\'s own glob regex matches, for paths without a backslash', () => {
    let compared = 0;
    for (const pattern of PATTERNS) {
      const match = compileGlob(pattern);
      // A backslash is a character of a name outside Windows (the names policy): see the next test.
      for (const p of PATHS.filter((x) => sep === '\\' || !x.includes('\\'))) {
        assert.equal(match(p), vscodeGlobMatch(pattern, p), `pattern ${JSON.stringify(pattern)} on ${JSON.stringify(p)}`);
        compared++;
      }
    }
    assert.ok(compared > 3000);
  });

  it('outside Windows, reads a backslash as a character of a name and lets a lone ** span line breaks', function () {
    if (sep === '\\') this.skip();
    assert.equal(compileGlob('*')('a\\b'), true);
    assert.equal(compileGlob('dir/*.txt')('dir/a\\b.txt'), true);
    assert.equal(compileGlob('dir/?')('dir/\\'), true);
    assert.equal(compileGlob('**/*.txt')('back\\slash/in.txt'), true);
    assert.equal(compileGlob('dir/*')('dir/back\\slash/in.txt'), false, '"/" still separates');
    assert.equal(compileGlob('**')('new\nline/car\rriage'), true);
    assert.equal(compileGlob('**/*')('dir/new\nline'), true);
    assert.equal(compileGlob('*.txt')('a\\b.ts'), false);
  });

  it('stays exact when the automaton has more states than it caches (the cache is dropped and rebuilt)', () => {
    // "*a" followed by 14 "?" and "b": the automaton must remember the last 15 characters, 2^15 states.
    const pattern = `*a${'?'.repeat(14)}b`;
    const match = compileGlob(pattern);
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 3000; i++) {
      const p = Array.from({ length: 40 }, () => (random() < 0.5 ? 'a' : 'b')).join('');
      assert.equal(match(p), vscodeGlobMatch(pattern, p), p);
    }
  });

  it('collapses star runs without changing what matches', () => {
    assert.equal(checkGlob('a***b').pattern, 'a*b');
    assert.equal(checkGlob('src/****/x').pattern, 'src/*/x');
    assert.equal(checkGlob('src/**/x').pattern, 'src/**/x');
    assert.equal(checkGlob('{**,a**}').pattern, '{**,a*}');
    assert.equal(checkGlob(`${'*'.repeat(900)}.ts`).pattern, '*.ts');
    for (const [raw, paths] of [['a***b', ['ab', 'axb', 'a/b']], ['***', ['x', 'x/y']], ['x/****', ['x/a', 'x/a/b']]] as const) {
      for (const p of paths) assert.equal(compileGlob(raw)(p), vscodeGlobMatch(raw, p), `${raw} on ${p}`);
    }
  });

  it('refuses what the editor would misread, saying what is wrong', () => {
    assert.match(refusal('['), /"\[" at column 1 is never closed/);
    assert.match(refusal('**/*.{'), /"\{" at column 6 is never closed/);
    assert.match(refusal('src/[a-z'), /never closed/);
    assert.match(refusal('a]'), /"\]" at column 2 closes nothing/);
    assert.match(refusal('a}'), /"\}" at column 2 closes nothing/);
    assert.match(refusal('{a,{b,c}}'), /braces nest at column 4.*nesting limit 1/);
    assert.match(refusal('[z-a]'), /runs backwards/);
    assert.match(refusal('[!]'), /empty/);
    assert.match(refusal('[a/b]'), /contains "\/"/);
    assert.match(refusal('   '), /empty/);
  });

  it('bounds the pattern before matching anything, naming each limit', () => {
    assert.match(refusal('x'.repeat(GLOB_LIMITS.maxLength + 1)), /maxLength\) is 1000/);
    assert.match(refusal(Array.from({ length: GLOB_LIMITS.maxStars + 1 }, () => '*a').join('')), /33 "\*" wildcards; the limit \(maxStars\) is 32/);
    assert.match(refusal(Array.from({ length: GLOB_LIMITS.maxGlobstars + 1 }, (_, i) => `**/d${i}`).join('/')), /maxGlobstars\) is 8/);
    assert.match(refusal(Array.from({ length: GLOB_LIMITS.maxBraceGroups + 1 }, () => '{a,b}').join('')), /maxBraceGroups\) is 16/);
    assert.match(refusal(`{${Array.from({ length: GLOB_LIMITS.maxAlternatives + 1 }, (_, i) => `a${i}`).join(',')}}`), /65 brace alternatives; the limit \(maxAlternatives\) is 64/);
    // At the limits themselves, accepted.
    checkGlob(Array.from({ length: GLOB_LIMITS.maxStars }, () => '*a').join(''));
    checkGlob(`${'*'.repeat(GLOB_LIMITS.maxLength - 1)}x`);
  });

  it('stays linear on patterns that make a backtracking matcher run for minutes', () => {
    // Each of these takes VS Code's regex (and the matcher this replaced) exponential time on such names.
    const longName = 'a'.repeat(250);
    const hostile: [string, string, boolean][] = [
      [`${'*'.repeat(999)}x`, longName, false],
      [Array.from({ length: 32 }, () => '*a').join('') + 'b', longName, true],
      [`**/${Array.from({ length: 16 }, () => '*a').join('')}*b`, `${'d/'.repeat(40)}${longName}`, true],
      ['{*a*a*a*a*a*a*b,*a*a*a*a*a*c}', longName, true],
    ];
    for (const [pattern, p, withB] of hostile) {
      const match = compileGlob(pattern);
      for (let i = 0; i < 200; i++) assert.equal(match(p), false, pattern);
      assert.equal(match(`${p}b`), withB, pattern);
    }
  });
});
