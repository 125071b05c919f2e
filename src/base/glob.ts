import { sep } from 'node:path';
import { InvalidArgumentsError } from './errors';

/**
 * Path globs in VS Code's dialect (`workspace.findFiles`, `files.exclude`): `*` and `?` stay inside one path
 * segment, a `**` segment spans segments, `{a,b}` alternates, `[abc]` / `[a-z]` / `[!a]` is a class. A pattern
 * without `/` matches at the root only (`*.ts`); use `**\/*.ts` for every folder.
 *
 * The semantics are those of VS Code's own matcher (src/vs/base/common/glob.ts, `parseRegExp`), which turns a
 * glob into a backtracking regular expression: there, `*` is `[^/\\]*?` once per star, so `*****…x` or
 * `*a*a*a*…` against a long name backtracks for minutes. Here the same expression is compiled into an automaton
 * and run without backtracking (a lazily built DFA over a Thompson NFA): time linear in the path, whatever the
 * pattern. `checkGlob` also refuses what VS Code would silently misread (an unclosed `[` or `{`, nested braces,
 * a stray `]` or `}`), bounds the pattern's size and collapses star runs before any matcher sees it. (In the
 * editor, `workspace.findFiles` hands the pattern to ripgrep, whose glob engine does not backtrack.)
 */

/** Bounds on a find pattern, checked before any work; each refusal names its limit. */
export const GLOB_LIMITS = {
  /** Characters in the pattern. */
  maxLength: 1000,
  /** `*` runs outside `**` segments, after runs of stars are collapsed. */
  maxStars: 32,
  /** `**` segments. */
  maxGlobstars: 8,
  /** `{…}` groups. */
  maxBraceGroups: 16,
  /** Alternatives in all `{…}` groups together. */
  maxAlternatives: 64,
} as const;

/** What `checkGlob` learnt about a valid pattern. */
export interface CheckedGlob {
  /** The pattern with runs of `*` collapsed (same matches); what to hand to any matcher. */
  readonly pattern: string;
}

function refuse(message: string): InvalidArgumentsError {
  return new InvalidArgumentsError(`Invalid find pattern: ${message}`);
}

function overLimit(what: string, count: number, limit: keyof typeof GLOB_LIMITS): InvalidArgumentsError {
  return refuse(`it has ${count} ${what}; the limit (${limit}) is ${GLOB_LIMITS[limit]}. Use a simpler pattern, or several calls.`);
}

/**
 * Validates a glob and collapses star runs. Throws InvalidArgumentsError naming the problem or the limit:
 * unclosed `[` or `{`, a stray `]` or `}`, nested braces, an empty or reversed class, or too many wildcards.
 */
export function checkGlob(raw: string): CheckedGlob {
  if (raw.length > GLOB_LIMITS.maxLength) throw overLimit('characters', raw.length, 'maxLength');
  // VS Code trims the pattern before matching.
  const trimmed = raw.trim();
  if (trimmed === '') throw refuse('it is empty.');
  let out = '';
  let braceGroups = 0;
  let alternatives = 0;
  let inBraces = false;
  let braceOpen = -1;
  let i = 0;
  while (i < trimmed.length) {
    const c = trimmed[i] as string;
    if (c === '*') {
      let j = i;
      while (trimmed[j] === '*') j++;
      // A run that is a whole segment ("**") spans folders; any other run means exactly what one star means.
      const before = out.length === 0 || out.endsWith('/') || (inBraces && (out.endsWith('{') || out.endsWith(',')));
      const after = j === trimmed.length || trimmed[j] === '/' || (inBraces && (trimmed[j] === ',' || trimmed[j] === '}'));
      out += j - i === 2 && before && after ? '**' : '*';
      i = j;
      continue;
    }
    if (c === '[') {
      const close = classEnd(trimmed, i);
      if (close < 0) throw refuse(`"[" at column ${i + 1} is never closed. Write "[[]" to match a literal "[".`);
      checkClass(trimmed.slice(i + 1, close), i);
      out += trimmed.slice(i, close + 1);
      i = close + 1;
      continue;
    }
    if (c === ']') throw refuse(`"]" at column ${i + 1} closes nothing. Write "[]]" to match a literal "]".`);
    if (c === '{') {
      if (inBraces) throw refuse(`braces nest at column ${i + 1}; the editor's glob dialect has one level of "{a,b}" only (nesting limit 1).`);
      inBraces = true;
      braceOpen = i;
      braceGroups++;
      alternatives++;
    } else if (c === '}') {
      if (!inBraces) throw refuse(`"}" at column ${i + 1} closes nothing. Use "?" to match a literal "}".`);
      inBraces = false;
    } else if (c === ',' && inBraces) {
      alternatives++;
    }
    out += c;
    i++;
  }
  if (inBraces) throw refuse(`"{" at column ${braceOpen + 1} is never closed. Use "?" to match a literal "{".`);
  if (braceGroups > GLOB_LIMITS.maxBraceGroups) throw overLimit('"{…}" groups', braceGroups, 'maxBraceGroups');
  if (alternatives > GLOB_LIMITS.maxAlternatives) throw overLimit('brace alternatives', alternatives, 'maxAlternatives');

  const { stars, globstars } = complexity(out);
  if (stars > GLOB_LIMITS.maxStars) throw overLimit('"*" wildcards', stars, 'maxStars');
  if (globstars > GLOB_LIMITS.maxGlobstars) throw overLimit('"**" segments', globstars, 'maxGlobstars');
  return { pattern: out };
}

