import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FoundRecord } from '../common/record';
import { RECORD_SUFFIX, hasSameFolders } from '../common/record';
import type { Logger } from '../../../base/logger';
import { PING_SUFFIX, PONG_SUFFIX, privateFile, readNoFollow, readRecords, recordAlive, writeAtomic } from './discoveryFiles';
import { describeError } from '../../../base/describeError';

/**
 * Telling a reloaded window's lingering extension host from a second window on the same folders.
 *
 * When a window starts, a live record with exactly its folders is either another window the developer opened on
 * them, or the extension host this window had before a reload, kept alive by a remote server that waits for the old
 * page to reconnect. The new extension host asks each such record's owner, through a `<record>.ping` file in the
 * discovery folder (private to the user): the owner asks its window a question (WindowLiveness) and writes the
 * nonce back into `<record>.pong` when its window answered; when it did not, the owner stops its endpoint, so its
 * record goes and its port is free, and lets its process host be taken over. The asker waits for one of the two.
 */

export type SameWindowAnswer =
  /** The owner's window answered: a second window on the same folders. It stays. */
  | 'live'
  /** The record went (its owner lost its window and withdrew, or it ended). */
  | 'gone'
  /** Neither within the deadline (an owner that does not run this code, or is stuck). */
  | 'silent';

export interface SameWindowOutcome {
  readonly pid: number;
  readonly answer: SameWindowAnswer;
}

function pingFile(recordFile: string, suffix: string): string {
  return recordFile.slice(0, -RECORD_SUFFIX.length) + suffix;
}

function readPrivate(file: string): string | undefined {
  if (!privateFile(file)) return undefined;
  try {
    return readNoFollow(file).trim();
  } catch {
    return undefined;
  }
}

/**
 * Asks the owner of every live record in `dir` with exactly `folders` (other than `selfPid`) whether its window
 * still answers, all at once, and waits up to `timeoutMs` for each to answer or to go.
 */
export async function askSameWindows(options: { dir: string; folders: readonly string[]; selfPid: number; timeoutMs: number; pollMs?: number }): Promise<SameWindowOutcome[]> {
  if (options.folders.length === 0) return [];
  let records: FoundRecord[];
  try {
    records = readRecords(options.dir).filter((f) => f.record.pid !== options.selfPid && hasSameFolders(f.record, options.folders));
  } catch {
    return [];
  }
  const deadline = Date.now() + options.timeoutMs;
  return Promise.all(
    records.map(async (found): Promise<SameWindowOutcome> => {
      const nonce = randomBytes(16).toString('hex');
      const ping = pingFile(found.file, PING_SUFFIX);
      const pong = pingFile(found.file, PONG_SUFFIX);
      try {
        writeAtomic(options.dir, path.basename(ping), nonce);
        for (;;) {
          if (!fs.existsSync(found.file) || !recordAlive(found.record)) return { pid: found.record.pid, answer: 'gone' };
          if (readPrivate(pong) === nonce) return { pid: found.record.pid, answer: 'live' };
          if (Date.now() >= deadline) return { pid: found.record.pid, answer: 'silent' };
          await new Promise((r) => setTimeout(r, options.pollMs ?? 100));
        }
      } catch {
        return { pid: found.record.pid, answer: 'silent' };
      } finally {
        fs.rmSync(ping, { force: true });
        fs.rmSync(pong, { force: true });
      }
    }),
  );
}

export interface PingAnswererOptions {
  readonly dir: string;
  /** This window's record file while one is published. */
  readonly recordFile: () => string | undefined;
  /** Asks this window now: true when it answered (then the pong is written). */
  readonly windowAnswers: () => Promise<boolean>;
  readonly logger: Logger;
  /** How often the ping file is looked for besides the folder watch (default 2 s). */
  readonly pollMs?: number;
}

/** Answers the pings of a newer extension host on the same folders (see askSameWindows). */
export class PingAnswerer {
  private readonly watcher: fs.FSWatcher | undefined;
  private readonly timer: ReturnType<typeof setInterval>;
  private busy = false;
  private disposed = false;

  constructor(private readonly options: PingAnswererOptions) {
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(options.dir, (_event, name) => {
        if (name !== null && name.endsWith(PING_SUFFIX)) void this.look();
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined; // the folder is not there yet: the timer below still looks
    }
    this.watcher = watcher;
    this.timer = setInterval(() => void this.look(), options.pollMs ?? 2_000);
    this.timer.unref?.();
  }

  /** Answers a ping of this window's record, if there is one. */
  async look(): Promise<void> {
    const record = this.options.recordFile();
    if (this.busy || this.disposed || !record) return;
    const ping = pingFile(record, PING_SUFFIX);
    const nonce = readPrivate(ping);
    if (nonce === undefined) return;
    this.busy = true;
    try {
      fs.rmSync(ping, { force: true });
      const live = await this.options.windowAnswers();
      this.options.logger.info(`[discovery] another extension host on this window's folders asked whether this window still answers: ${live ? 'it does (two windows)' : 'it does not (a reloaded window; this one withdraws)'}`);
      if (live && !this.disposed && /^[0-9a-f]{32}$/.test(nonce)) writeAtomic(this.options.dir, path.basename(pingFile(record, PONG_SUFFIX)), nonce);
    } catch (err) {
      this.options.logger.warn(`[discovery] answering a ping failed: ${describeError(err)}`);
    } finally {
      this.busy = false;
    }
  }

  dispose(): void {
    this.disposed = true;
    this.watcher?.close();
    clearInterval(this.timer);
  }
}
