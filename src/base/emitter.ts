import type { Disposable } from './disposable';

/** Listeners of one event stream; a listener that throws is reported and does not stop the others. */
export class Emitter<T> implements Disposable {
  private readonly listeners = new Set<(event: T) => void>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => undefined) {}

  on(listener: (event: T) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => void this.listeners.delete(listener) };
  }

  emit(event: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
