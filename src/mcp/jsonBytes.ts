/**
 * JSON.stringify(value) as UTF-8 bytes, built without the whole text as one string.
 *
 * A large answer (a `read_process` page of 256 KiB, its JSON text block beside it) serialized by JSON.stringify is one
 * string of about twice that size. Strings over 128 KiB are large objects to V8: one still alive when a young
 * collection runs goes to the old generation at once, and only a full collection frees it, so an agent reading a
 * flood of output grows the extension host's heap by about what it reads until V8's limit forces a full collection.
 * Here a long string is written a piece of SLICE characters at a time: pieces with nothing JSON must escape (quote,
 * backslash, control characters, surrogates) are written as they are, straight into bytes (a run of at least RAW
 * characters becomes a buffer of its own, outside the heap, no string made); a piece with something to escape is
 * serialized by JSON.stringify alone (at most six times SLICE characters). What is not a buffer is gathered into text
 * that is turned into bytes once it holds FLUSH characters. No string this builds reaches the large-object size, and
 * a page costs the heap
 * almost nothing: the young collections an agent's reads used to set off (and the pages they promoted to the old
 * generation on the way) are gone with it.
 *
 * The result is byte for byte what `Buffer.from(JSON.stringify(value), 'utf8')` gives, for every value JSON.stringify
 * accepts (toJSON, keys whose value is undefined or a function left out, null for them in arrays); like it, a cycle
 * or a BigInt throws a TypeError, and a value that serializes to nothing (undefined) gives an empty buffer.
 */
const SLICE = 4 * 1024;
const FLUSH = 16 * 1024;
/** A run of characters that need no escape at least this long is encoded into a buffer of its own. */
const RAW = 1024;
/**
 * A run of characters JSON.stringify leaves as they are, from `lastIndex` (sticky; it may be empty). Any surrogate ends
 * it (JSON.stringify escapes one that is not half of a pair). Matching the run is about 1.7 times faster than searching
 * for the next character to escape.
 */
// eslint-disable-next-line no-control-regex
const SAFE_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

export function jsonBytes(value: unknown): Buffer {
  const parts: Buffer[] = [];
  let text = '';
  const emit = (s: string): void => {
    text += s;
    if (text.length >= FLUSH) {
      parts.push(Buffer.from(text, 'utf8'));
      text = '';
    }
  };
  const ancestors = new Set<object>();

  /** The characters of `s` from `a` to `b`, none of which needs an escape. */
  const raw = (s: string, a: number, b: number): void => {
    if (b - a < RAW) {
      if (b > a) emit(s.slice(a, b));
      return;
    }
    if (text.length > 0) {
      parts.push(Buffer.from(text, 'utf8'));
      text = '';
    }
    parts.push(Buffer.from(s.slice(a, b), 'utf8'));
  };

  /**
   * A long string, a piece of SLICE characters at a time: a piece with nothing to escape joins the run written as it is
   * (raw), and a piece with something to escape is written as JSON.stringify writes it (fast, and its text is at most
   * six times SLICE). A piece never ends between the halves of a surrogate pair.
   */
  const writeString = (s: string): void => {
    if (s.length <= SLICE) {
      emit(JSON.stringify(s));
      return;
    }
    emit('"');
    // `written`: where the characters not yet written start; `clean`: how far from there none needs an escape.
    let written = 0;
    let clean = 0;
    let at = 0;
    while (at < s.length) {
      let end = Math.min(s.length, at + SLICE);
      const last = s.charCodeAt(end - 1);
      if (end < s.length && last >= 0xd800 && last <= 0xdbff) end++;
      if (clean < end) {
        SAFE_RUN.lastIndex = Math.max(clean, at);
        SAFE_RUN.test(s);
        clean = SAFE_RUN.lastIndex;
      }
      if (clean < end) {
        raw(s, written, at);
        emit(JSON.stringify(s.slice(at, end)).slice(1, -1));
        written = end;
      }
      at = end;
    }
    raw(s, written, s.length);
    emit('"');
  };

  /** toJSON first, as JSON.stringify does; then whether anything is written for it at all. */
  const resolve = (v: unknown, key: string): unknown => {
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      return (v as { toJSON: (key: string) => unknown }).toJSON(key);
    }
    return v;
  };
  const omitted = (v: unknown): boolean => v === undefined || typeof v === 'function' || typeof v === 'symbol';

  const write = (v: unknown): void => {
    if (typeof v === 'string') return writeString(v);
    if (v === null || typeof v !== 'object') {
      emit(JSON.stringify(v));
      return;
    }
    if (v instanceof String || v instanceof Number || v instanceof Boolean) {
      emit(JSON.stringify(v));
      return;
    }
    if (ancestors.has(v)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(v);
    if (Array.isArray(v)) {
      emit('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) emit(',');
        const item = resolve(v[i], String(i));
        if (omitted(item)) emit('null');
        else write(item);
      }
      emit(']');
    } else {
      emit('{');
      let first = true;
      for (const key of Object.keys(v)) {
        const item = resolve((v as Record<string, unknown>)[key], key);
        if (omitted(item)) continue;
        emit(first ? '' : ',');
        first = false;
        writeString(key);
        emit(':');
        write(item);
      }
      emit('}');
    }
    ancestors.delete(v);
  };

  const top = resolve(value, '');
  if (omitted(top)) return Buffer.alloc(0);
  write(top);
  if (text.length > 0) parts.push(Buffer.from(text, 'utf8'));
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}
