import { spawnSync } from 'node:child_process';

/** Why bwrap cannot run here, or undefined when it can (the real-bwrap suites skip with this reason). */
export function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  const r = spawnSync('bwrap', ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent', 'true'], { encoding: 'utf8' });
  if (r.error) return `bwrap not runnable: ${r.error.message}`;
  if (r.status !== 0) return `bwrap fails: ${r.stderr.trim()}`;
  return undefined;
}
