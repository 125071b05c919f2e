/**
 * Content-addressed storage of file bytes: what a checkpoint needs to put a file back as it was. A blob's name is
 * the file's `version` (`sha256:<hex>` of its bytes), the same value the operation ledger records before and after
 * every change, so the ledger says which blobs a checkpoint needs and the store only keeps bytes.
 *
 * The store is bounded: a blob over `maxBlobBytes` is not kept, and past `maxBytes` the least recently stored
 * blobs go first. A checkpoint whose blobs are gone can no longer be restored, and says so.
 */
export interface BlobStore {
  /** Keeps `bytes` under `version` (their sha256). False when they were not kept (over the per-blob limit). */
  put(version: string, bytes: Uint8Array): Promise<boolean>;
  /** The bytes kept under `version`, verified against it; undefined when they are not (or no longer) kept. */
  get(version: string): Promise<Uint8Array | undefined>;
  /** Whether `version` is kept (without reading it). */
  has(version: string): Promise<boolean>;
  /** The bounds in force, for messages. */
  readonly limits: { readonly maxBytes: number; readonly maxBlobBytes: number };
}
