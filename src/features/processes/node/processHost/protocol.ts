import { createHash, timingSafeEqual } from 'node:crypto';
import type { EndReason, SpawnOptions, SpawnRecord } from '../../common/processBackend';
import type { ProcessIdentity } from '../../../../base/node/processIdentity';

/**
 * The process host's wire format on its Unix socket. Every frame is a 4-byte big-endian length, then one kind
 * byte, then the body:
 * - kind 1: a JSON message (UTF-8), one of the `Message` shapes below;
 * - kind 2: process output: a 1-byte id length, the ASCII process id, then the raw bytes.
 * Output travels as raw bytes (not JSON) so a fast producer costs no encoding on either side.
 */
export const FRAME_JSON = 1;
export const FRAME_DATA = 2;
/** A frame larger than this is a protocol error (the biggest real one is an attach snapshot: rings of live processes). */
export const MAX_FRAME = 256 * 1024 * 1024;

export type Frame = { readonly kind: typeof FRAME_JSON; readonly message: Message } | { readonly kind: typeof FRAME_DATA; readonly id: string; readonly bytes: Uint8Array };

/** What the extension stores with a process so that it can take it over again after a reload. */
export type HostedRecord = SpawnRecord;

/** The sandbox settings of one command, read in the extension when it is started (see CommandSandbox). */
export interface IsolationSnapshot {
  readonly mode: 'auto' | 'required' | 'off';
  readonly network: 'block' | 'allow' | 'domains';
  readonly gitWrites?: string;
  readonly incompleteProtection?: string;
  readonly maxProcesses?: number;
  /** `codespace.exec.unixSockets`; absent means `block` (the filter on). */
  readonly unixSockets?: 'block' | 'allow';
  readonly allowedDomains?: readonly string[];
  /** Tests only: name → address of a stand-in registry (networkProxy.ts TestHosts). */
  readonly testHosts?: readonly (readonly [string, { readonly address: string; readonly port: number }])[];
}

export interface WireExit {
  readonly exitCode?: number;
  readonly signal?: string | number;
  readonly outputComplete?: boolean;
}

/** One process as the host hands it over on attach, with the output it still retains. */
export interface HostedProcess {
  readonly record: HostedRecord;
  readonly pid: number;
  readonly tty: boolean;
  /** Absolute offset of the first retained byte; the retained bytes follow the welcome as one data frame each. */
  readonly retained_from: number;
  /** Total bytes the process has written. */
  readonly end: number;
  /** Why it was asked to end, when it was (`terminated`, `timeout`). */
  readonly requested?: EndReason;
  /** Present once it has ended. */
  readonly exit?: WireExit;
  /** Pipes: stdin was closed by write_stdin eof. */
  readonly input_closed?: boolean;
}

/**
 * The ends a process host recorded as it exited (`ProcessHostOptions.endsFile`, mode 0600, written atomically): how
 * each process it still held ended, for the next extension host of the window to fold into its command log.
 */
export interface HostEndsFile {
  readonly v: 1;
  readonly host_pid: number;
  readonly ends: readonly HostEnd[];
}

export interface HostEnd {
  readonly process_id: string;
  readonly exit: WireExit;
  /** Why the host ended it, when it did. */
  readonly requested?: EndReason;
  /** When it ended (ISO 8601). */
  readonly ended_at: string;
}

/** A spawn as it crosses the socket: the port's options without the supervisor's record. */
export type WireSpawn = Pick<SpawnOptions, 'file' | 'args' | 'cwd' | 'root' | 'env' | 'tty' | 'rows' | 'cols'>;

