import * as assert from 'node:assert/strict';
import { jsonBytes } from '../../src/mcp/jsonBytes';

/** What jsonBytes must equal, byte for byte. */
function expected(value: unknown): Buffer {
  const text = JSON.stringify(value);
  return text === undefined ? Buffer.alloc(0) : Buffer.from(text, 'utf8');
}

function same(value: unknown, what: string): void {
  const got = jsonBytes(value);
  const want = expected(value);
  assert.ok(got.equals(want), `${what}: ${got.length} bytes, JSON.stringify gives ${want.length}; first difference at ${firstDifference(got, want)}`);
}

function firstDifference(a: Buffer, b: Buffer): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return Math.min(a.length, b.length);
}

/** A deterministic generator, so a failure names a case that reproduces. */
function generator(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A long string mixing ASCII, control characters, quotes, backslashes, non-Latin-1 text and surrogate pairs. */
function mixedText(length: number, rnd: () => number): string {
  const alphabet = ['a', 'Z', ' ', '\n', '\t', '\u0000', '\u001b', '"', '\\', '/', 'é', 'ß', '€', '漢', '😀', '\u2028', '\ud800', '\udc00'];
  let s = '';
  while (s.length < length) s += alphabet[Math.floor(rnd() * alphabet.length)];
  return s;
}

describe('jsonBytes: JSON.stringify as bytes, without one large string', () => {
  it('gives the same bytes as JSON.stringify for plain values', () => {
    for (const v of [null, true, false, 0, -1.5, 1e21, NaN, Infinity, '', 'x', [], {}, [1, 'a', null], { a: 1, b: [true, { c: 'd' }] }]) same(v, JSON.stringify(v));
  });

  it('leaves out what JSON.stringify leaves out, and calls toJSON with the key', () => {
    const keys: string[] = [];
    const value = {
      gone: undefined,
      fn: () => 1,
      sym: Symbol('s'),
      list: [undefined, () => 1, Symbol('t'), 2],
      when: new Date(Date.UTC(2026, 11, 2)),
      custom: { toJSON: (key: string) => (keys.push(key), { as: key }) },
      boxed: [new String('s'), new Number(3), new Boolean(false)],
      nested: { toJSON: () => undefined },
    };
    same(value, 'omitted and toJSON');
    assert.ok(keys.includes('custom'));
    same(undefined, 'undefined at the top');
    same({ toJSON: () => 'top' }, 'toJSON at the top');
  });

  it('gives the same bytes for long strings of every kind of character, at every slice boundary', () => {
    const rnd = generator(7);
    for (const length of [4095, 4096, 4097, 8191, 8192, 16_384, 100_000, 300_000]) {
      const s = mixedText(length, rnd);
      same(s, `a string of ${length}`);
      same({ chunk: s, cursor: length, content: [{ type: 'text', text: JSON.stringify({ chunk: s }) }] }, `an answer around a string of ${length}`);
    }
  });

  it('keeps a surrogate pair whole when a slice would end between its halves', () => {
    for (const at of [4095, 4096, 8191]) {
      const s = 'a'.repeat(at) + '😀'.repeat(3000);
      same(s, `a pair at ${at}`);
      assert.equal(jsonBytes(s).toString('utf8'), JSON.stringify(s));
    }
  });

  it('gives the same bytes when long runs that need no escape meet escapes, lone surrogates and pairs at their edges', () => {
    const run = (n: number, ch = 'a'): string => ch.repeat(n);
    const cases = [
      run(5000) + '"' + run(5000),
      '"' + run(5000) + '\\',
      run(1023) + '\n' + run(1024) + '\u0001' + run(1025) + '\u001f',
      run(3000) + '\ud800' + run(3000) + '\udc00' + run(3000) + '\ud83d',
      run(3000) + '😀' + run(3000, 'é') + '😀😀' + '\udc00\ud800' + run(2000, '中'),
      '\ud83d'.repeat(3000) + '\ude00'.repeat(3000),
      '\x1b[31m' + run(2000) + '\x1b[0m\r\n' + run(5000, '\x1b'),
      run(300_000, 'z') + '"',
    ];
    for (const [i, s] of cases.entries()) {
      same(s, `case ${i}`);
      same({ chunk: s, text: JSON.stringify({ chunk: s }) }, `case ${i} in an answer`);
    }
  });

  it('throws for a cycle and for a BigInt, as JSON.stringify does', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.throws(() => jsonBytes(cyclic), TypeError);
    assert.throws(() => jsonBytes({ n: 1n }), TypeError);
    // The same object twice, not nested in itself, is no cycle.
    const shared = { x: 'y' };
    same({ a: shared, b: [shared, shared] }, 'a shared object');
  });

  it('parses back to the value: a 256 KiB page in its answer, as read_process gives it', () => {
    const page = mixedText(256 * 1024, generator(11));
    const answer = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: JSON.stringify({ chunk: page, cursor: 1 }) }], structuredContent: { chunk: page, cursor: 1 } } };
    assert.deepEqual(JSON.parse(jsonBytes(answer).toString('utf8')), JSON.parse(JSON.stringify(answer)));
  });
});
