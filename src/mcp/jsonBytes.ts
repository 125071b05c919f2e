/**
 * JSON.stringify(value) as UTF-8 bytes, built without the whole text as one string.
 *
 * A large answer (a `read_process` page of 256 KiB, its JSON text block beside it) serialized by JSON.stringify is one
 * string of about twice that size. Strings over 128 KiB are large objects to V8: one still alive when a young
 * collection runs goes to the old generation at once, and only a full collection frees it, so an agent reading a
 * flood of output grows the extension host's heap by about what it reads until V8's limit forces a full collection.
 * Here a long string is escaped in slices of SLICE characters, and the text is turned into bytes once it holds FLUSH
 * characters: no string this builds reaches the large-object size (at most FLUSH + 6 x SLICE characters, two bytes
 * each at worst: 80 KiB), and the bytes live outside the heap.
 *
 * The result is byte for byte what `Buffer.from(JSON.stringify(value), 'utf8')` gives, for every value JSON.stringify
 * accepts (toJSON, keys whose value is undefined or a function left out, null for them in arrays); like it, a cycle
 * or a BigInt throws a TypeError, and a value that serializes to nothing (undefined) gives an empty buffer.
 */
const SLICE = 4 * 1024;
const FLUSH = 16 * 1024;

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

  /** A long string, escaped a slice at a time; a slice never ends between the two halves of a surrogate pair. */
  const writeString = (s: string): void => {
    if (s.length <= SLICE) {
      emit(JSON.stringify(s));
      return;
    }
    emit('"');
    for (let at = 0; at < s.length; ) {
      let end = Math.min(at + SLICE, s.length);
      const last = s.charCodeAt(end - 1);
      if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
      const escaped = JSON.stringify(s.slice(at, end));
      emit(escaped.slice(1, -1));
      at = end;
    }
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
