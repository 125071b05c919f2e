import * as assert from 'node:assert/strict';
import { KeyedSerialQueue } from '../../src/base/keyedSerialQueue';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('KeyedSerialQueue', () => {
  it('runs the tasks of one key one at a time, in order, and those of another key meanwhile', async () => {
    const q = new KeyedSerialQueue();
    const log: string[] = [];
    const gate = deferred();
    const a1 = q.run('a', async () => {
      log.push('a1 start');
      await gate.promise;
      log.push('a1 end');
    });
    const a2 = q.run('a', () => log.push('a2'));
    await q.run('b', () => log.push('b1'));
    assert.deepEqual(log, ['a1 start', 'b1']);
    gate.resolve();
    await Promise.all([a1, a2]);
    assert.deepEqual(log, ['a1 start', 'b1', 'a1 end', 'a2']);
  });

  it('a failing task fails its own caller only; the next task of the key still runs', async () => {
    const q = new KeyedSerialQueue();
    const failed = q.run('k', () => Promise.reject(new Error('boom')));
    const next = q.run('k', () => 42);
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 42);
  });

  it('drops a key once its tasks are settled, and takes the key again later', async () => {
    const q = new KeyedSerialQueue();
    await q.run('k', () => undefined);
    for (let i = 0; i < 10 && q.keys > 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(q.keys, 0);
    assert.equal(await q.run('k', () => 'again'), 'again');
  });
});
