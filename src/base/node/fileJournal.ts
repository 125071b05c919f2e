import { randomBytes } from 'node:crypto';
import { promises as fs, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import type { Journal, JournalLoadIssue, JournalRecord } from '../journal';
import { decodeJournalText, encodeJournalRecord, logJournalIssues } from '../journal';
import type { Logger } from '../logger';
import { silentLogger } from '../logger';
import { asError } from '../describeError';

/** How long a journal keeps the text it read for the next load, and up to what length. */
const TEXT_KEPT_MS = 10_000;
const TEXT_KEPT_CHARS = 1024 * 1024;

export interface FileJournalOptions {
  /** Absolute folder holding the journal (the extension passes its workspace storage folder). Created if missing. */
  readonly directory: string;
  /** File name inside `directory`, e.g. `operations.jsonl`. */
  readonly fileName: string;
  readonly logger?: Logger;
}

/**
 * A journal in one JSON Lines file. Every append is written through one `a+` handle and fsynced before its
 * promise resolves; appends, loads and rewrites run one at a time through a promise queue, so lines never
 * interleave. The file and its folder are private to the user (0600 / 0700 where the platform has modes).
 */
export class FileJournal implements Journal {
  readonly path: string;
  private readonly directory: string;
  private readonly logger: Logger;
  private handle: FileHandle | undefined;
  /** Whether the file is known to end with '\n' (or be empty), so the next line starts cleanly. */
  private tailClean = false;
  private queue: Promise<void> = Promise.resolve();
  private issues: JournalLoadIssue[] = [];
  private closed = false;
  /** Set while another extension host may use the file (suspend()): nothing is written until resume(). */
  private suspended = false;
  /**
   * The file's text as this journal last read or wrote it, while it is known to be exactly that: every change goes
   * through this instance, so a load (each section of a shared ledger loads at activation, one after the other)
   * decodes it again without reading the file. Kept for TEXT_KEPT_MS after the last load and only up to
   * TEXT_KEPT_CHARS, so a large ledger is not held in memory for the life of the extension host; forgotten after a
   * failed write, when the file's end is not known.
   */
  private text: string | undefined;
  private forget: ReturnType<typeof setTimeout> | undefined;

  constructor(options: FileJournalOptions) {
    if (!path.isAbsolute(options.directory)) {
      throw new Error(`FileJournal needs an absolute folder, got "${options.directory}".`);
    }
    if (options.fileName === '' || path.basename(options.fileName) !== options.fileName) {
      throw new Error(`FileJournal needs a plain file name, got "${options.fileName}".`);
    }
    this.directory = options.directory;
    this.path = path.join(options.directory, options.fileName);
    this.logger = options.logger ?? silentLogger;
  }

  get lastLoadIssues(): readonly JournalLoadIssue[] {
    return this.issues;
  }

  load(): Promise<JournalRecord[]> {
    return this.enqueue(async () => {
      let text = this.text;
      if (text === undefined) {
        try {
          text = await fs.readFile(this.path, 'utf8');
        } catch (err) {
          if (errorCode(err) !== 'ENOENT') throw err;
          this.issues = [];
          // No file yet: the first append creates it with just its line.
          this.keep('');
          return [];
        }
      }
      this.keep(text);
      const decoded = decodeJournalText(text);
      this.issues = decoded.issues;
      logJournalIssues(this.logger, this.path, decoded.issues);
      return decoded.records;
    });
  }

  append(record: JournalRecord): Promise<void> {
    let bytes: Buffer;
    let line: string;
    try {
      // Encode before queueing: a record that is not JSON fails at once and never touches the file.
      line = encodeJournalRecord(record);
      bytes = Buffer.from(line, 'utf8');
    } catch (err) {
      return Promise.reject(asError(err));
    }
    return this.enqueue(async () => {
      this.assertOpen();
      try {
        const handle = await this.openHandle();
        if (!this.tailClean) {
          // A torn last line (crash, or a failed earlier write) must not swallow this record: start a new line.
          if (!(await endsWithNewline(handle))) {
            writeAll(handle, Buffer.from('\n'));
            if (this.text !== undefined) this.text += '\n';
          }
          this.tailClean = true;
        }
        writeAll(handle, bytes);
        if (this.text !== undefined) this.text = this.text.length + line.length <= TEXT_KEPT_CHARS ? this.text + line : undefined;
        await handle.sync();
      } catch (err) {
        // The file may now end in a partial line; re-check before the next append and start with a fresh handle.
        this.tailClean = false;
        this.text = undefined;
        await this.closeHandle();
        throw err;
      }
    });
  }

  rewrite(records: readonly JournalRecord[]): Promise<void> {
    let text: string;
    try {
      text = records.map(encodeJournalRecord).join('');
    } catch (err) {
      return Promise.reject(asError(err));
    }
    return this.enqueue(async () => {
      this.assertOpen();
      await this.closeHandle();
      await fs.mkdir(this.directory, { recursive: true, mode: 0o700 });
      const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        const out = await fs.open(temp, 'wx', 0o600);
        try {
          await out.writeFile(text, 'utf8');
          await out.sync();
        } finally {
          await out.close();
        }
        await fs.rename(temp, this.path);
      } catch (err) {
        await fs.rm(temp, { force: true }).catch(() => undefined);
        this.text = undefined;
        throw err;
      }
      this.keep(text);
      // The rename is durable only once the folder entry is on disk.
      await fsyncDirectory(this.directory, this.logger);
      this.tailClean = true;
    });
  }

  close(): Promise<void> {
    return this.enqueue(async () => {
      this.closed = true;
      clearTimeout(this.forget);
      this.text = undefined;
      await this.closeHandle();
    });
  }

  /**
   * Stops writing until resume(): the file may be taken over by another extension host of the workspace
   * (stateFolder.ts). Resolves once every write queued before it is done and the handle is closed; appends and
   * rewrites in between fail. The text kept for loads is forgotten, since the file may change meanwhile.
   */
  suspend(): Promise<void> {
    return this.enqueue(async () => {
      this.suspended = true;
      clearTimeout(this.forget);
      this.text = undefined;
      this.tailClean = false;
      await this.closeHandle();
    });
  }

  /** Writes again after suspend() (only when the file was not taken over meanwhile). */
  resume(): void {
    this.suspended = false;
  }

  /** Keeps the file's text for the loads that follow (see `text`). */
  private keep(text: string): void {
    this.text = text.length <= TEXT_KEPT_CHARS ? text : undefined;
    clearTimeout(this.forget);
    this.forget = setTimeout(() => {
      this.text = undefined;
    }, TEXT_KEPT_MS);
    this.forget.unref?.();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`The journal ${this.path} is closed.`);
    if (this.suspended) throw new Error(`The journal ${this.path} is suspended: this window's state may be in use by a newer extension host.`);
  }

  private async openHandle(): Promise<FileHandle> {
    if (this.handle) return this.handle;
    await fs.mkdir(this.directory, { recursive: true, mode: 0o700 });
    const existed = await fs.stat(this.path).then(
      () => true,
      (err: unknown) => {
        if (errorCode(err) === 'ENOENT') return false;
        throw err;
      },
    );
    this.handle = await fs.open(this.path, 'a+', 0o600);
    // A new file exists durably only once its folder entry is on disk.
    if (!existed) await fsyncDirectory(this.directory, this.logger);
    return this.handle;
  }

  private async closeHandle(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await handle.close().catch(() => undefined);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/**
 * Writes the line into the page cache synchronously (one record, a few hundred bytes: a thread-pool round trip costs
 * more than the call on a loaded machine, see src/kernel/node/confinedFs.ts); the fsync that makes it durable stays
 * asynchronous, since it waits for the disk.
 */
function writeAll(handle: FileHandle, bytes: Buffer): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(handle.fd, bytes, offset, bytes.length - offset);
}

async function endsWithNewline(handle: FileHandle): Promise<boolean> {
  const { size } = await handle.stat();
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  await handle.read(last, 0, 1, size - 1);
  return last[0] === 0x0a;
}

/** fsync a folder so a create or rename in it survives power loss. Windows cannot open folders: skipped there. */
async function fsyncDirectory(directory: string, logger: Logger): Promise<void> {
  if (process.platform === 'win32') return;
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(directory, 'r');
    await handle.sync();
  } catch (err) {
    const code = errorCode(err);
    // Some file systems refuse fsync on a folder; the data itself is already synced.
    if (code === 'EINVAL' || code === 'EPERM' || code === 'EISDIR' || code === 'EBADF' || code === 'ENOTSUP') {
      logger.debug(`journal: could not fsync folder ${directory} (${code})`);
      return;
    }
    throw err;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
