import type * as net from 'node:net';
import type { EndReason, ProcessHandle } from '../../common/processBackend';
import type { RingBuffer } from '../../common/ringBuffer';
import type { HostedRecord, WireExit } from './protocol';
import { encodeData, encodeMessage } from './protocol';

/** A process the host holds: its record, its output ring, and how much of that the attached client has. */
export interface HostEntry {
  readonly record: HostedRecord;
  readonly handle: ProcessHandle;
  readonly ring: RingBuffer;
  requested?: EndReason;
  exit?: WireExit;
  /** When it ended (ms since the epoch). */
  endedAt?: number;
  inputClosed?: boolean;
  /** The offset up to which the attached client has this process's output (sent, or told it was skipped). */
  sent: number;
  timer?: ReturnType<typeof setTimeout>;
  /** Bytes of output the process may still send at once (see FLOOD_PERIOD_MS): negative after a send it had to make. */
  credit: number;
  /** When `credit` was last brought up to date (performance.now()). */
  creditAt: number;
  /** Over its rate: output waits in the ring until this timer sends the latest of it. */
  paced?: ReturnType<typeof setTimeout>;
}

/**
 * Output queued on the client's socket past which the host stops sending and lets the rings absorb a flood: the
 * processes never wait for the window (no back-pressure on a dev server), and the host's memory stays bounded by
 * the rings plus this. When the socket drains, each process resumes from what its ring still holds, after a
 * `skip` for the bytes it no longer does, so the window's cursors stay exact and its reader is told what it lost.
 */
const SEND_HIGH_WATER = 4 * 1024 * 1024;
/**
 * A process's new output is gathered for FRAME_GATHER_MS and sent as one data frame, or at once when
 * FRAME_GATHER_BYTES are waiting (VS Code's own pty host batches terminal data for 5 ms the same way). A PTY hands
 * over at most 4 KiB per read, usually one read per turn of the event loop during a flood (the writer waits for each
 * to be taken): a frame per read, or per turn, cost both processes a system call and the window a round of listeners
 * for each 4 KiB. Gathered, 200 MiB through the host took the window 0.2–0.5 s of CPU instead of 1.0–1.3 s, and the
 * host 1.4–2.1 s instead of 2.0–2.9 s (plain-Node runs on a 2-core machine).
 */
const FRAME_GATHER_MS = 5;
const FRAME_GATHER_BYTES = 64 * 1024;
/**
 * How much of a process's output is sent to the window at most: one ring's worth (its retained output, 256 KiB by
 * default; at least FLOOD_MIN_BYTES) per FLOOD_PERIOD_MS on average, and as much at once: a token bucket per
 * process. Output within that is sent as it comes, every byte: a reader reading once a period gets all of it, which
 * is what the ring promises anyway. A flood beyond it (`cat` of a large file, `yes`) waits in the host's ring, and when the process
 * has credit again the window gets what the ring then holds, the bytes it no longer holds announced as a `skip` (the
 * reader's `lost` range). Every byte the window takes costs the extension host, the agent reading it and the
 * terminal drawing it CPU on the cores the command runs on: with every byte of a 200 MiB flood sent, the command
 * ran at 0.55x bare node-pty's speed on a 2-core machine, against 1.07x with the host sending nothing
 * (docs/BENCHMARKS.md).
 */
export const FLOOD_PERIOD_MS = 1000;
/** The least a period allows, however small the ring (`codespace.exec.retainedOutputBytes` goes down to 4 KiB). */
export const FLOOD_MIN_BYTES = 256 * 1024;
/** The shortest wait of a paced process before its next send. */
const FLOOD_PACE_MS = 100;

/** The bytes of a process's output sent per FLOOD_PERIOD_MS at most, and at once, for a ring of `capacity` bytes. */
export function floodBytes(capacity: number): number {
  return Math.max(capacity, FLOOD_MIN_BYTES);
}

/**
 * Sends the processes' output to the attached client: gathered into frames, at most a ring's worth per period for
 * each process (the rest waits in its ring, then goes as a `skip` and the latest output), and not at all while
 * the client's socket is congested (each process then resumes from its ring when it drains).
 */
