/**
 * The one serial queue of the code base: runs the tasks given to it one at a time, in the order given. A task that
 * fails fails its own caller only; the next task still runs.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private pending = 0;

  /** Runs `task` after every task given before it has settled; resolves or rejects with its result. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    this.pending++;
    const result = this.tail.then(task);
    this.tail = result.then(
      () => this.pending--,
      () => this.pending--,
    );
    return result;
  }

  /** How many tasks are queued or running. */
  get size(): number {
    return this.pending;
  }

  /** Resolves once every task given so far has settled (never rejects). */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
