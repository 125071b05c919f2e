/** Default number of output bytes retained per process (TOOLS.md: "the last 256 KiB"). */
export const DEFAULT_RING_CAPACITY = 256 * 1024;

/** Storage starts this small and doubles up to the capacity, so a quiet process costs little. */
const INITIAL_STORAGE = 4 * 1024;

export interface RingRead {
  /** Bytes from `max(cursor, retained_from)`, ending on a UTF-8 character boundary (see `RingBuffer.read`). */
  readonly chunk: Uint8Array;
  /** Absolute offset to pass to the next read. */
  readonly cursor: number;
  /** The requested cursor was older than the retained window: bytes between it and `retained_from` are gone. */
  readonly output_lost: boolean;
  /** Absolute offset of the oldest byte still held. */
  readonly retained_from: number;
  /** With `output_lost`: the bytes from `from` (the cursor asked for) up to `to` (where `chunk` starts) are gone. */
  readonly lost?: LostRange;
}

/** A range of output no longer held, in absolute offsets: `to - from` bytes. */
export interface LostRange {
  readonly from: number;
  readonly to: number;
}

/** Length of the UTF-8 sequence a lead byte starts; 1 for ASCII and for bytes that cannot start one. */
function sequenceLength(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 1;
}

function isContinuation(byte: number): boolean {
  return (byte & 0xc0) === 0x80;
}

/**
 * A bounded byte log addressed by absolute offsets ("cursors"): offset 0 is the first byte ever written and
 * `end` the number written so far. Only the newest `capacity` bytes are kept; older ones are dropped and
 * `retainedFrom` moves forward. Memory never exceeds `capacity` (storage grows by doubling until then).
 *
 * UTF-8 and chunk boundaries: agents receive strings, so `read` never ends a chunk inside a character.
 * If the last bytes of the window are an incomplete UTF-8 sequence, the chunk stops before that sequence and
 * the returned cursor points at its first byte, so the next read starts with the whole character once its
 * remaining bytes have arrived. Exceptions, so that reading always makes progress:
 * - `final` (no more bytes will ever be written): a truncated sequence at the very end is returned as is
 *   (the decoder shows it as U+FFFD) rather than held back forever;
 * - when `maxBytes` is smaller than the one character at the cursor, the whole character is returned
 *   (at most 3 bytes over `maxBytes`).
 * When the cursor had fallen out of the window (`output_lost`), the read starts at `retainedFrom` and also
 * skips up to 3 continuation bytes there, since the start of their character is already gone.
 * Invalid UTF-8 elsewhere is passed through untouched.
 */
export class RingBuffer {
  readonly capacity: number;
  private storage: Uint8Array;
  private written = 0;
  /** Offsets below this were never held here (see resumeAt). */
  private floor = 0;

