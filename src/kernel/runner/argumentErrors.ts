import { z } from 'zod';
import type { ToolErrorBody } from '../../base/errors';

/** Longest argument name quoted back (keys are the agent's own strings: a path, or garbage). */
const MAX_FIELD = 100;
/** Most problems named in one message; the rest are counted. */
const MAX_PROBLEMS = 10;

/** The name of an argument as the agent wrote it: `start_line`, `command[0]`, `expected_versions["src/a.ts"]`. */
export function fieldName(path: readonly (string | number)[]): string {
  const name = rawFieldName(path);
  return name.length > MAX_FIELD ? `${name.slice(0, MAX_FIELD)}…` : name;
}

function rawFieldName(path: readonly (string | number)[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (out === '') out = p;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(p)) out += `.${p}`;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out;
}

/** A short, bounded rendering of a value the agent sent. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    return value.length > 60 ? `a string of ${value.length} characters` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length} item(s)`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let v: unknown = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/** The schema of the argument at `path`, with optional/default/nullable/refinement wrappers removed. */
function schemaAt(shape: z.ZodRawShape, path: readonly (string | number)[]): z.ZodTypeAny | undefined {
  let s: z.ZodTypeAny | undefined = shape[path[0] as string];
  for (let i = 0; s !== undefined; ) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodTypeAny;
    else if (s instanceof z.ZodDefault) s = s.removeDefault() as z.ZodTypeAny;
    else if (s instanceof z.ZodEffects) s = s.innerType() as z.ZodTypeAny;
    else if (++i >= path.length) return s;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodTypeAny;
    else if (s instanceof z.ZodObject) s = (s.shape as z.ZodRawShape)[path[i] as string];
    else if (s instanceof z.ZodRecord) s = s.valueSchema as z.ZodTypeAny;
    else return undefined;
  }
  return s;
}

const ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  object: 'an object',
};

function isInteger(schema: z.ZodTypeAny | undefined): boolean {
  return schema instanceof z.ZodNumber && schema.isInt;
}

function bound(kind: 'min' | 'max', issue: { type: string; inclusive: boolean; exact?: boolean }, limit: number | bigint, schema: z.ZodTypeAny | undefined): string {
  const n = Number(limit);
  switch (issue.type) {
    case 'string':
      if (issue.exact) return `a string of exactly ${n} character(s)`;
      return kind === 'min' ? (n === 1 ? 'a non-empty string' : `a string of at least ${n} characters`) : `a string of at most ${n} characters`;
    case 'array':
      return kind === 'min' ? `at least ${n} item(s)` : `at most ${n} item(s)`;
    case 'number': {
      const what = isInteger(schema) ? 'an integer' : 'a number';
      const op = kind === 'min' ? (issue.inclusive ? '≥' : '>') : issue.inclusive ? '≤' : '<';
      return `${what} ${op} ${n}`;
    }
    default:
      return `${kind === 'min' ? 'at least' : 'at most'} ${n}`;
  }
}

interface Problem {
  readonly field: string;
  readonly message: string;
  readonly expected?: string;
}

/** One zod issue → "field: expected X, got Y", in the agent's terms. */
function problemOf(issue: z.ZodIssue, shape: z.ZodRawShape, args: unknown): Problem[] {
  const schema = issue.path.length ? schemaAt(shape, issue.path) : undefined;
  const got = describeValue(valueAt(args, issue.path));
  const field = fieldName(issue.path) || 'arguments';
  const expecting = (expected: string): Problem => ({ field, expected, message: `${field}: expected ${expected}, got ${got}` });
  switch (issue.code) {
    case z.ZodIssueCode.invalid_type: {
      const expected = ARTICLE[issue.expected] ?? issue.expected;
      if (issue.received === 'undefined') return [{ field, expected, message: `${field}: required, expected ${expected}` }];
      if (issue.expected === 'integer') return [expecting('an integer')];
      return [expecting(expected)];
    }
    case z.ZodIssueCode.too_small:
      return [expecting(bound('min', issue, issue.minimum, schema))];
    case z.ZodIssueCode.too_big:
      return [expecting(bound('max', issue, issue.maximum, schema))];
    case z.ZodIssueCode.invalid_enum_value:
      return [expecting(`one of ${issue.options.map((o) => JSON.stringify(o)).join(', ')}`)];
    case z.ZodIssueCode.invalid_literal:
      return [expecting(JSON.stringify(issue.expected))];
    case z.ZodIssueCode.unrecognized_keys:
      return issue.keys.map((k) => {
        const name = fieldName([...issue.path, k]);
        const known = issue.path.length === 0 ? Object.keys(shape) : [];
        return { field: name, message: `${name}: unknown argument${known.length ? `; the arguments are ${known.join(', ')}` : ''}` };
      });
    default:
      // Refinements and the rest carry a message written for the agent.
      return [{ field, message: `${field}: ${issue.message.replace(/\.$/, '')}${got === 'nothing' ? '' : `, got ${got}`}` }];
  }
}

/**
 * A zod failure on a tool's arguments as an INVALID_ARGUMENTS tool error: the message names each field, what was
 * expected and what came; details carry the first field (and every problem when there are several).
 */
export function invalidArgumentsBody(tool: string, error: z.ZodError, shape: z.ZodRawShape, args: unknown): ToolErrorBody {
  const all = error.issues.flatMap((i) => problemOf(i, shape, args));
  const problems = all.slice(0, MAX_PROBLEMS);
  const more = all.length - problems.length;
  const first = problems[0] ?? { field: 'arguments', message: 'arguments: invalid' };
  const details: Record<string, unknown> = { field: first.field };
  if (first.expected !== undefined) details.expected = first.expected;
  if (problems.length > 1) details.problems = problems.map((p) => ({ field: p.field, message: p.message }));
  return {
    code: 'INVALID_ARGUMENTS',
    message: problems.map((p) => p.message).join('; ') + (more > 0 ? `; and ${more} more problem(s)` : ''),
    hint: `Correct ${problems.length > 1 ? 'these arguments' : first.field} and call ${tool} again; its input schema (tools/list) describes every argument.`,
    details,
  };
}
