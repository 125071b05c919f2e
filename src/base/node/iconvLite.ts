/**
 * The part of `iconv-lite` that express's body parsing calls (`raw-body`: `getDecoder`; `body-parser`:
 * `encodingExists`, `decode`), on Node's own decoders. esbuild bundles this in place of iconv-lite (see
 * esbuild.mjs `alias`): iconv-lite carries its own code tables for every legacy charset, about half of the
 * minified extension, while the MCP endpoint only ever receives JSON, which is UTF-8 (RFC 8259 §8.1).
 *
 * Node's Buffer encodings (`utf-8`, `utf-16le`/`ucs2`, `latin1`/`binary`, `ascii`, `base64`, `hex`) decode
 * exactly as iconv-lite does; any other WHATWG label (`windows-1252`, `shift_jis`, `gbk`, ...) goes to
 * `TextDecoder`. As in iconv-lite, a leading byte order mark is dropped from UTF-8 and UTF-16 text, and an unknown
 * encoding throws `Encoding not recognized: ...` (raw-body turns that message into a 415 response).
 */
import { StringDecoder } from 'node:string_decoder';

interface Decoder {
  write(bytes: Buffer): string;
  end(): string | undefined;
}

const BOM_AWARE = new Set(['utf8', 'utf-8', 'utf16le', 'utf-16le', 'ucs2', 'ucs-2']);

function normalise(encoding: string): string {
  return String(encoding).trim().toLowerCase();
}

/** A decoder for `encoding`, or undefined when neither Node nor TextDecoder knows it. */
function open(encoding: string): Decoder | undefined {
  const enc = normalise(encoding);
  if (Buffer.isEncoding(enc)) {
    const d = new StringDecoder(enc);
    return { write: (b) => d.write(b), end: () => d.end() || undefined };
  }
  let td: TextDecoder;
  try {
    td = new TextDecoder(enc, { ignoreBOM: true });
  } catch {
    return undefined;
  }
  return { write: (b) => td.decode(b, { stream: true }), end: () => td.decode() || undefined };
}

function unknown(encoding: string): Error {
  return new Error(`Encoding not recognized: '${encoding}' (searched as: '${normalise(encoding).replace(/[^0-9a-z]/g, '')}')`);
}

/** Drops a byte order mark at the very start of the text (the first non-empty piece). */
function stripBom(inner: Decoder): Decoder {
  let started = false;
  const strip = (s: string | undefined): string | undefined => {
    if (started || !s) return s;
    started = true;
    return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  };
  return { write: (b) => strip(inner.write(b)) ?? '', end: () => strip(inner.end()) };
}

export function encodingExists(encoding: string): boolean {
  return open(encoding) !== undefined;
}

export function getDecoder(encoding: string): Decoder {
  const d = open(encoding);
  if (!d) throw unknown(encoding);
  return BOM_AWARE.has(normalise(encoding)) ? stripBom(d) : d;
}

export function decode(bytes: Buffer | Uint8Array, encoding: string): string {
  const d = getDecoder(encoding);
  return d.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) + (d.end() ?? '');
}
