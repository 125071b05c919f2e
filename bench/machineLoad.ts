// Busy loops on every core, so a test or bench measures on a loaded machine: one child process per CPU spinning
// until stopped.
import { spawn } from 'node:child_process';
import * as os from 'node:os';

export interface MachineLoad {
  readonly workers: number;
  stop(): Promise<void>;
}

export function loadMachine(workers = os.availableParallelism()): MachineLoad {
  const children = Array.from({ length: workers }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  return {
    workers,
    stop: async () => {
      await Promise.all(
        children.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (c.exitCode !== null || c.signalCode !== null) return resolve();
              c.once('exit', () => resolve());
              c.kill('SIGKILL');
            }),
        ),
      );
    },
  };
}
