import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { BlobStore } from '../common/blobStore';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import { contentVersion } from '../../patches';

/** Bytes of checkpoint content kept on disk, by default: past it the least recently stored blobs are removed. */
export const DEFAULT_CHECKPOINT_STORE_BYTES = 256 * 1024 * 1024;
/** Largest file a checkpoint keeps, by default: a larger one is not kept, and checkpoints needing it cannot be restored. */
export const DEFAULT_CHECKPOINT_BLOB_BYTES = 16 * 1024 * 1024;

export interface FileBlobStoreOptions {
  /** Absolute folder of the blobs (created when missing, private to the user). */
  readonly directory: string;
  readonly maxBytes?: number;
  readonly maxBlobBytes?: number;
  readonly logger?: Logger;
}

const VERSION = /^sha256:([0-9a-f]{64})$/;

/**
 * A BlobStore in one folder: one file per blob, named by its hex digest, written atomically (temp file + rename).
 * Reads verify the digest, so a damaged blob reads as missing, never as wrong content. The folder's size is known
 * from one scan at the first use and kept up to date; eviction removes the oldest blobs by modification time (a
 * repeated put touches the blob, so content still in use stays).
 */
export class FileBlobStore implements BlobStore {
  readonly limits: { readonly maxBytes: number; readonly maxBlobBytes: number };
  private readonly directory: string;
  private readonly logger: Logger;
  private sizes: Map<string, { size: number; mtimeMs: number }> | undefined;
  private total = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: FileBlobStoreOptions) {
    if (!path.isAbsolute(options.directory)) throw new Error(`FileBlobStore needs an absolute folder, got "${options.directory}".`);
    this.directory = options.directory;
    this.logger = options.logger ?? silentLogger;
    this.limits = { maxBytes: options.maxBytes ?? DEFAULT_CHECKPOINT_STORE_BYTES, maxBlobBytes: options.maxBlobBytes ?? DEFAULT_CHECKPOINT_BLOB_BYTES };
  }

  put(version: string, bytes: Uint8Array): Promise<boolean> {
    const hex = hexOf(version);
    if (bytes.length > this.limits.maxBlobBytes || bytes.length > this.limits.maxBytes) return Promise.resolve(false);
    return this.store(hex, version, bytes);
  }

  /**
   * The digest check and the temp file are written outside the queue, so the puts of one patch (a work's before and
   * after bytes of every file) go to disk side by side; only the rename and the bookkeeping take turns. The first
   * scan (which removes stale temp files) is over before any temp file is written.
   */
  private async store(hex: string, version: string, bytes: Uint8Array): Promise<boolean> {
    const file = path.join(this.directory, hex);
    const touch = async (known: { mtimeMs: number }): Promise<boolean> => {
      const now = Date.now();
      await fs.utimes(file, now / 1000, now / 1000).catch(() => undefined);
      known.mtimeMs = now;
      return true;
    };
    const sizes = await this.enqueue(() => this.index());
    const before = sizes.get(hex);
    if (before !== undefined) return this.enqueue(() => touch(before));
    if (contentVersion(bytes) !== version) throw new Error(`blob ${version} does not match its bytes`);
    const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await fs.writeFile(temp, bytes, { mode: 0o600 });
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => undefined);
      throw err;
    }
    return this.enqueue(async () => {
      const known = sizes.get(hex);
      if (known !== undefined) {
        // Another put of the same content finished first.
        await fs.rm(temp, { force: true });
        return touch(known);
      }
      await fs.rename(temp, file);
      sizes.set(hex, { size: bytes.length, mtimeMs: Date.now() });
      this.total += bytes.length;
      await this.evict(hex);
      return true;
    });
  }

  async get(version: string): Promise<Uint8Array | undefined> {
    const hex = hexOf(version);
    let bytes: Uint8Array;
    try {
      bytes = await fs.readFile(path.join(this.directory, hex));
    } catch {
      return undefined;
    }
    if (contentVersion(bytes) !== version) {
      this.logger.warn(`[checkpoints] a kept blob does not match its name (${hex.slice(0, 12)}…); treated as missing`);
      return undefined;
    }
    return bytes;
  }

  async has(version: string): Promise<boolean> {
    const hex = hexOf(version);
    return this.enqueue(async () => (await this.index()).has(hex));
  }

  /** Bytes kept now (after the first scan). */
  async size(): Promise<number> {
    return this.enqueue(async () => {
      await this.index();
      return this.total;
    });
  }

  private async index(): Promise<Map<string, { size: number; mtimeMs: number }>> {
    if (this.sizes) return this.sizes;
    await fs.mkdir(this.directory, { recursive: true, mode: 0o700 });
    const sizes = new Map<string, { size: number; mtimeMs: number }>();
    let total = 0;
    for (const name of await fs.readdir(this.directory)) {
      const file = path.join(this.directory, name);
      if (name.endsWith('.tmp')) {
        await fs.rm(file, { force: true }).catch(() => undefined);
        continue;
      }
      if (!/^[0-9a-f]{64}$/.test(name)) continue;
      const st = await fs.stat(file).catch(() => undefined);
      if (!st?.isFile()) continue;
      sizes.set(name, { size: st.size, mtimeMs: st.mtimeMs });
      total += st.size;
    }
    this.sizes = sizes;
    this.total = total;
    return sizes;
  }

  /** Removes the oldest blobs (never `keep`, the one just stored) until the total fits. */
  private async evict(keep: string): Promise<void> {
    const sizes = this.sizes;
    if (!sizes || this.total <= this.limits.maxBytes) return;
    const oldest = [...sizes.entries()].filter(([hex]) => hex !== keep).sort((a, b) => a[1].mtimeMs - b[1].mtimeMs);
    let removed = 0;
    for (const [hex, { size }] of oldest) {
      if (this.total <= this.limits.maxBytes) break;
      await fs.rm(path.join(this.directory, hex), { force: true });
      sizes.delete(hex);
      this.total -= size;
      removed++;
    }
    if (removed > 0) this.logger.info(`[checkpoints] removed ${removed} old checkpoint blob(s) to stay within ${this.limits.maxBytes} bytes`);
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

function hexOf(version: string): string {
  const m = VERSION.exec(version);
  if (!m) throw new Error(`not a content version: ${version}`);
  return m[1] as string;
}
