import * as assert from 'node:assert/strict';
import { canonicalJson, hashArguments } from '../../src/base/canonicalJson';

describe('ledger canonical JSON and argument hashes', () => {
  it('sorts keys at every depth and drops whitespace', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } }), '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('follows JSON.stringify for undefined, non-finite numbers and toJSON', () => {
    assert.equal(canonicalJson({ a: undefined, b: [undefined, NaN], c: new Date(0) }), '{"b":[null,null],"c":"1970-01-01T00:00:00.000Z"}');
    assert.equal(canonicalJson(undefined), 'null');
  });

  it('throws on cycles and bigints', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => canonicalJson(cyclic), /cycle/);
    assert.throws(() => canonicalJson({ n: BigInt(1) }), /bigint/);
  });

  it('gives the same hash for the same request in any key order, another for other arguments', () => {
    const one = hashArguments({ workspace_id: 'w', patch: 'p', expected_versions: { a: '1', b: '2' } });
    const two = hashArguments({ expected_versions: { b: '2', a: '1' }, patch: 'p', workspace_id: 'w' });
    assert.equal(one, two);
    assert.match(one, /^sha256:[0-9a-f]{64}$/);
    assert.notEqual(one, hashArguments({ workspace_id: 'w', patch: 'p', expected_versions: { a: '1', b: '3' } }));
    assert.notEqual(one, hashArguments({ workspace_id: 'w', patch: 'p', expected_versions: { a: '1', b: '2' }, check_only: true }));
  });
});
