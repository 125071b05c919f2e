import * as assert from 'node:assert/strict';
import { AsyncDisposableStore, DisposableStore, flushThenDispose } from '../../src/base/disposable';

describe('disposable stores: one release, in the reverse order of making', () => {
  it('DisposableStore releases the last added first, goes on past a failure, and releases what comes after at once', () => {
    const order: string[] = [];
    const errors: unknown[] = [];
    const store = new DisposableStore((err) => errors.push(err));
    store.add({ dispose: () => order.push('first') });
    store.add({
      dispose: () => {
        throw new Error('second failed');
      },
    });
    store.add({ dispose: () => order.push('third') });
    store.dispose();
    store.dispose();
    assert.deepEqual(order, ['third', 'first']);
    assert.deepEqual(errors.map((e) => (e as Error).message), ['second failed']);
    store.add({ dispose: () => order.push('late') });
    assert.deepEqual(order, ['third', 'first', 'late']);
  });

  it('AsyncDisposableStore awaits each release before the one made before it, past failures, once', async () => {
    const order: string[] = [];
    const errors: unknown[] = [];
    const store = new AsyncDisposableStore((err) => errors.push(err));
    store.add({ dispose: () => void order.push('log closed') });
    // Added after the log: the processes end first, and the log is closed only once they have.
    store.add(async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('processes ended');
    });
    store.add(() => Promise.reject(new Error('a flush failed')));
    const first = store.dispose();
    const second = store.dispose();
    assert.equal(first, second, 'a second call waits for the same run');
    await first;
    assert.deepEqual(order, ['processes ended', 'log closed']);
    assert.deepEqual(errors.map((e) => (e as Error).message), ['a flush failed']);
    assert.equal(store.isDisposed, true);
    store.add(() => void order.push('late'));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['processes ended', 'log closed', 'late']);
  });

  it('flushThenDispose writes what is held back first, and disposes even when the write failed', async () => {
    const order: string[] = [];
    await flushThenDispose({ flush: async () => void order.push('flushed'), dispose: () => void order.push('disposed') }).dispose();
    const failing = flushThenDispose({ flush: () => Promise.reject(new Error('disk full')), dispose: () => void order.push('disposed after a failed flush') });
    await assert.rejects(Promise.resolve(failing.dispose()), /disk full/);
    assert.deepEqual(order, ['flushed', 'disposed', 'disposed after a failed flush']);
  });
});
