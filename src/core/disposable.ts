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