export type Message =
  // client → host
  /**
   * `editor`: the process that started the extension host (VS Code's main process, or a remote window's server),
   * by pid and start time. The host watches it while no extension is attached: once it is gone, VS Code has exited
   * and no window can come back, so the processes end at once instead of after the grace period.
   */
  /** `extensionHost`: the extension host's own process; its end detaches the connection (see host.ts tick). */
  | { readonly t: 'hello'; readonly secret: string; readonly editor?: ProcessIdentity; readonly extensionHost?: ProcessIdentity }
  | { readonly t: 'spawn'; readonly req: number; readonly options: WireSpawn; readonly record: HostedRecord; readonly isolation?: IsolationSnapshot }
  | { readonly t: 'write'; readonly id: string; readonly data: string }
  | { readonly t: 'endInput'; readonly id: string }
  | { readonly t: 'resize'; readonly id: string; readonly rows: number; readonly cols: number }
  | { readonly t: 'kill'; readonly id: string; readonly signal: string }
  | { readonly t: 'terminate'; readonly req: number; readonly id: string; readonly reason: EndReason }
  | { readonly t: 'release'; readonly id: string }
  | { readonly t: 'shutdown'; readonly req: number }
  /**
   * Whether the attached extension still has its window. `live: false` (its editor window stopped answering: a
   * remote window was reloaded and the server keeps the old extension host waiting for a reconnection) lets the
   * next client that proves the secret take the host over; `live: true` (the window answered again) withdraws that.
   */
  | { readonly t: 'window'; readonly live: boolean }
  // host → client
  /**
   * Another client proved the secret while this one is attached with its window: the host asks this one to check
   * its window now and answer with a `window` message. Lost: the other client takes over; live: it is refused as busy.
   * `heartbeat`: the host's regular question (and the one right after an attach while the grace runs): live withdraws
   * the grace; lost, or no answer within the ask deadline, starts it.
   */
  | { readonly t: 'askWindow'; readonly heartbeat?: boolean }
  | { readonly t: 'welcome'; readonly secret: string; readonly pid: number; readonly processes: readonly HostedProcess[] }
  /** `closing`: the host is ending its processes and exiting (it records their ends first: HostEndsFile). */
  | { readonly t: 'denied'; readonly reason: 'secret' | 'busy' | 'closing' | 'protocol'; readonly message: string }
  | { readonly t: 'spawned'; readonly req: number; readonly pid: number }
  | { readonly t: 'failed'; readonly req: number; readonly reason: string; readonly message: string }
  | { readonly t: 'done'; readonly req: number }
  | { readonly t: 'exit'; readonly id: string; readonly exit: WireExit; readonly requested?: EndReason }
  | { readonly t: 'inputFailed'; readonly id: string; readonly message: string }
  /** The client fell behind: `bytes` of the process's output are not sent; its next data frame starts after them. */
  | { readonly t: 'skip'; readonly id: string; readonly bytes: number }
  /** The host was taken over by a newer extension host of the window; this connection is closed after it. */
  | { readonly t: 'superseded'; readonly message: string };

export function encodeMessage(message: Message): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const head = Buffer.alloc(5);
  head.writeUInt32BE(body.length + 1, 0);
  head.writeUInt8(FRAME_JSON, 4);
  return Buffer.concat([head, body]);
}

export function encodeData(id: string, bytes: Uint8Array): Buffer {
  const idBytes = Buffer.from(id, 'ascii');
  if (idBytes.length > 255) throw new RangeError('process id too long for a data frame');
  const head = Buffer.alloc(6 + idBytes.length);
  head.writeUInt32BE(2 + idBytes.length + bytes.length, 0);
  head.writeUInt8(FRAME_DATA, 4);
  head.writeUInt8(idBytes.length, 5);
  idBytes.copy(head, 6);
  return Buffer.concat([head, bytes]);
}

/**
 * The largest frame a connection may send before it has proved the secret: a hello (a 64-character secret and the
 * editor's identity) is well under this. Anything larger, or anything malformed, drops the connection at once, before
 * its bytes are kept: an unauthenticated peer can make the host hold at most this much.
 */
export const MAX_HELLO_FRAME = 1024;

/**
 * Splits a byte stream into frames. Throws on a malformed stream (the caller closes the connection), and on a frame
 * longer than `limit` as soon as its length is known (MAX_FRAME, or MAX_HELLO_FRAME before the secret is proved).
 * Reads are kept as a list and joined once per read that completes a frame, never on every read: a frame that
 * arrives in many pieces costs one copy of its bytes, not one per piece.
 */
export class FrameReader {
  private pending: Buffer[] = [];
  private size = 0;

  constructor(public limit: number = MAX_FRAME) {}

  /** Bytes received and not yet handed on as frames (what a connection makes this reader hold). */
  get buffered(): number {
    return this.size;
  }

  push(chunk: Buffer): Frame[] {
    this.pending.push(chunk);
    this.size += chunk.length;
    if (this.size < 4) return [];
    // The next frame's length, checked before anything else is kept; a frame not all here waits for more reads.
    const len = this.nextLength();
    if (len < 1 || len > this.limit) throw new Error(`bad frame length ${len}`);
    if (this.size - 4 < len) return [];
    const frames: Frame[] = [];
    const buf = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending, this.size);
    let at = 0;
    while (buf.length - at >= 4) {
      const len = buf.readUInt32BE(at);
      if (len < 1 || len > this.limit) throw new Error(`bad frame length ${len}`);
      if (buf.length - at - 4 < len) break;
      frames.push(decodeFrame(buf.readUInt8(at + 4), buf.subarray(at + 5, at + 4 + len)));
      at += 4 + len;
    }
    const rest = buf.subarray(at);
    this.pending = rest.length > 0 ? [rest] : [];
    this.size = rest.length;
    return frames;
  }

  /** The first four pending bytes as a length, wherever the reads split them. */
  private nextLength(): number {
    const first = this.pending[0] as Buffer;
    if (first.length >= 4) return first.readUInt32BE(0);
    const head = Buffer.alloc(4);
    let n = 0;
    for (const p of this.pending) {
      n += p.copy(head, n, 0, Math.min(p.length, 4 - n));
      if (n === 4) break;
    }
    return head.readUInt32BE(0);
  }
}

