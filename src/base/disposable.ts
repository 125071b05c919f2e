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
