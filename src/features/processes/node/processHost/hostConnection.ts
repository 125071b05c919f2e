import type * as net from 'node:net';
import type { Logger } from '../../../../base/logger';
import type { ProcessIdentity } from '../../../../base/node/processIdentity';
import { isSameProcessAlive } from '../../../../base/node/processIdentity';
import type { Frame, Message } from './protocol';
import { FRAME_JSON, FrameReader, MAX_FRAME, MAX_HELLO_FRAME } from './protocol';

/**
 * How long a connection may take to prove the secret before it is dropped: the extension sends its hello as soon as
 * it is connected, so only a peer that sends nothing, or trickles, waits this long.
 */
export const HELLO_MS = 5_000;

/**
 * The editor process a hello names, when it is one the host can watch: a live process, not the init process (an
 * extension host already orphaned has no editor to follow) and not the host itself.
 */
export function editorOf(value: unknown): ProcessIdentity | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, start, boot } = value as Partial<ProcessIdentity>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 1 || pid === process.pid) return undefined;
  if (typeof start !== 'string' || start.length === 0 || start.length > 64 || typeof boot !== 'string' || boot.length > 64) return undefined;
  const editor = { pid: pid as number, start, boot };
  return isSameProcessAlive(editor) ? editor : undefined;
}

/** What the host does with one connection's messages. */
export interface ConnectionHandlers {
  /** How long the connection may take to prove the secret. */
  readonly helloMs: number;
  readonly logger: Logger;
  /** The connection's first message: true when it proved the secret (else it was refused and is ending). */
  hello(message: Message): boolean;
  /** Whether the connection is the attached client now (a superseded one is not). */
  isClient(): boolean;
  /** A message after the hello, from the attached client. */
  handle(message: Message): void;
  closed(): void;
}

/**
 * Reads one connection's frames: a single small hello first, within `helloMs` (anything larger, malformed or late
 * drops the connection before its bytes are kept), then the client's messages. Its reader is in `readers` while
 * the connection is open.
 */
export function serveConnection(socket: net.Socket, readers: Set<FrameReader>, h: ConnectionHandlers): void {
  // Before the secret: one small frame (a hello); anything larger or malformed drops the connection before its
  // bytes are kept. The existing limit applies once the secret is proved.
  const reader = new FrameReader(MAX_HELLO_FRAME);
  readers.add(reader);
  let authed = false;
  let refused = false;
  const helloTimer = setTimeout(() => {
    h.logger.warn('dropping a connection that did not prove the secret in time');
    socket.destroy();
  }, h.helloMs);
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => {
    let frames: Frame[];
    try {
      frames = reader.push(chunk);
    } catch (err) {
      h.logger.warn(`dropping a connection: ${String(err)}`);
      socket.destroy();
      return;
    }
    for (const frame of frames) {
      if (socket.destroyed) return;
      if (frame.kind !== FRAME_JSON) {
        socket.destroy();
        return;
      }
      if (!authed) {
        // One hello per connection: after a refusal (sent, then the socket ended) anything more drops it at once,
        // and the hello deadline still closes one that holds it open.
        if (refused) {
          socket.destroy();
          return;
        }
        authed = h.hello(frame.message);
        if (!authed) {
          refused = true;
          return;
        }
        clearTimeout(helloTimer);
        reader.limit = MAX_FRAME;
        continue;
      }
      // A connection that was superseded is no longer the client: nothing it sends is acted on.
      if (!h.isClient()) {
        socket.destroy();
        return;
      }
      h.handle(frame.message);
    }
  });
  socket.on('close', () => {
    clearTimeout(helloTimer);
    readers.delete(reader);
    h.closed();
  });
}
