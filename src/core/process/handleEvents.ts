import type { Disposable } from '../disposable';
import type { ExitInfo } from '../ports/processBackend';
import { Listeners } from './listeners';

/**
 * The two events of a `ProcessHandle`, shared by the backends. Output that arrives before anyone listens is
 * queued (so nothing is lost between spawn and wiring), and the exit is remembered so a late listener still
 * hears it exactly once.
 */
export class HandleEvents {
  private readonly data: Listeners<[Uint8Array]>;
  private readonly exit: Listeners<[ExitInfo]>;
  private early: Uint8Array[] | undefined = [];
  private exitInfo: ExitInfo | undefined;

  constructor(onError: (err: unknown) => void = () => undefined) {
    this.data = new Listeners(onError);
    this.exit = new Listeners(onError);
  }

  get exited(): boolean {
    return this.exitInfo !== undefined;
  }

  onData(listener: (bytes: Uint8Array) => void): Disposable {
    const sub = this.data.add(listener);
    const queued = this.early;
    this.early = undefined;
    if (queued) for (const bytes of queued) listener(bytes);
    return sub;
  }

  onExit(listener: (info: ExitInfo) => void): Disposable {
    if (this.exitInfo !== undefined) {
      listener(this.exitInfo);
      return { dispose: () => undefined };
    }
    return this.exit.add(listener);
  }

  fireData(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.early) this.early.push(bytes);
    else this.data.fire(bytes);
  }

  fireExit(info: ExitInfo): void {
    if (this.exitInfo !== undefined) return;
    this.exitInfo = info;
    this.exit.fire(info);
    this.exit.clear();
  }
}
