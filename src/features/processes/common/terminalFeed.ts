/**
 * What a terminal mirror has yet to show, bounded. Output is kept as the bytes the process wrote, in one buffer
 * the feed reuses, and decoded only when it is written, a small batch at a time: every string the mirror makes (the
 * batch, and the extension host's copies of it on the way to the workbench) stays below V8's large-object size, so
 * a flood leaves nothing behind in the old generation of the extension host's heap. The next write waits until the
 * terminal has taken the previous one (`barrier`), so nothing piles up downstream either; while output comes faster
 * than that, the writes come less often and carry more (`flood`). When the terminal falls
 * behind and `maxPendingBytes` are waiting, the oldest waiting output is dropped for the newest (the middle of a
 * flood is skipped, its end is shown), and where output was dropped the terminal shows a dim
 * `[… N bytes not shown …]`. Notes of the mirror itself (echo, the exit line) are never dropped. Only the mirror
 * loses output: the agent reads the process's own buffer.
 */
export interface TerminalFeedOptions {
  /** Output bytes held at most; beyond, the oldest held output is dropped (and counted) for the newest. */
  readonly maxPendingBytes: number;
  /** Output bytes decoded and handed to the terminal in one write at most (with the notes between them). */
  readonly batchBytes: number;
  /** Hands text to the terminal. */
  readonly write: (text: string) => void;
  /** Turns decoded output into what the terminal is given (pipes: lone `\n` → `\r\n`); called in output order. */
  readonly render?: (text: string) => string;
  /**
   * Resolves once the terminal has taken everything written so far; the next write waits for it. Absent: no
   * flow control (only the coalescing delay paces writes).
   */
  readonly barrier?: () => PromiseLike<unknown>;
  /**
   * While the terminal is behind (output was still waiting after the last write): the delay before the next write,
   * and how many batches it hands over at once (each its own `write`). Every write the terminal takes is a frame the
   * workbench draws, so a flood drawn as fewer, fuller frames costs the renderer less for the same text. Output that
   * came faster than those writes show (more than `batches` batches waiting when one is due) is dropped down to the
   * newest `batches` batches; while that goes on (the last write dropped some), each write shows the newest one
   * batch. So a burst of up to `batches` + 1 batches shows whole, and a flood shows its newest output at each write
   * and its end one write after it ends. Default: the normal delay and one batch.
   */
  readonly flood?: { readonly delayMs: number; readonly batches: number };
  /** Runs `fn` after `delayMs`; returns a cancel function. Default: setTimeout. */
  readonly schedule?: (fn: () => void, delayMs: number) => () => void;
}

/**
 * A note: its text, or a function of whether what the terminal was given so far ends a line (evaluated when it
 * is written, since the output before it is decoded only then).
 */
export type Note = string | ((atLineStart: boolean) => string);

type Segment = { output: number } | { readonly note: Note } | { dropped: number } | { readonly end: true };

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
/** Storage starts this small and doubles up to maxPendingBytes, so a quiet terminal costs little. */
const INITIAL_STORAGE = 64 * 1024;
/** The coalescing delay before a write while the terminal keeps up. */
export const WRITE_DELAY_MS = 16;

/** The dim line shown where `bytes` bytes of output were dropped. */
export function droppedMarker(bytes: number): string {
  return `${RESET}\r\n${DIM}[… ${bytes} bytes not shown …]${RESET}\r\n`;
}

function defaultSchedule(fn: () => void, delayMs: number): () => void {
  const t = setTimeout(fn, delayMs);
  return () => clearTimeout(t);
}

export class TerminalFeed {
  private readonly segments: Segment[] = [];
  /** The pending output bytes, a circular queue: `size` bytes from `head`. */
  private storage = new Uint8Array(0);
  private head = 0;
  private size = 0;
  private readonly decoder = new TextDecoder('utf-8');
  private cancel: (() => void) | undefined;
  private inFlight = false;
  private disposed = false;
  private droppedTotal = 0;
  /** Whether what the terminal was given so far ends a line. */
  private atLineStart = true;
  /** Output was still waiting after the last write: the next one follows the flood pacing. */
  private behind = false;
  /** The last write dropped older output (see TerminalFeedOptions.flood): the flood goes on. */
  private shedding = false;
  private readonly schedule: (fn: () => void, delayMs: number) => () => void;