/** A JSON frame's body as a message; throws when it is not JSON or not an object with a string `t`. */
function parseMessage(body: Buffer): Message {
  const message = JSON.parse(body.toString('utf8')) as Message;
  if (typeof message !== 'object' || message === null || typeof (message as { t?: unknown }).t !== 'string') throw new Error('bad message');
  return message;
}

/** One complete frame's kind and body as a Frame; throws on a malformed one. */
function decodeFrame(kind: number, body: Buffer): Frame {
  if (kind === FRAME_JSON) return { kind: FRAME_JSON, message: parseMessage(body) };
  if (kind === FRAME_DATA) {
    if (body.length < 1) throw new Error('bad data frame');
    const idLen = body.readUInt8(0);
    if (body.length < 1 + idLen) throw new Error('bad data frame');
    const id = body.subarray(1, 1 + idLen).toString('ascii');
    // A view, not a copy: the socket hands out a new buffer per read and a concatenation makes a new one, so
    // nothing writes over these bytes later (the ring and the terminal copy or decode what they keep).
    return { kind: FRAME_DATA, id, bytes: body.subarray(1 + idLen) };
  }
  throw new Error(`bad frame kind ${kind}`);
}

/** What a FrameStream hands its frames to, in stream order. */
export interface FrameSink {
  message(message: Message): void;
  /**
   * A piece of a data frame's body (a frame may arrive in several). The bytes are a view of the connection's read
   * buffer, valid only during the call: the next read writes over them, so a sink that keeps them copies them.
   */
  data(id: string, bytes: Uint8Array): void;
}

const LENGTH = 4;
const HEAD = 5;

/**
 * Splits a byte stream into frames, like FrameReader, without allocating per read: a data frame's body is handed
 * on as views of the bytes pushed (in pieces, as they arrive), so a connection can read every chunk into one
 * buffer it reuses (net's `onread`) and a flood of output costs no allocation on the way in. Only a JSON frame is
 * gathered (into a buffer of its exact size) and parsed once complete. Throws on a malformed stream (the caller
 * closes the connection).
 */
export class FrameStream {
  /** The frame's header: length, kind, and for data the id's length and the id. */
  private readonly head = Buffer.alloc(HEAD + 1 + 255);
  private headLen = 0;
  private need = LENGTH;
  private inBody = false;
  private kind = 0;
  /** Body bytes of the current frame still to come. */
  private remaining = 0;
  private id = '';
  private json: Buffer | undefined;
  private jsonAt = 0;

  constructor(private readonly sink: FrameSink) {}

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (!this.inBody) {
        const take = Math.min(this.need - this.headLen, chunk.length - at);
        this.head.set(chunk.subarray(at, at + take), this.headLen);
        this.headLen += take;
        at += take;
        if (this.headLen === this.need) this.headed();
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      if (this.kind === FRAME_DATA) {
        this.sink.data(this.id, chunk.subarray(at, at + take));
      } else {
        (this.json as Buffer).set(chunk.subarray(at, at + take), this.jsonAt);
        this.jsonAt += take;
      }
      this.remaining -= take;
      at += take;
      if (this.remaining === 0) this.ended();
    }
  }

  /** The header has `need` bytes: read what it says, ask for more of it, or start the body. */
  private headed(): void {
    const len = this.head.readUInt32BE(0);
    if (this.headLen === LENGTH) {
      // Checked as soon as it is known, so a stream that is wrong from its first bytes is dropped at once.
      if (len < 1 || len > MAX_FRAME) throw new Error(`bad frame length ${len}`);
      this.need = HEAD;
      return;
    }
    if (this.headLen === HEAD) {
      this.kind = this.head.readUInt8(4);
      if (this.kind === FRAME_JSON) {
        this.remaining = len - 1;
        if (this.remaining === 0) throw new Error('bad message');
        this.json = Buffer.allocUnsafe(this.remaining);
        this.jsonAt = 0;
        this.inBody = true;
        return;
      }
      if (this.kind !== FRAME_DATA) throw new Error(`bad frame kind ${this.kind}`);
      if (len < 2) throw new Error('bad data frame');
      this.need = HEAD + 1;
      return;
    }
    const idLen = this.head.readUInt8(HEAD);
    if (len < 2 + idLen) throw new Error('bad data frame');
    if (this.headLen === HEAD + 1 && idLen > 0) {
      this.need = HEAD + 1 + idLen;
      return;
    }
    this.id = this.head.toString('ascii', HEAD + 1, HEAD + 1 + idLen);
    this.remaining = len - 2 - idLen;
    this.inBody = true;
    if (this.remaining === 0) this.ended();
  }

  /** The current frame is complete: a JSON message is parsed and handed on; then the next header. */
  private ended(): void {
    const json = this.kind === FRAME_JSON ? this.json : undefined;
    this.inBody = false;
    this.headLen = 0;
    this.need = LENGTH;
    this.json = undefined;
    if (!json) return;
    this.sink.message(parseMessage(json));
  }
}

/** Compares two secrets in constant time (by their digests, so different lengths do not leak either). */
export function sameSecret(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}
