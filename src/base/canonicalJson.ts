import { createHash } from 'node:crypto';

/**
 * JSON with every object's keys sorted (by UTF-16 code unit) at every depth, no whitespace. Two requests
 * that differ only in key order give the same text. Otherwise it follows JSON.stringify: `toJSON` is honoured,
 * object members that are undefined, functions or symbols are left out, such array items become null, and
 * non-finite numbers become null. Throws on a bigint or a cycle.
 */
export function canonicalJson(value: unknown): string {
  return encode(value, new Set()) ?? 'null';
}

/** `sha256:<hex>` of the canonical JSON of a request's arguments: what binds an operation_key to one request. */
export function hashArguments(args: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex')}`;
}

function encode(value: unknown, stack: Set<object>): string | undefined {
  if (value !== null && typeof value === 'object' && 'toJSON' in value && typeof value.toJSON === 'function') {
    value = (value as { toJSON(): unknown }).toJSON();
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint has no JSON form.');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (stack.has(object)) throw new TypeError('canonicalJson: the value contains a cycle.');
  stack.add(object);
  try {
    if (Array.isArray(object)) {
      return `[${object.map((item: unknown) => encode(item, stack) ?? 'null').join(',')}]`;
    }
    const members: string[] = [];
    for (const key of Object.keys(object).sort()) {
      const encoded = encode((object as Record<string, unknown>)[key], stack);
      if (encoded !== undefined) members.push(`${JSON.stringify(key)}:${encoded}`);
    }
    return `{${members.join(',')}}`;
  } finally {
    stack.delete(object);
  }
}