  constructor(private readonly options: TerminalFeedOptions) {
    this.schedule = options.schedule ?? defaultSchedule;
  }

  /** Output bytes waiting for the terminal. */
  get pending(): number {
    return this.size;
  }

  /** Bytes of storage allocated for pending output (never more than maxPendingBytes). */
  get allocated(): number {
    return this.storage.length;
  }

  /** Output bytes dropped so far. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Whether `bytes` more bytes of output fit beside what is held (else `push` drops the held output first). */
  accepts(bytes: number): boolean {
    return this.size + bytes <= this.options.maxPendingBytes;
  }

  /**
   * Process output, in the order written, copied (the caller may reuse `bytes` after the call). When it does not
   * fit beside what is held, all the held output is dropped first (counted, and shown as one marker), and of output
   * larger than `maxPendingBytes` only its end is kept: the terminal skips the middle of a flood and shows its end.
   */
  push(bytes: Uint8Array): void {
    if (this.disposed || bytes.length === 0) return;
    if (!this.accepts(bytes.length)) {
      this.keepNewest(0);
      // What is kept starts at a character: the rest of one whose start was dropped goes with it.
      let from = bytes.length - Math.min(bytes.length, this.options.maxPendingBytes);
      for (let k = 0; k < 3 && from < bytes.length && ((bytes[from] as number) & 0xc0) === 0x80; k++) from++;
      this.drop(from);
      bytes = bytes.subarray(from);
      if (bytes.length === 0) return;
    }
    this.reserve(this.size + bytes.length);
    const cap = this.storage.length;
    const at = (this.head + this.size) % cap;
    const first = Math.min(bytes.length, cap - at);
    this.storage.set(bytes.subarray(0, first), at);
    if (first < bytes.length) this.storage.set(bytes.subarray(first), 0);
    this.size += bytes.length;
    const last = this.segments[this.segments.length - 1];
    if (last !== undefined && 'output' in last) last.output += bytes.length;
    else this.segments.push({ output: bytes.length });
    this.arm();
  }

  /** Counts `bytes` bytes of output as dropped here. */
  drop(bytes: number): void {
    if (this.disposed || bytes <= 0) return;
    this.droppedTotal += bytes;
    const last = this.segments[this.segments.length - 1];
    if (last !== undefined && 'dropped' in last) last.dropped += bytes;
    else this.segments.push({ dropped: bytes });
    this.arm();
  }

  /**
   * Drops the oldest waiting output (not yet decoded) beyond the newest `keep` bytes (from the first character
   * boundary after the cut; with `keep` 0, all of it): each run of it becomes a dropped count where it was, between
   * the notes around it, and adjacent counts merge into one marker. Returns how many bytes it dropped.
   */
  private keepNewest(keep: number): number {
    let excess = this.size - keep;
    if (excess <= 0) return 0;
    const cap = this.storage.length;
    for (let k = 0; k < 3 && excess < this.size && ((this.storage[(this.head + excess) % cap] as number) & 0xc0) === 0x80; k++) excess++;
    this.droppedTotal += excess;
    this.head = (this.head + excess) % cap;
    this.size -= excess;
    if (this.size === 0) this.head = 0;
    const kept: Segment[] = [];
    let left = excess;
    for (const seg of this.segments) {
      if (left > 0 && 'output' in seg) {
        const n = Math.min(seg.output, left);
        left -= n;
        const last = kept[kept.length - 1];
        if (last !== undefined && 'dropped' in last) last.dropped += n;
        else kept.push({ dropped: n });
        if (seg.output > n) kept.push({ output: seg.output - n });
        continue;
      }
      const last = kept[kept.length - 1];
      if ('dropped' in seg && last !== undefined && 'dropped' in last) last.dropped += seg.dropped;
      else kept.push(seg);
    }
    this.segments.splice(0, this.segments.length, ...kept);
    return excess;
  }

  /** Text of the mirror itself: never dropped. */
  note(note: Note): void {
    if (this.disposed || note === '') return;
    this.segments.push({ note });
    this.arm();
  }

  /** No more output follows: a character cut short at the end is shown (as U+FFFD) before what comes next. */
  end(): void {
    if (this.disposed) return;
    this.segments.push({ end: true });
    this.arm();
  }