  constructor(capacity: number = DEFAULT_RING_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`Ring buffer capacity must be a positive integer, got ${capacity}.`);
    this.capacity = capacity;
    this.storage = new Uint8Array(Math.min(capacity, INITIAL_STORAGE));
  }

  /** Absolute offset just past the newest byte (total bytes ever written). */
  get end(): number {
    return this.written;
  }

  /** Absolute offset of the oldest retained byte. */
  get retainedFrom(): number {
    return Math.max(this.floor, this.written - this.capacity);
  }

  /** Bytes currently held. */
  get size(): number {
    return this.written - this.retainedFrom;
  }

  /** Bytes of storage allocated (never more than `capacity`). */
  get allocated(): number {
    return this.storage.length;
  }

  /**
   * Makes an empty buffer continue a log that is `offset` bytes long, of which nothing is held here (the bytes
   * from `offset` on are written next). Used when a process's output moves into a new buffer (a re-attach after
   * a window reload), so cursors stay the same. Storage is allocated at full capacity then.
   */
  resumeAt(offset: number): void {
    if (this.written !== 0) throw new Error('resumeAt needs an empty buffer.');
    if (!Number.isInteger(offset) || offset < 0) throw new RangeError(`offset must be a non-negative integer, got ${offset}.`);
    if (offset === 0) return;
    this.storage = new Uint8Array(this.capacity);
    this.written = offset;
    this.floor = offset;
  }

  /**
   * The next `bytes` bytes of the log were never delivered (dropped upstream): the end moves past them and
   * nothing before the new end is held any more, so a read from an older cursor reports exactly what is gone.
   */
  skip(bytes: number): void {
    if (!Number.isInteger(bytes) || bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${bytes}.`);
    if (bytes === 0) return;
    if (this.storage.length < this.capacity) this.storage = new Uint8Array(this.capacity);
    this.written += bytes;
    this.floor = this.written;
  }

  write(bytes: Uint8Array): void {
    const total = bytes.length;
    if (total === 0) return;
    // Of a write larger than the whole buffer only its tail can survive.
    const keep = bytes.subarray(Math.max(0, total - this.capacity));
    const start = this.written + (total - keep.length);
    this.reserve(start + keep.length);
    const len = this.storage.length;
    const at = start % len;
    const first = Math.min(keep.length, len - at);
    this.storage.set(keep.subarray(0, first), at);
    if (first < keep.length) this.storage.set(keep.subarray(first), 0);
    this.written += total;
  }

  /**
   * Reads up to `maxBytes` from `cursor`. A cursor before `retainedFrom` starts at `retainedFrom` and sets
   * `output_lost`; a cursor past `end` is treated as `end`. See the class comment for character boundaries.
   */
  read(cursor: number, maxBytes: number, options: { final?: boolean } = {}): RingRead {
    const { length, ...r } = this.locate(cursor, maxBytes, options);
    return { ...r, chunk: this.copy(r.cursor - length, r.cursor) };
  }

  /**
   * Where `read` with the same arguments would start and stop, without copying the bytes: the chunk is the
   * `length` bytes before `cursor`. For a caller that takes the bytes some other way (a wider `slice`).
   */
  locate(cursor: number, maxBytes: number, options: { final?: boolean } = {}): Omit<RingRead, 'chunk'> & { readonly length: number } {
    const end = this.written;
    const from = this.retainedFrom;
    const want = Number.isFinite(cursor) ? Math.max(0, Math.floor(cursor)) : 0;
    const lost = want < from;
    let start = Math.min(Math.max(want, from), end);
    if (lost) {
      for (let k = 0; k < 3 && start < end && isContinuation(this.byteAt(start)); k++) start++;
    }
    const max = Math.max(1, Math.floor(maxBytes));
    let stop = Math.min(end, start + max);

    if (stop > start && !(options.final && stop === end)) {
      // Find the lead byte of the last character (at most 3 bytes back) and check it is complete.
      for (let j = stop - 1; j >= Math.max(start, stop - 3); j--) {
        const b = this.byteAt(j);
        if (isContinuation(b)) continue;
        const need = sequenceLength(b);
        if (stop - j < need) {
          if (j > start) stop = j;
          else if (start + need <= end) stop = start + need;
          else stop = options.final ? end : start;
        }
        break;
      }
    }
    return { length: stop - start, cursor: stop, output_lost: lost, retained_from: from, ...(lost ? { lost: { from: want, to: start } } : {}) };
  }

  /** A copy of the retained bytes between the absolute offsets `from` and `to` (clamped to what is retained). */
  slice(from: number, to: number): { bytes: Uint8Array; from: number } {
    const a = Math.min(Math.max(from, this.retainedFrom), this.written);
    const b = Math.min(Math.max(to, a), this.written);
    return { bytes: this.copy(a, b), from: a };
  }

  private byteAt(offset: number): number {
    return this.storage[offset % this.storage.length] as number;
  }

  private copy(start: number, stop: number): Uint8Array {
    const out = new Uint8Array(stop - start);
    if (out.length === 0) return out;
    const len = this.storage.length;
    const at = start % len;
    const first = Math.min(out.length, len - at);
    out.set(this.storage.subarray(at, at + first), 0);
    if (first < out.length) out.set(this.storage.subarray(0, out.length - first), first);
    return out;
  }

  /** Grows the linear storage (before the first wrap) so that offsets below `needEnd` fit. */
  private reserve(needEnd: number): void {
    const len = this.storage.length;
    if (len >= this.capacity || needEnd <= len) return;
    let next = len;
    while (next < needEnd && next < this.capacity) next *= 2;
    next = Math.min(next, this.capacity);
    const grown = new Uint8Array(next);
    // Before the first wrap offsets map to themselves: [0, written) is stored linearly.
    grown.set(this.storage.subarray(0, this.written), 0);
    this.storage = grown;
  }
}
