/** Anything that holds a resource. Core objects satisfy this structurally. */
export interface Disposable {
  dispose(): void;
}

/** Disposes every item, continuing past failures; returns the errors it met. */
export function disposeAll(items: Iterable<Disposable>): unknown[] {
  const errors: unknown[] = [];
  for (const item of items) {
    try {
      item.dispose();
    } catch (err) {
      errors.push(err);
    }
  }
  return errors;
}

/** Base for classes that own listeners and children. `dispose()` is idempotent. */
export abstract class DisposableBase implements Disposable {
  private readonly owned: Disposable[] = [];
  private disposed = false;

  protected get isDisposed(): boolean {
    return this.disposed;
  }

  protected register<T extends Disposable>(item: T): T {
    if (this.disposed) {
      item.dispose();
    } else {
      this.owned.push(item);
    }
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    disposeAll(this.owned.splice(0).reverse());
  }
}

/**
 * Disposables owned together: `dispose()` disposes them in the reverse order of their adding (the last made is the
 * first gone), continuing past failures, which go to `onError`. Adding to a disposed store disposes at once.
 */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  add<T extends Disposable>(item: T): T {
    if (this.disposed) {
      for (const err of disposeAll([item])) this.onError(err);
    } else {
      this.items.push(item);
    }
    return item;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const err of disposeAll(this.items.splice(0).reverse())) this.onError(err);
  }
}

/** A resource whose release may take time (a flush, processes ending). */
export interface AsyncDisposable {
  dispose(): void | Promise<void>;
}

/**
 * What a composition owns, released by one `dispose()` in the reverse order of adding: the last made is the first
 * gone, each awaited before the next, continuing past failures (they go to `onError`). A module adds each release at
 * the point where what it needs still exists: the processes end before the command log that records their ends is
 * closed, because their release is added after the log. `dispose()` runs once; later calls wait for that run.
 */
export class AsyncDisposableStore {
  private readonly items: AsyncDisposable[] = [];
  private done: Promise<void> | undefined;

  constructor(private readonly onError: (err: unknown) => void = () => undefined) {}

  /** Adds a resource, or a release step given as a function. Adding once disposal began releases it at once. */
  add<T extends AsyncDisposable | (() => void | Promise<void>)>(item: T): T {
    const entry: AsyncDisposable = typeof item === 'function' ? { dispose: item } : item;
    if (this.done) void this.release(entry);
    else this.items.push(entry);
    return item;
  }

  get isDisposed(): boolean {
    return this.done !== undefined;
  }

  dispose(): Promise<void> {
    this.done ??= (async () => {
      for (const item of this.items.splice(0).reverse()) await this.release(item);
    })();
    return this.done;
  }

  private async release(item: AsyncDisposable): Promise<void> {
    try {
      await item.dispose();
    } catch (err) {
      this.onError(err);
    }
  }
}

/** The release of a store that writes behind: what it still holds back is written, then it is disposed (even when that failed). */
export function flushThenDispose(item: { flush(): Promise<unknown>; dispose(): void }): AsyncDisposable {
  return {
    async dispose() {
      try {
        await item.flush();
      } finally {
        item.dispose();
      }
    },
  };
}