/** Wildcards of a (valid, collapsed) pattern: all stars, and `**` segments (a brace group counts its worst alternative). */
function complexity(pattern: string): { stars: number; globstars: number } {
  let stars = 0;
  let globstars = 0;
  for (const segment of splitGlobAware(pattern, '/')) {
    if (segment === '**') {
      globstars++;
      continue;
    }
    for (let i = 0; i < segment.length; i++) {
      const c = segment[i];
      if (c === '[') i = classEnd(segment, i);
      else if (c === '*') stars++;
      else if (c === '{') {
        const close = segment.indexOf('}', i);
        let worst = 0;
        for (const alt of splitGlobAware(segment.slice(i + 1, close), ',')) {
          const inner = complexity(alt);
          stars += inner.stars;
          worst = Math.max(worst, inner.globstars);
        }
        globstars += worst;
        i = close;
      }
    }
  }
  return { stars, globstars };
}

/** Index of the `]` closing the class opened at `open`, or -1. */
function classEnd(s: string, open: number): number {
  // As in VS Code: only a `]` right after `[` is literal (after `[!` it closes an empty negated class).
  let i = open + 1;
  if (s[i] === ']') i++;
  for (; i < s.length; i++) {
    if (s[i] === ']') return i;
  }
  return -1;
}

function checkClass(body: string, at: number): void {
  const negated = body.startsWith('!') || body.startsWith('^');
  const items = negated ? body.slice(1) : body;
  if (items === '') throw refuse(`the class at column ${at + 1} is empty.`);
  // VS Code drops "/" from a class, and a brace inside one confuses its segment splitting: refuse rather than guess.
  for (const bad of ['/', '{', '}']) {
    if (items.includes(bad)) throw refuse(`the class at column ${at + 1} contains "${bad}", which the editor's glob dialect cannot match there (use "?" for one such character).`);
  }
  for (const item of classItems(items)) {
    if (item.length === 2 && (item[0] as number) > (item[1] as number)) {
      throw refuse(`the range in the class at column ${at + 1} runs backwards.`);
    }
  }
}

/** Class items as [code] or [from, to], with JavaScript's rules for "-" (literal at either end). */
function classItems(items: string): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < items.length; i++) {
    const c = items.charCodeAt(i);
    if (items[i + 1] === '-' && i + 2 < items.length) {
      out.push([c, items.charCodeAt(i + 2)]);
      i += 2;
    } else out.push([c]);
  }
  return out;
}

/** VS Code's splitGlobAware: splits on `ch` outside braces and classes. */
function splitGlobAware(pattern: string, ch: string): string[] {
  if (pattern === '') return [];
  const segments: string[] = [];
  let inBraces = false;
  let inBrackets = false;
  let cur = '';
  for (const c of pattern) {
    if (c === ch && !inBraces && !inBrackets) {
      segments.push(cur);
      cur = '';
      continue;
    }
    if (c === '{') inBraces = true;
    else if (c === '}') inBraces = false;
    else if (c === '[') inBrackets = true;
    else if (c === ']') inBrackets = false;
    cur += c;
  }
  if (cur !== '') segments.push(cur);
  return segments;
}

