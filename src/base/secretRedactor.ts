/**
 * Best-effort redaction of well-known credential shapes from what agents read back: command output (`read_process`)
 * and search result lines. `read` and `apply_patch` are never redacted: an agent must be able to edit a file that
 * holds such a string, byte for byte.
 *
 * Each secret is replaced by a visible marker, `[REDACTED:<kind>]`. Detection runs on bytes read as Latin-1 (one
 * character per byte), so every position is a byte offset: the secret shapes are ASCII, and command output cursors
 * stay raw byte offsets (see `redactRange`).
 *
 * Secrets are looked for twice: in the text as written, and in what a terminal shows of it (shownText.ts: without
 * colour codes, hyperlinks, cursor moves and other controls it does not display). A secret found in what is shown is
 * masked from its first shown character to its last, with every escape between them.
 */
import type { Shown } from './shownText';
import { shownText } from './shownText';

/** One kind of secret. `pattern` must be global; a capture group named `s`, when present, is the secret itself. */
interface Rule {
  readonly kind: string;
  readonly pattern: RegExp;
  /** Matches, at the end of a text, what could still grow into this secret (a prefix that has not all arrived). */
  readonly tail?: RegExp;
  /**
   * Whether the text holds the literal every match of `pattern` contains, and every match of `tail` longer than
   * TAIL_WITHOUT_LITERAL characters. Without it the pattern cannot match, and the tail can only match within the
   * text's last characters: most output holds none of these literals, and twenty scans of each page by the regular
   * expressions were most of what an agent's read of a flood cost.
   */
  readonly present: (text: string) => boolean;
}

/** The longest match of a rule's `tail` without its literal: a proper prefix of a token's start, or `-----BEGI`. */
const TAIL_WITHOUT_LITERAL = 16;

/**
 * Whether a text holds one of `literals`: a substring search for each (`includes`), or one for the start they all share
 * when it has three characters or more (finding only that start just lets the rule's pattern run, which decides). On a
 * 1 MiB page a substring search takes about 0.015 ms where an alternation of the literals as one regular expression
 * took 0.2–0.5 ms, and an agent's read of a flood asks every rule twice per page.
 */
function holds(...literals: string[]): Pick<Rule, 'present'> {
  const shared = commonStart(literals);
  const keys = shared.length >= 3 ? [shared] : literals;
  return { present: (text) => keys.some((key) => text.includes(key)) };
}

/** The longest start every one of `words` has. */
function commonStart(words: readonly string[]): string {
  let start = words[0] ?? '';
  for (const w of words) while (!w.startsWith(start)) start = start.slice(0, -1);
  return start;
}

/** Characters tokens are made of: what must not precede a token for it to start there. */
const WORD = 'A-Za-z0-9_\\-';

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A token that starts with one of `starts`, then `body` characters (`min` to `max` of them). */
function tokenRule(kind: string, starts: readonly string[], body: string, min: number, max: number): Rule {
  const alt = starts.map(escape).join('|');
  // What could still become this token at the end of a text: the first characters of a start, or a start and a body not yet
  // long enough to end (the longest form may still be arriving).
  const partial = new Set<string>();
  for (const s of starts) for (let n = 1; n < s.length; n++) partial.add(escape(s.slice(0, n)));
  return {
    kind,
    pattern: new RegExp(`(?<![${WORD}])(?:${alt})[${body}]{${min},${max}}(?![${body}])`, 'g'),
    tail: new RegExp(`(?<![${WORD}])(?:${[...partial].join('|')}${partial.size > 0 ? '|' : ''}(?:${alt})[${body}]{0,${max}})$`),
    ...holds(...starts),
  };
}

