// A runaway command under the sandbox's process bound, run by whoever runs this module: the unit test runs it in
// its own process, or, when the test runs as root (whom the kernel never bounds), as an unprivileged user in a
// child process, as an editor on a desktop runs.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../../../src/base/logger';
import { CommandSandbox } from '../../../src/features/processes/node/sandbox/commandSandbox';

export interface BoundResult {
  readonly limit: number | null;
  readonly reason?: string;
  readonly code: number | null;
  readonly out: string;
  /** Whether the sandbox answered a status request while the command ran. */
  readonly answered: boolean;
  /** Processes of the command still alive after it ended. */
  readonly left: number;
}

export async function runawayUnderBound(limit: number, attempts: number): Promise<BoundResult> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bound-')));
  const sandbox = new CommandSandbox({ mode: () => 'required', network: () => 'block', maxProcesses: () => limit, logger: silentLogger });
  try {
    const st = await sandbox.status(root);
    const tag = `9999.${process.pid}`;
    const env = { PATH: '/usr/bin:/bin', HOME: root };
    const script = `i=0; while [ $i -lt ${attempts} ]; do sleep ${tag} & i=$((i+1)); echo "started $i"; done; echo ALL-STARTED`;
    const launch = await sandbox.launch({ file: '/bin/sh', argv0: 'sh', args: ['-c', script], cwd: root, root, env, tty: false });
    if (!launch) throw new Error('no sandbox');
    const child = spawn(launch.file, launch.args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const answered = (await sandbox.status(root)).command_sandbox.enabled;
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    launch.release();
    const left = fs
      .readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return fs.readFileSync(`/proc/${p}/cmdline`, 'latin1') === `sleep\0${tag}\0`;
        } catch {
          return false;
        }
      }).length;
    return { limit: st.max_processes?.limit ?? null, ...(st.max_processes?.reason ? { reason: st.max_processes.reason } : {}), code, out, answered, left };
  } finally {
    await sandbox.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

if (require.main === module) {
  runawayUnderBound(Number(process.argv[2]), Number(process.argv[3])).then(
    (r) => process.stdout.write(JSON.stringify(r)),
    (err: unknown) => {
      process.stderr.write(String(err instanceof Error ? err.stack : err));
      process.exit(1);
    },
  );
}
