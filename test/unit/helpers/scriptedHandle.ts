import type { Disposable } from '../../../src/base/disposable';
import type { ExitInfo, ProcessHandle } from '../../../src/features/processes/common/processBackend';
import { HandleEvents } from '../../../src/features/processes/common/handleEvents';

/** A process whose output, skips and exit the test makes (`events`), for a fake backend to hand out. */
export class ScriptedHandle implements ProcessHandle {
  readonly events = new HandleEvents();
  readonly pid = process.pid;
  constructor(readonly tty: boolean) {}
  onData(listener: (bytes: Uint8Array) => void): Disposable {
    return this.events.onData(listener);
  }
  onSkip(listener: (bytes: number) => void): Disposable {
    return this.events.onSkip(listener);
  }
  onExit(listener: (info: ExitInfo) => void): Disposable {
    return this.events.onExit(listener);
  }
  write(): void {}
  endInput(): void {}
  resize(): void {}
  kill(): void {}
  terminate(): Promise<void> {
    return Promise.resolve();
  }
}
