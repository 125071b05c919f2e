import { REDACTION_CONTEXT_BYTES } from '../../../base/secretRedactor';
import type { SecretRedactor } from '../../../base/secretRedactor';
import type { RingBuffer, RingRead } from './ringBuffer';

/**
 * A read of a process's output with credentials redacted, judged on the bytes around it as well, so a secret split by
 * the cursor, by `maxBytes` or by its arrival in pieces is seen whole (see SecretRedactor.redactRange). The cursor
 * stays a raw byte offset into the output; `final`: the process has exited, nothing more will come.
 */
export function readRedacted(buffer: RingBuffer, cursor: number, maxBytes: number, final: boolean, redactor: SecretRedactor | undefined): RingRead {
  // Bounds first, then one copy: the chunk itself without redaction, the chunk with its context with it.
  const { length, ...r } = buffer.locate(cursor, maxBytes, { final });
  const start = r.cursor - length;
  if (!redactor?.enabled) return { ...r, chunk: buffer.slice(start, r.cursor).bytes };
  const around = buffer.slice(start - REDACTION_CONTEXT_BYTES, r.cursor + REDACTION_CONTEXT_BYTES);
  const out = redactor.redactRange(around.bytes, around.from, start, r.cursor, { atEnd: around.from + around.bytes.length >= buffer.end, final });
  return { ...r, chunk: out.chunk, cursor: out.stop };
}
