import { fork } from 'node:child_process';
import * as path from 'node:path';
import { silentLogger } from '../../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import { DEFAULT_LIMITS } from '../../../src/kernel/limits';
import type { AssembledServices } from '../../../src/app/assembleServices';
import { assembleServices } from '../../../src/app/assembleServices';
import { NodeWorkspaceFs } from '../../../src/kernel/node/nodeWorkspaceFs';

/** The compiled process host entry point (out/src/features/processes/node/processHost/main.js). */
export const HOST_SCRIPT = path.join(__dirname, '..', '..', '..', 'src', 'features', 'processes', 'node', 'processHost', 'main.js');

/**
 * The services of one window as the extension assembles them, with agent processes in the process host: the
 * discovery record in `storage`, sockets under `socketRoot`, one workspace folder `root` (profile exec).
 */
export async function assembleWindow(storage: string, root: string, socketRoot: string, graceMs: number, vscodeStorageDir?: string): Promise<{ assembled: AssembledServices; workspaceId: string }> {
  const workspaces = new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: path.basename(root), profile: 'exec' }]));
  const assembled = await assembleServices({
    workspaces,
    fs: new NodeWorkspaceFs(),
    logger: silentLogger,
    limits: () => DEFAULT_LIMITS,
    storageDir: storage,
    env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' }),
    timeoutMs: () => 0,
    lifetime: 'vscode-window',
    processHost: { script: HOST_SCRIPT, graceMs, socketRoot, ...(vscodeStorageDir ? { vscodeStorageDir } : {}) },
  });
  return { assembled, workspaceId: workspaces.list()[0]?.id as string };
}

/** A command that prints `tick N` every 25 ms and answers each input line with `got:<line>`. */
export const TICKER = [
  process.execPath,
  '-e',
  "let i=0;const t=setInterval(()=>console.log('tick '+(i++)),25);process.stdin.setEncoding('utf8');process.stdin.on('data',d=>console.log('got:'+d.trim()));process.on('SIGTERM',()=>{clearInterval(t);process.exit(0)})",
];

// Run as a child (fork): a window's extension host that starts a ticker on pipes and one on a terminal in the
// process host, tells its parent their ids and the host's pid, then waits to be killed. With `editor` first, the
// child is an editor instead: it starts the window as its own child (as VS Code starts its extension host), passes
// the window's message on with the window's pid, and waits to be killed.
if (require.main === module && process.argv[2] === 'editor') {
  const window = fork(__filename, process.argv.slice(3), { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  window.on('message', (m) => process.send?.({ ...(m as object), windowPid: window.pid }));
  window.on('exit', (code) => code !== null && code !== 0 && process.exit(code));
  setInterval(() => undefined, 60_000);
} else if (require.main === module) {
  const [storage, root, socketRoot, grace] = process.argv.slice(2) as [string, string, string, string];
  void (async () => {
    const { assembled, workspaceId } = await assembleWindow(storage, root, socketRoot, Number(grace));
    const ws = assembled.workspaces.get(workspaceId);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
    const pipes = await assembled.supervisor.exec(ws, TICKER, { cwd: root, root, env, occupancy: 'exclusive' });
    const tty = await assembled.supervisor.exec(ws, TICKER, { cwd: root, root, env, tty: true, occupancy: 'shared' });
    process.send?.({ pipes: pipes.process_id, tty: tty.process_id, hostPid: assembled.processHost?.hostPid });
    setInterval(() => undefined, 60_000);
  })().catch((err: unknown) => {
    process.stderr.write(String(err instanceof Error ? err.stack : err));
    process.exit(1);
  });
}