/** The built-in shapes, most specific first (an overlap keeps the earlier-starting, then the longer match). */
const RULES: readonly Rule[] = [
  {
    kind: 'private-key',
    // A PEM private key block (also JSON-escaped, as in a GCP service-account file) or a PGP one (`PRIVATE KEY
    // BLOCK`, as `gpg --export-secret-keys --armor` prints it); unterminated: to the end.
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    tail: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?![\s\S]*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)[\s\S]*$|-{2,5}(?:B(?:E(?:G(?:I(?:N(?: [A-Z0-9 ]*)?)?)?)?)?)?$/,
    ...holds('BEGIN'),
  },
  tokenRule('anthropic-key', ['sk-ant-'], 'A-Za-z0-9_\\-', 20, 300),
  tokenRule('openai-key', ['sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-'], 'A-Za-z0-9_\\-', 20, 300),
  tokenRule('github-token', ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], 'A-Za-z0-9', 36, 255),
  tokenRule('github-token', ['github_pat_'], 'A-Za-z0-9_', 22, 255),
  tokenRule('gitlab-token', ['glpat-'], 'A-Za-z0-9_\\-', 20, 100),
  tokenRule('npm-token', ['npm_'], 'A-Za-z0-9', 36, 36),
  tokenRule('pypi-token', ['pypi-'], 'A-Za-z0-9_\\-', 50, 400),
  tokenRule('slack-token', ['xoxa-', 'xoxb-', 'xoxp-', 'xoxo-', 'xoxr-', 'xoxs-'], 'A-Za-z0-9\\-', 10, 200),
  tokenRule('stripe-key', ['sk_live_', 'rk_live_'], 'A-Za-z0-9', 20, 200),
  tokenRule('google-api-key', ['AIza'], 'A-Za-z0-9_\\-', 35, 35),
  tokenRule('aws-access-key-id', ['AKIA', 'ASIA', 'ABIA', 'ACCA'], 'A-Z0-9', 16, 16),
  {
    // After its name: `aws_secret_access_key = …` (credentials file, environment), `"SecretAccessKey": "…"` (the JSON of
    // `aws sts assume-role`, `aws iam create-access-key`), `SecretAccessKey: …` (YAML).
    kind: 'aws-secret-access-key',
    pattern: /(?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    tail: /(?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{0,40}$/i,
    // Substring searches first (every spelling holds `cess` or `CESS`): /…/i tries every `s` of the text.
    present: (text) => (text.includes('cess') || text.includes('CESS')) && /secret_?access/i.test(text),
  },
  {
    // A session token after its name: `"SessionToken": "…"` (`aws sts` JSON), `aws_session_token = …` (credentials file,
    // environment); the same name of any other service is as secret.
    kind: 'aws-session-token',
    pattern: /(?:aws_?)?session_?token["']?\s*[:=]\s*["']?(?<s>[A-Za-z0-9/+=]{20,4096})(?![A-Za-z0-9/+=])/gi,
    tail: /(?:aws_?)?session_?token["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{0,4096}$/i,
    present: (text) => (text.includes('ession') || text.includes('ESSION')) && /session_?token/i.test(text),
  },
  {
    kind: 'gcp-private-key-id',
    pattern: /"private_key_id"\s*:\s*"(?<s>[0-9a-f]{40})"/g,
    ...holds('"private_key_id"'),
  },
  {
    // Both parts of a JWT start with `eyJ` (`{"` in base64url): prose rarely does.
    kind: 'jwt',
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])/g,
    tail: /(?<![A-Za-z0-9_-])(?:ey?|eyJ[A-Za-z0-9_-]*(?:\.(?:e(?:y(?:J[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*)?)?)?)?)?)$/,
    ...holds('eyJ'),
  },
  {
    // An Authorization header's credential; 20+ characters so that prose ("a Bearer token") is left alone.
    kind: 'bearer-token',
    pattern: /\bBearer\s+(?<s>[A-Za-z0-9._~+/=-]{20,})/g,
    tail: /\bBearer\s+[A-Za-z0-9._~+/=-]*$/,
    ...holds('Bearer'),
  },
];

/** Each rule's tail, searched from a position (lookbehind still sees the characters before it). */
const TAILS_FROM = new Map(RULES.filter((r) => r.tail).map((r) => [r, new RegExp((r.tail as RegExp).source, `${(r.tail as RegExp).flags}g`)]));

/** The rules as they are, for the tests that compare the filtered search with a full one. */
export const SECRET_RULES_FOR_TESTS: readonly { readonly kind: string; readonly pattern: RegExp; readonly tail?: RegExp }[] = RULES;

/** A secret found in a text: `[from, to)` and its kind. */
export interface Found {
  readonly from: number;
  readonly to: number;
  readonly kind: string;
}

export interface RedactorOptions {
  /** Whether to redact at all (`codespace.redaction.enabled`). */
  readonly enabled: () => boolean;
  /** This extension's own tokens (MCP and inbox), redacted wherever they appear. */
  readonly ownTokens: () => Iterable<string>;
  /** Values the operator listed (`codespace.redaction.values`). */
  readonly values: () => readonly string[];
}

/** Shortest listed value that is redacted: shorter ones would match noise. */
export const MIN_LISTED_VALUE = 6;
/** How far before a read and after it output is looked at, so a secret split by the cursor is still seen whole. */
export const REDACTION_CONTEXT_BYTES = 8192;

/**
 * Bytes read one character per byte (Latin-1: byte b is U+00bb), so offsets stay byte offsets and the ASCII secret
 * shapes match the same. Buffer's Latin-1 conversion takes about 0.2 ms for a 1 MiB page whatever its bytes;
 * `TextDecoder('latin1')` (which is windows-1252) took 0.9 ms for ASCII and 7 ms for UTF-8 text, and every
 * `read_process` page passes through here.
 */
function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

const encoder = new TextEncoder();

export class SecretRedactor {
  constructor(private readonly options: RedactorOptions) {}

  get enabled(): boolean {
    return this.options.enabled();
  }

  private exact(): { value: string; kind: string }[] {
    const out: { value: string; kind: string }[] = [];
    for (const t of this.options.ownTokens()) if (t.length >= MIN_LISTED_VALUE) out.push({ value: t, kind: 'codespace-token' });
    for (const v of this.options.values()) if (typeof v === 'string' && v.length >= MIN_LISTED_VALUE) out.push({ value: v, kind: 'listed-value' });
    return out;
  }

  /** Which rules' literals `text` holds (RULES' order): asked once per text, by both `find` and `heldTail`. */
  private presentIn(text: string): boolean[] {
    return RULES.map((rule) => rule.present(text));
  }

  /** Every secret in `text`, sorted, without overlaps (the earlier start wins, then the longer match). */
  find(text: string, present: readonly boolean[] = this.presentIn(text)): Found[] {
    const all: Found[] = [];
    for (const [i, rule] of RULES.entries()) {
      if (!present[i]) continue;
      rule.pattern.lastIndex = 0;
      for (const m of text.matchAll(rule.pattern)) {
        const s = m.groups?.s;
        const from = s !== undefined ? (m.index as number) + m[0].lastIndexOf(s) : (m.index as number);
        all.push({ from, to: from + (s ?? m[0]).length, kind: rule.kind });
      }
    }
    for (const { value, kind } of this.exact()) {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length)) all.push({ from: at, to: at + value.length, kind });
    }
    all.sort((a, b) => a.from - b.from || b.to - a.to);
    const kept: Found[] = [];
    for (const f of all) if (kept.length === 0 || f.from >= (kept[kept.length - 1] as Found).to) kept.push(f);
    return kept;
  }

  /** Where, at the end of `text`, a secret may have begun that has not all arrived; undefined when none may have. */
  heldTail(text: string, present: readonly boolean[] = this.presentIn(text)): number | undefined {
    let at: number | undefined;
    const earliest = (i: number): void => {
      at = at === undefined ? i : Math.min(at, i);
    };
    for (const [i, rule] of RULES.entries()) {
      if (!rule.tail) continue;
      let m: RegExpExecArray | null;
      if (present[i]) {
        m = rule.tail.exec(text);
      } else {
        // Without the literal a match is short: look at the last characters only.
        const from = TAILS_FROM.get(rule) as RegExp;
        from.lastIndex = Math.max(0, text.length - TAIL_WITHOUT_LITERAL);
        m = from.exec(text);
      }
      if (m && m[0].length > 0) earliest(m.index);
    }
    for (const { value } of this.exact()) {
      for (let n = Math.min(value.length - 1, text.length); n >= 4; n--) {
        if (text.endsWith(value.slice(0, n))) {
          earliest(text.length - n);
          break;
        }
      }
    }
    return at;
  }

  /**
   * Every secret in `text` as written and as a terminal shows it (positions in `text`), overlaps merged into one; with
   * `tail`, also where at its end a secret may have begun that has not all arrived (`heldTail`, in either, or a secret
   * that reaches the end and may go on).
   */
  private scan(text: string, tail: boolean): { found: Found[]; held: number | undefined } {
    const present = this.presentIn(text);
    const found = this.find(text, present);
    let held = tail ? earlier(this.heldTail(text, present), found.find((f) => f.to === text.length)?.from) : undefined;
    const shown = shownText(text);
    if (shown === undefined) return { found, held };
    const inShown = this.presentIn(shown.text);
    const back = (i: number | undefined): number | undefined => (i === undefined ? undefined : shown.originalIndex(i));
    const more = this.find(shown.text, inShown);
    if (tail) held = earlier(held, back(earlier(this.heldTail(shown.text, inShown), more.find((f) => f.to === shown.text.length)?.from)));
    return { found: merged(found, more.map((f) => inOriginal(shown, f))), held };
  }

  /** A text with every secret replaced by its marker; `cut` when the text was cut short (a secret may be cut too). */
  redactText(text: string, options: { cut?: boolean } = {}): string {
    if (!this.enabled) return text;
    const { found, held } = this.scan(text, options.cut === true);
    let out = '';
    let at = 0;
    for (const f of found) {
      out += text.slice(at, f.from) + marker(f.kind);
      at = f.to;
    }
    // What may be the start of a secret the cut cut off (never inside one found: those were replaced).
    return held === undefined || held < at ? out + text.slice(at) : `${out}${text.slice(at, held)}${marker('truncated')}`;
  }

  /**
   * Redacts the part `[start, stop)` of a process's output, given the bytes `window` around it (from offset
   * `windowStart`; it should reach REDACTION_CONTEXT_BYTES before `start` and after `stop`, as far as retained and
   * written). Cursors stay raw byte offsets: the returned `stop` is where the next read starts. It never ends inside a
   * secret: the chunk ends before one that starts inside it, or, when one starts at `start`, just after it (a chunk
   * may then be longer than asked, by at most one secret). While output may still come (`final` false and the window
   * reaches the end of what was written, `atEnd`), a tail that may be the start of a secret is held back until it is
   * complete or the process ends, so a secret written in pieces is never shown in pieces. When nothing in it is
   * redacted the chunk is a view of `window`, not a copy.
   */
  redactRange(window: Uint8Array, windowStart: number, start: number, stop: number, options: { atEnd: boolean; final: boolean }): { chunk: Uint8Array; stop: number } {
    const text = latin1(window);
    const s = start - windowStart;
    let t = stop - windowStart;
    const { found, held } = this.scan(text, options.atEnd && !options.final);
    if (held !== undefined && held < t) t = Math.max(s, held);
    for (const f of found) {
      if (f.from < t && f.to > t) t = f.from > s ? f.from : f.to;
    }
    const parts: Uint8Array[] = [];
    let at = s;
    for (const f of found) {
      if (f.to <= s || f.from >= t) continue;
      const a = Math.max(f.from, s);
      if (a > at) parts.push(window.subarray(at, a));
      parts.push(encoder.encode(marker(f.kind)));
      at = Math.min(f.to, t);
    }
    if (t > at) parts.push(window.subarray(at, t));
    // Nothing redacted (the usual case): the bytes as they are, without another copy of a large read.
    if (parts.length === 1) return { chunk: parts[0] as Uint8Array, stop: windowStart + t };
    const size = parts.reduce((n, p) => n + p.length, 0);
    const chunk = new Uint8Array(size);
    let o = 0;
    for (const p of parts) {
      chunk.set(p, o);
      o += p.length;
    }
    return { chunk, stop: windowStart + t };
  }
}

/** The earlier of two positions, either of which may be absent. */
function earlier(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** A secret found in what is shown, in the original text: from its first shown character to its last (escapes within). */
function inOriginal(shown: Shown, f: Found): Found {
  return { from: shown.originalIndex(f.from), to: shown.originalIndex(f.to - 1) + 1, kind: f.kind };
}

/** Two sorted lists of secrets as one, sorted; overlapping ones become one (the earlier's kind), so none shows in part. */
function merged(a: readonly Found[], b: readonly Found[]): Found[] {
  if (b.length === 0) return [...a];
  const all = [...a, ...b].sort((x, y) => x.from - y.from || y.to - x.to);
  const out: Found[] = [];
  for (const f of all) {
    const last = out[out.length - 1];
    if (last !== undefined && f.from < last.to) {
      if (f.to > last.to) out[out.length - 1] = { ...last, to: f.to };
    } else {
      out.push(f);
    }
  }
  return out;
}

export function marker(kind: string): string {
  return `[REDACTED:${kind}]`;
}