  dispose(): void {
    this.disposed = true;
    this.cancel?.();
    this.cancel = undefined;
    this.segments.length = 0;
    this.storage = new Uint8Array(0);
    this.head = 0;
    this.size = 0;
  }

  private arm(): void {
    if (this.cancel || this.inFlight || this.disposed) return;
    const delay = this.behind && this.options.flood ? this.options.flood.delayMs : WRITE_DELAY_MS;
    this.cancel = this.schedule(() => {
      this.cancel = undefined;
      this.flush();
    }, delay);
  }

  /** Grows the queue (keeping its order) so that `need` bytes fit. */
  private reserve(need: number): void {
    const cap = this.storage.length;
    if (need <= cap) return;
    let next = Math.max(cap, INITIAL_STORAGE);
    while (next < need) next *= 2;
    next = Math.min(Math.max(next, need), Math.max(this.options.maxPendingBytes, need));
    const grown = new Uint8Array(next);
    const first = Math.min(this.size, cap - this.head);
    grown.set(this.storage.subarray(this.head, this.head + first), 0);
    if (first < this.size) grown.set(this.storage.subarray(0, this.size - first), first);
    this.storage = grown;
    this.head = 0;
  }

  /** Decodes the next `n` pending bytes (in order with what came before). */
  private take(n: number): string {
    const cap = this.storage.length;
    const first = Math.min(n, cap - this.head);
    let text = this.decoder.decode(this.storage.subarray(this.head, this.head + first), { stream: true });
    if (first < n) text += this.decoder.decode(this.storage.subarray(0, n - first), { stream: true });
    this.head = (this.head + n) % cap;
    this.size -= n;
    if (this.size === 0) this.head = 0;
    return text;
  }

  private flush(): void {
    if (this.disposed || this.inFlight) return;
    const flood = this.behind ? this.options.flood : undefined;
    // Output dropped at the last write came faster than the writes show: while that goes on, one batch a write.
    const batches = flood ? (this.shedding ? 1 : Math.max(1, flood.batches)) : 1;
    this.shedding = flood !== undefined && this.keepNewest(batches * this.options.batchBytes) > 0;
    let wrote = false;
    for (let i = 0; i < batches; i++) {
      const out = this.nextBatch();
      if (out === '') break;
      this.options.write(out);
      wrote = true;
    }
    if (!wrote) {
      // Only part of a character so far (its rest is pending): go on with the next batch.
      this.behind = false;
      if (this.segments.length > 0) this.arm();
      return;
    }
    // After a write that dropped output, the next one keeps the flood pace even if nothing waits yet.
    this.behind = this.size > 0 || this.shedding;
    const barrier = this.options.barrier;
    if (!barrier) {
      if (this.segments.length > 0) this.arm();
      return;
    }
    this.inFlight = true;
    const resume = (): void => {
      this.inFlight = false;
      if (this.segments.length > 0) this.arm();
    };
    Promise.resolve(barrier()).then(resume, resume);
  }

  /** The text of the next write: at most `batchBytes` of output, with the notes and markers among it. */
  private nextBatch(): string {
    let out = '';
    let budget = this.options.batchBytes;
    const add = (text: string): void => {
      if (text === '') return;
      out += text;
      this.atLineStart = text.endsWith('\n');
    };
    // Past the budget, what follows that is not output (a note such as the exit line, a marker, the end) still
    // goes with this write: it costs no frame of its own.
    while (this.segments.length > 0 && (budget > 0 || !('output' in (this.segments[0] as Segment)))) {
      const seg = this.segments[0] as Segment;
      if ('output' in seg) {
        const n = Math.min(seg.output, budget);
        const text = this.take(n);
        add(this.options.render ? this.options.render(text) : text);
        budget -= n;
        seg.output -= n;
        if (seg.output === 0) this.segments.shift();
        continue;
      }
      this.segments.shift();
      if ('dropped' in seg) {
        // The bytes before the gap may end inside a character whose rest was dropped: start afresh after it.
        this.decoder.decode();
        add(droppedMarker(seg.dropped));
      } else if ('end' in seg) {
        const rest = this.decoder.decode();
        add(this.options.render ? this.options.render(rest) : rest);
      } else {
        add(typeof seg.note === 'string' ? seg.note : seg.note(this.atLineStart));
      }
    }
    return out;
  }
}
