import type { Disposable } from '../../base/disposable';

/**
 * A plain set of listeners. `fire` calls each one, and a listener that throws does not stop the others;
 * its error goes to `onError`.
 */
export class Listeners<A extends unknown[]> {
  private readonly set = new Set<(...args: A) => void>();

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  get size(): number {
    return this.set.size;
  }

  add(listener: (...args: A) => void): Disposable {
    // Wrap so the same function can be added twice and removed independently.
    const entry = (...args: A): void => listener(...args);
    this.set.add(entry);
    return { dispose: () => void this.set.delete(entry) };
  }

  fire(...args: A): void {
    for (const listener of [...this.set]) {
      try {
        listener(...args);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  clear(): void {
    this.set.clear();
  }
}
