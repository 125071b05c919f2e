/**
 * What a terminal mirror has yet to show, bounded. Output is coalesced into few large writes; the next write
 * waits until the terminal has taken the previous one (`barrier`), so nothing piles up downstream either. When
 * the terminal falls behind and `maxPendingChars` are waiting, further output is dropped, and where it was
 * dropped the terminal shows a dim `[… N bytes not shown …]`. Notes of the mirror itself (echo, the exit line)
 * are never dropped. Only the mirror loses output: the agent reads the process's own buffer.
 */
export interface TerminalFeedOptions {
  /** Output characters held at most; beyond, output is dropped (and counted) until the terminal catches up. */
  readonly maxPendingChars: number;
  /** Characters handed to the terminal in one write at most. */
  readonly batchChars: number;
  /** Hands text to the terminal. */
  readonly write: (text: string) => void;
  /**
   * Resolves once the terminal has taken everything written so far; the next write waits for it. Absent: no
   * flow control (only the coalescing delay paces writes).
   */
  readonly barrier?: () => PromiseLike<unknown>;
  /** Runs `fn` after the coalescing delay; returns a cancel function. Default: setTimeout of 16 ms. */
  readonly schedule?: (fn: () => void) => () => void;
}

type Segment = { readonly text: string; readonly output: boolean } | { dropped: number };

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';

/** The dim line shown where `bytes` bytes of output were dropped. */
export function droppedMarker(bytes: number): string {
  return `${RESET}\r\n${DIM}[… ${bytes} bytes not shown …]${RESET}\r\n`;
}

function defaultSchedule(fn: () => void): () => void {
  const t = setTimeout(fn, 16);
  return () => clearTimeout(t);
}

export class TerminalFeed {
  private readonly segments: Segment[] = [];
  private pendingChars = 0;
  private cancel: (() => void) | undefined;
  private inFlight = false;
  private disposed = false;
  private droppedTotal = 0;
  private readonly schedule: (fn: () => void) => () => void;

  constructor(private readonly options: TerminalFeedOptions) {
    this.schedule = options.schedule ?? defaultSchedule;
  }

  /** Output characters waiting for the terminal. */
  get pending(): number {
    return this.pendingChars;
  }

  /** Output bytes dropped so far. */
  get dropped(): number {
    return this.droppedTotal;
  }

  /** Whether `chars` more characters of output would be kept (else `push` drops them). */
  accepts(chars: number): boolean {
    return this.pendingChars + chars <= this.options.maxPendingChars;
  }

  /** Process output: `text`, decoded from `bytes` bytes. Kept if it fits, else dropped and counted. */
  push(text: string, bytes: number): void {
    if (this.disposed || text === '') return;
    if (!this.accepts(text.length)) {
      this.drop(bytes);
      return;
    }
    this.segments.push({ text, output: true });
    this.pendingChars += text.length;
    this.arm();
  }

  /** Counts `bytes` bytes of output as dropped here (the caller did not even decode them). */
  drop(bytes: number): void {
    if (this.disposed || bytes <= 0) return;
    this.droppedTotal += bytes;
    const last = this.segments[this.segments.length - 1];
    if (last !== undefined && 'dropped' in last) last.dropped += bytes;
    else this.segments.push({ dropped: bytes });
    this.arm();
  }

  /** Text of the mirror itself: never dropped. */
  note(text: string): void {
    if (this.disposed || text === '') return;
    this.segments.push({ text, output: false });
    this.arm();
  }

  dispose(): void {
    this.disposed = true;
    this.cancel?.();
    this.cancel = undefined;
    this.segments.length = 0;
    this.pendingChars = 0;
  }

  private arm(): void {
    if (this.cancel || this.inFlight || this.disposed) return;
    this.cancel = this.schedule(() => {
      this.cancel = undefined;
      this.flush();
    });
  }

  private flush(): void {
    if (this.disposed || this.inFlight) return;
    let out = '';
    while (this.segments.length > 0 && out.length < this.options.batchChars) {
      const seg = this.segments[0] as Segment;
      if ('dropped' in seg) {
        out += droppedMarker(seg.dropped);
        this.segments.shift();
        continue;
      }
      const room = this.options.batchChars - out.length;
      if (seg.text.length <= room) {
        out += seg.text;
        this.segments.shift();
        if (seg.output) this.pendingChars -= seg.text.length;
        continue;
      }
      // Split a long piece, never between the halves of a surrogate pair.
      let cut = room;
      const code = seg.text.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut--;
      if (cut <= 0) break;
      out += seg.text.slice(0, cut);
      this.segments[0] = { text: seg.text.slice(cut), output: seg.output };
      if (seg.output) this.pendingChars -= cut;
    }
    if (out === '') return;
    this.options.write(out);
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
}
