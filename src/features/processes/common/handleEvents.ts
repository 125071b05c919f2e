import type { Disposable } from '../../../base/disposable';
import type { ExitInfo } from './processBackend';
import { Emitter } from '../../../base/emitter';

/**
 * The two events of a `ProcessHandle`, shared by the backends. Output that arrives before anyone listens is
 * queued (so nothing is lost between spawn and wiring), and the exit is remembered so a late listener still
 * hears it exactly once.
 */
export class HandleEvents {
  private readonly data: Emitter<Uint8Array>;
  private readonly exit: Emitter<ExitInfo>;
  private readonly skip: Emitter<number>;
  /** Output (bytes) and skips (a count) before the first data listener, in order. */
  private early: (Uint8Array | number)[] | undefined = [];
  private exitInfo: ExitInfo | undefined;

  constructor(onError: (err: unknown) => void = () => undefined) {
    this.data = new Emitter(onError);
    this.exit = new Emitter(onError);
    this.skip = new Emitter(onError);
  }

  get exited(): boolean {
    return this.exitInfo !== undefined;
  }

  onData(listener: (bytes: Uint8Array) => void): Disposable {
    const sub = this.data.on((bytes) => listener(bytes));
    const queued = this.early;
    this.early = undefined;
    for (const item of queued ?? []) {
      if (typeof item === 'number') this.skip.emit(item);
      else listener(item);
    }
    return sub;
  }

  /** Listeners must be added before the first data listener to hear skips queued before it. */
  onSkip(listener: (bytes: number) => void): Disposable {
    return this.skip.on((bytes) => listener(bytes));
  }

  fireSkip(bytes: number): void {
    if (bytes <= 0) return;
    if (this.early) this.early.push(bytes);
    else this.skip.emit(bytes);
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    if (this.exitInfo !== undefined) {
      listener(this.exitInfo);
      return { dispose: () => undefined };
    }
    return this.exit.on((info) => listener(info));
  }

  fireData(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    // Kept for a later listener: a copy, since the backend may reuse the memory of `bytes` (ProcessHandle.onData).
    if (this.early) this.early.push(bytes.slice());
    else this.data.emit(bytes);
  }

  fireExit(info: ExitInfo): void {
    if (this.exitInfo !== undefined) return;
    this.exitInfo = info;
    this.exit.emit(info);
    // Heard once: later listeners get the remembered exit at once (onExit).
    this.exit.dispose();
  }
}
