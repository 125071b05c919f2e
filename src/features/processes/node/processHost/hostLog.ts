import * as fs from 'node:fs';
import * as path from 'node:path';
import { discoveryDir } from '../../../connect/node';

/**
 * The process hosts' log that outlives a window's state folder: `<discovery folder>-logs/process-host.log`, beside
 * the discovery folder (`/run/user/<uid>/codespace-logs` or `/tmp/codespace-<uid>-logs`), private to the user
 * (0700 folder, 0600 files). Every host of the user appends its decisions there (each line names its pid), so why a
 * window's processes ended, or did not, can be explained after the state folder is gone. Bounded: past
 * HOST_LOG_MAX_BYTES the file becomes `process-host.log.1` (the previous one dropped) and a new one starts.
 */
export const HOST_LOG_MAX_BYTES = 1024 * 1024;
export const HOST_LOG_NAME = 'process-host.log';

/** The surviving log's path for `discovery` (default: this user's discovery folder). */
export function hostLogFile(discovery: string = discoveryDir()): string {
  return path.join(`${discovery.replace(/[\\/]+$/, '')}-logs`, HOST_LOG_NAME);
}

/** Makes the log's folder (0700, this user's), or throws when something else is in its place. */
export function prepareHostLog(file: string): string {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new Error(`${dir} belongs to another user`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
  return file;
}

/** Appends one entry, rotating first when the file has reached `max` bytes. Never throws: a log must not end a host. */
export function appendBounded(file: string, entry: string, max = HOST_LOG_MAX_BYTES): void {
  try {
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    if (size + Buffer.byteLength(entry) > max && size > 0) fs.renameSync(file, `${file}.1`);
    fs.appendFileSync(file, entry, { mode: 0o600 });
  } catch {
    // The state folder's log (stderr) still has it.
  }
}
