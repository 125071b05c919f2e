import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** Longest line taken from the client (the SDK's stdio transports' limit). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * MCP over stdio for the bridge: newline-delimited JSON-RPC, as the SDK's StdioServerTransport, without loading the
 * SDK's message schemas (zod) at start, so the bridge answers `initialize` before it has loaded anything else. A
 * line that is not a JSON-RPC 2.0 object is reported through `onerror` and skipped; the window's server checks
 * every message it relays.
 */
export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private buffer: Buffer | undefined;
  private started = false;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
  ) {}

  private readonly onData = (chunk: Buffer): void => {
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const end = this.buffer.indexOf(0x0a);
      if (end < 0) break;
      const line = this.buffer.toString('utf8', 0, end).replace(/\r$/, '');
      this.buffer = this.buffer.subarray(end + 1);
      if (line.trim() !== '') this.deliver(line);
    }
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = undefined;
      this.onerror?.(new Error(`a line from the client is over ${MAX_LINE_BYTES} bytes: dropped`));
    }
  };

  private readonly onEnd = (): void => {
    void this.close();
  };

  private deliver(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      this.onerror?.(new Error(`a line from the client is not JSON: ${(err as Error).message}`));
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      this.onerror?.(new Error('a line from the client is not a JSON-RPC 2.0 message'));
      return;
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LineTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.pause();
    this.buffer = undefined;
    this.onclose?.();
  }
}
