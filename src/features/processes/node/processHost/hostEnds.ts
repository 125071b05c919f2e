import * as fs from 'node:fs';
import type { Logger } from '../../../../base/logger';
import type { HostEntry } from './hostOutput';
import type { HostEndsFile } from './protocol';

/**
 * Writes to `file` how every process the host still holds ended (mode 0600, through a rename: a reader sees all of
 * it or nothing). A process whose exit report has not come yet reads as ended now, with its output marked
 * incomplete. Nothing is written when the host holds no process.
 */
export function recordEnds(file: string, entries: Iterable<HostEntry>, logger: Logger): void {
  const held = [...entries];
  if (held.length === 0) return;
  const ends: HostEndsFile = {
    v: 1,
    host_pid: process.pid,
    ends: held.map((e) => ({
      process_id: e.record.process_id,
      exit: e.exit ?? { outputComplete: false },
      ...(e.requested ? { requested: e.requested } : {}),
      ended_at: new Date(e.endedAt ?? Date.now()).toISOString(),
    })),
  };
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, JSON.stringify(ends), { mode: 0o600 });
    fs.renameSync(tmp, file);
    logger.info(`recorded how ${ends.ends.length} process(es) ended`);
  } catch (err) {
    logger.warn(`could not record how the processes ended: ${String(err)}`);
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // nothing to remove
    }
  }
}
