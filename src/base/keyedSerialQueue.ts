import { SerialQueue } from './serialQueue';

/**
 * One SerialQueue per key: the tasks given under one key run one at a time, in the order given; tasks of different
 * keys run independently. A key's queue is dropped once it has nothing left to run.
 */
export class KeyedSerialQueue {
  private readonly queues = new Map<string, SerialQueue>();

  /** Runs `task` after every task given before it under `key` has settled; resolves or rejects with its result. */
  run<T>(key: string, task: () => T | Promise<T>): Promise<T> {
    let queue = this.queues.get(key);
    if (!queue) {
      queue = new SerialQueue();
      this.queues.set(key, queue);
    }
    const result = queue.run(task);
    const ran = queue;
    void ran.idle().then(() => {
      if (ran.size === 0 && this.queues.get(key) === ran) this.queues.delete(key);
    });
    return result;
  }

  /** How many keys have tasks queued or running. */
  get keys(): number {
    return this.queues.size;
  }
}