// ---- The automaton ------------------------------------------------------------------------------------------

type CharTest = (c: number) => boolean;

type Node =
  | { readonly t: 'char'; readonly test: CharTest }
  | { readonly t: 'seq'; readonly items: readonly Node[] }
  | { readonly t: 'alt'; readonly items: readonly Node[] }
  | { readonly t: 'star'; readonly item: Node }
  | { readonly t: 'plus'; readonly item: Node };

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
/**
 * Where this differs from VS Code's matcher, on purpose (the names policy, see paths.ts): only Windows separates
 * folders with a backslash, so elsewhere `*` and `?` match a backslash in a name; and a lone `**` matches names with
 * line breaks (VS Code's `.*` does not). Paths without backslashes or line breaks match exactly as in VS Code.
 */
const BACKSLASH_SEPARATES = sep === '\\';
const isPath: CharTest = (c) => c === SLASH || (BACKSLASH_SEPARATES && c === BACKSLASH);
const notPath: CharTest = (c) => !isPath(c);
/** Any character, line breaks included. */
const anyChar: CharTest = () => true;

const ch = (test: CharTest): Node => ({ t: 'char', test });
const seq = (items: Node[]): Node => ({ t: 'seq', items });

function literal(s: string): Node[] {
  const out: Node[] = [];
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    out.push(ch((c) => c === code));
  }
  return out;
}

function classNode(body: string): Node {
  const negated = body.startsWith('!') || body.startsWith('^');
  const items = classItems(negated ? body.slice(1) : body);
  const inClass = (c: number): boolean => items.some((it) => (it.length === 1 ? c === it[0] : c >= (it[0] as number) && c <= (it[1] as number)));
  return ch(negated ? (c) => !inClass(c) : inClass);
}

/** `(?:P|N+P)*`, plus `|PN+` when it is the last segment: VS Code's `**`. */
function globstar(last: boolean): Node {
  const alts: Node[] = [ch(isPath), seq([{ t: 'plus', item: ch(notPath) }, ch(isPath)])];
  if (last) alts.push(seq([ch(isPath), { t: 'plus', item: ch(notPath) }]));
  return { t: 'star', item: { t: 'alt', items: alts } };
}

/** VS Code's parseRegExp, building an expression tree instead of regex source. */
function parseGlob(pattern: string): Node {
  if (pattern === '') return seq([]);
  const segments = splitGlobAware(pattern, '/');
  if (segments.every((s) => s === '**')) return { t: 'star', item: ch(anyChar) };
  const out: Node[] = [];
  let previousGlobstar = false;
  segments.forEach((segment, index) => {
    if (segment === '**') {
      if (!previousGlobstar) out.push(globstar(index === segments.length - 1));
      previousGlobstar = true;
      return;
    }
    for (let i = 0; i < segment.length; i++) {
      const c = segment[i] as string;
      if (c === '{') {
        const close = segment.indexOf('}', i);
        out.push({ t: 'alt', items: splitGlobAware(segment.slice(i + 1, close), ',').map(parseGlob) });
        i = close;
      } else if (c === '[') {
        const close = classEnd(segment, i);
        out.push(classNode(segment.slice(i + 1, close)));
        i = close;
      } else if (c === '?') out.push(ch(notPath));
      else if (c === '*') out.push({ t: 'star', item: ch(notPath) });
      else {
        const code = segment.codePointAt(i) as number;
        const text = String.fromCodePoint(code);
        out.push(...literal(text));
        i += text.length - 1;
      }
    }
    if (index < segments.length - 1 && (segments[index + 1] !== '**' || index + 2 < segments.length)) out.push(ch(isPath));
    previousGlobstar = false;
  });
  return seq(out);
}

/** Thompson NFA: `char` states consume one code unit; `split` states are epsilon edges. */
interface Nfa {
  readonly tests: (CharTest | undefined)[];
  readonly next: number[][];
  readonly start: number;
  readonly accept: number;
}

