import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { SandboxedLaunch } from './commandSandbox';

/** The sandbox's start-up check: finding its programs, running a trivial command, and reading why it failed. */

const PROBE_TIMEOUT_MS = 10_000;

/** The first of `candidates` this user may execute. */
export function firstExisting(candidates: readonly string[]): string | undefined {
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

/** Turns bwrap's complaint into a reason a developer can act on. */
export function explainProbeFailure(stderr: string, code: number | null, signal: string | null): string {
  const line = stderr.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? (signal ? `killed by ${signal}` : `exit code ${String(code)}`);
  if (/user namespace|uid map|setting up uid|No permissions to creat|Operation not permitted|Permission denied|Creating new namespace failed/i.test(line)) {
    return (
      `bwrap cannot create an unprivileged user namespace here (${line}). Allow them: on Ubuntu 23.10 and later AppArmor restricts them ` +
      '(install an AppArmor profile for /usr/bin/bwrap, or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`); on Debian and others ' +
      '`sysctl kernel.unprivileged_userns_clone=1` and a non-zero `user.max_user_namespaces`; in a container, allow user namespaces in its seccomp/security profile.'
    );
  }
  if (/default-signal/.test(line)) return `env(1) does not know --default-signal (coreutils 8.31 or later is needed for terminal commands in the sandbox): ${line}`;
  return `bwrap failed its start-up check: ${line}`;
}

/** Runs one start-up check (killed after PROBE_TIMEOUT_MS): how it ended, and the end of what it wrote to stderr. */
export function run(launch: SandboxedLaunch, cwd: string, env: Record<string, string>): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(launch.file, launch.args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4096)));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stderr: err.message });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}