export class OutputSender {
  /** The client's socket is over SEND_HIGH_WATER: output waits in the rings until it drains. */
  private congested = false;
  /** Processes with output not yet sent, sent together after FRAME_GATHER_MS (or at FRAME_GATHER_BYTES). */
  private readonly gathering = new Set<HostEntry>();
  private gatherTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    /** The attached client, if any. */
    private readonly client: () => net.Socket | undefined,
    private readonly entries: () => Iterable<HostEntry>,
  ) {}

  /** A client attached and was handed every ring whole: nothing is held back for it. */
  attached(): void {
    this.congested = false;
  }

  /** New output of a process: kept in its ring, then forwarded. */
  received(entry: HostEntry, bytes: Uint8Array): void {
    // What is gathered goes out before this write could push it out of the ring (a paced process is not gathering).
    if (entry.ring.end - entry.sent + bytes.length > entry.ring.capacity && this.gathering.delete(entry) && !this.congested) this.catchUp(entry);
    entry.ring.write(bytes);
    this.forward(entry);
  }

  /** New output of a process: to the client once gathered (FRAME_GATHER_MS), unless the client is behind (then the ring keeps it). */
  private forward(entry: HostEntry): void {
    const client = this.client();
    if (!client || client.destroyed || this.congested) return;
    if (client.writableLength > SEND_HIGH_WATER) {
      this.congested = true;
      client.once('drain', () => {
        if (this.client() !== client) return;
        this.congested = false;
        for (const e of this.entries()) this.catchUp(e);
      });
      return;
    }
    if (entry.paced) return;
    if (this.overRate(entry)) {
      this.pace(entry);
      return;
    }
    if (entry.ring.end - entry.sent >= Math.min(FRAME_GATHER_BYTES, entry.ring.capacity)) {
      this.gathering.delete(entry);
      this.catchUp(entry);
      return;
    }
    this.gathering.add(entry);
    this.gatherTimer ??= setTimeout(() => this.sendGathered(), FRAME_GATHER_MS);
  }

  /** Brings the process's credit up to date: a period's worth more per FLOOD_PERIOD_MS, a period's worth at most. */
  private refill(entry: HostEntry): void {
    const now = performance.now();
    const period = floodBytes(entry.ring.capacity);
    entry.credit = Math.min(period, entry.credit + ((now - entry.creditAt) * period) / FLOOD_PERIOD_MS);
    entry.creditAt = now;
  }

  /** True when the process has no credit left: it sent more than FLOOD_PERIOD_MS allows. */
  private overRate(entry: HostEntry): boolean {
    this.refill(entry);
    return entry.credit <= 0;
  }

  /** Holds a process's output in its ring until it has credit again, then sends the latest of it. */
  private pace(entry: HostEntry): void {
    this.gathering.delete(entry);
    const wait = Math.max(FLOOD_PACE_MS, Math.ceil((-entry.credit * FLOOD_PERIOD_MS) / floodBytes(entry.ring.capacity)));
    entry.paced = setTimeout(() => {
      entry.paced = undefined;
      this.refill(entry);
      if (!this.congested) this.catchUp(entry);
    }, wait);
  }

  unpace(entry: HostEntry): void {
    if (entry.paced) clearTimeout(entry.paced);
    entry.paced = undefined;
  }

  /** Sends each process's gathered output as one frame (catchUp: from where the client is, out of the ring). */
  private sendGathered(): void {
    this.gatherTimer = undefined;
    const due = [...this.gathering];
    this.gathering.clear();
    if (this.congested) return;
    for (const e of due) this.catchUp(e);
  }

  /** Sends what the client has not had of a process's output: a skip for what the ring no longer holds, then the rest. */
  catchUp(entry: HostEntry): void {
    const client = this.client();
    if (!client || client.destroyed || entry.sent >= entry.ring.end) return;
    const from = Math.max(entry.sent, entry.ring.retainedFrom);
    if (from > entry.sent) client.write(encodeMessage({ t: 'skip', id: entry.record.process_id, bytes: from - entry.sent }));
    const rest = entry.ring.slice(from, entry.ring.end).bytes;
    if (rest.length > 0) client.write(encodeData(entry.record.process_id, rest));
    entry.sent = entry.ring.end;
    entry.credit -= rest.length;
  }
}
