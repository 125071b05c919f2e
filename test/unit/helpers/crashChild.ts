import { fork } from 'node:child_process';
import * as path from 'node:path';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs a compiled helper script (under out/test/unit/helpers) in a child Node process and reports how it ended. */
export function runHelperChild(script: string, args: readonly string[]): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, script), [...args], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}