function buildNfa(root: Node): Nfa {
  const tests: (CharTest | undefined)[] = [];
  const next: number[][] = [];
  const state = (test?: CharTest): number => {
    tests.push(test);
    next.push([]);
    return tests.length - 1;
  };
  // Builds `node` between states `from` and a returned end state (epsilon-connected).
  const build = (node: Node, from: number): number => {
    switch (node.t) {
      case 'char': {
        const s = state(node.test);
        (next[from] as number[]).push(s);
        const end = state();
        (next[s] as number[]).push(end);
        return end;
      }
      case 'seq': {
        let at = from;
        for (const item of node.items) at = build(item, at);
        return at;
      }
      case 'alt': {
        const end = state();
        for (const item of node.items) {
          const s = state();
          (next[from] as number[]).push(s);
          (next[build(item, s)] as number[]).push(end);
        }
        if (node.items.length === 0) (next[from] as number[]).push(end);
        return end;
      }
      case 'star':
      case 'plus': {
        const loop = state();
        const end = state();
        (next[from] as number[]).push(loop);
        const bodyEnd = build(node.item, loop);
        (next[bodyEnd] as number[]).push(loop);
        (next[node.t === 'star' ? loop : bodyEnd] as number[]).push(end);
        return end;
      }
    }
  };
  const start = state();
  const accept = build(root, start);
  return { tests, next, start, accept };
}

interface DState {
  readonly states: Int32Array;
  readonly accepting: boolean;
  /** Transitions on ASCII code units (the common case, an array lookup), and on the others. */
  readonly ascii: (DState | undefined)[];
  readonly moves: Map<number, DState>;
}

/** Most DFA states kept per pattern; past it the cache is dropped and rebuilt (still linear per character). */
const MAX_DFA_STATES = 4096;

export type GlobMatcher = (path: string) => boolean;

/**
 * A matcher for `pattern` (VS Code semantics, see above), linear in the path's length. Throws
 * InvalidArgumentsError for a pattern `checkGlob` refuses.
 */
export function compileGlob(pattern: string): GlobMatcher {
  const checked = checkGlob(pattern);
  const nfa = buildNfa(parseGlob(checked.pattern));
  const mark = new Int32Array(nfa.tests.length).fill(-1);
  let generation = 0;
  let cache = new Map<string, DState>();

  /** The char states reachable from `seeds` through epsilon edges, as a DFA state. */
  const closure = (seeds: Iterable<number>): DState => {
    generation++;
    const stack = [...seeds];
    const found: number[] = [];
    let accepting = false;
    while (stack.length > 0) {
      const s = stack.pop() as number;
      if (mark[s] === generation) continue;
      mark[s] = generation;
      if (s === nfa.accept) accepting = true;
      if (nfa.tests[s] !== undefined) found.push(s);
      else for (const n of nfa.next[s] as number[]) stack.push(n);
    }
    found.sort((a, b) => a - b);
    const key = found.join(',') + (accepting ? '!' : '');
    let d = cache.get(key);
    if (d === undefined) {
      if (cache.size >= MAX_DFA_STATES) {
        // Forget every state (and the edges that keep old ones alive); the start state is rebuilt from scratch.
        for (const old of cache.values()) {
          old.moves.clear();
          old.ascii.length = 0;
        }
        cache = new Map();
      }
      d = { states: Int32Array.from(found), accepting, ascii: [], moves: new Map() };
      cache.set(key, d);
    }
    return d;
  };
  const start = closure([nfa.start]);

  return (path: string): boolean => {
    let d = start;
    for (let i = 0; i < path.length; i++) {
      const c = path.charCodeAt(i);
      let n = c < 128 ? d.ascii[c] : d.moves.get(c);
      if (n === undefined) {
        const seeds: number[] = [];
        for (const s of d.states) if ((nfa.tests[s] as CharTest)(c)) seeds.push(...(nfa.next[s] as number[]));
        n = closure(seeds);
        if (c < 128) d.ascii[c] = n;
        else d.moves.set(c, n);
      }
      if (n.states.length === 0 && !n.accepting) return false;
      d = n;
    }
    return d.accepting;
  };
}

/** Default exclusions of the editor's `files.exclude`, used where the editor's own settings are not at hand. */
export const DEFAULT_EXCLUDES = ['**/.git', '**/.svn', '**/.hg', '**/CVS', '**/.DS_Store', '**/Thumbs.db'];
