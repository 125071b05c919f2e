/**
 * What a terminal shows of a text: the text without its escape sequences and the controls a terminal does not
 * display, with a way back from a position in what is shown to the same character in the text. Secrets are matched
 * in what is shown (secretRedactor.ts), so colour codes, hyperlinks or cursor moves between a token's characters do not
 * hide it (`grep --color=always` prints a match's start in colour, then the rest of the line).
 *
 * The text is the output's bytes read one character per byte (Latin-1), as the redactor reads output. Hidden are:
 * - ESC sequences: CSI (`ESC [` parameters, intermediates, a final byte: SGR colours, cursor moves, erase-line),
 *   the string sequences OSC, DCS, SOS, PM and APC (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`; hyperlinks
 *   `ESC ] 8 ;; url ESC \` among them) up to their terminator (BEL or ST; CAN, SUB or another ESC end one, as in a
 *   terminal's parser), and the other ESC sequences (`ESC ( B`, `ESC 7`, `ESC =`). One not finished at the end of the
 *   text is hidden to the end (the rest may come with the next write);
 * - C1 controls: U+0080–U+009F as UTF-8 (bytes C2 80–C2 9F), which a terminal decoding UTF-8 treats as controls,
 *   CSI (C2 9B) and the string introducers (OSC C2 9D, DCS C2 90, …) with their sequences. A lone byte 0x80–0x9F is
 *   no control there: it is part of another character, or invalid UTF-8 the terminal shows as a replacement character;
 * - the C0 controls but tab, line feed, vertical tab, form feed and carriage return (those move to another place on
 *   the screen, so they end a token as a space does), and DEL.
 *
 * Plain output costs a few substring searches (one per control character; a regular expression's character class, or
 * a loop over the characters, scanned a 1 MiB page many times slower); output with escapes, one pass over them.
 */

/** What is shown of a text, and the way back to the text. */
export interface Shown {
  /** The shown characters, in order. */
  readonly text: string;
  /** The position in the original text of the shown character at `index` (0 ≤ index < text.length). */
  originalIndex(index: number): number;
}

const ESC = 0x1b;
/** The lead byte of U+0080–U+00BF in UTF-8; followed by 0x80–0x9F it is a C1 control. */
const C1_LEAD = 0xc2;

/** The C0 controls a terminal does not display (all but ESC, which starts a sequence), and DEL. */
const LONE = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1c, 0x1d, 0x1e, 0x1f, 0x7f].map((c) =>
  String.fromCharCode(c),
);

/** Where a CSI's parameters start at `i` ends: after its final byte, or where it stops being one (or at the end). */
function csiEnd(text: string, i: number): number {
  let j = i;
  while (j < text.length && inRange(text.charCodeAt(j), 0x30, 0x3f)) j++;
  while (j < text.length && inRange(text.charCodeAt(j), 0x20, 0x2f)) j++;
  return j < text.length && inRange(text.charCodeAt(j), 0x40, 0x7e) ? j + 1 : j;
}

/** Where a string sequence (OSC, DCS, SOS, PM, APC) whose content starts at `i` ends: after its terminator. */
function stringEnd(text: string, i: number): number {
  for (let j = i; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x07 || c === 0x18 || c === 0x1a) return j + 1;
    // ESC \ is ST; any other ESC ends the string and starts a sequence of its own.
    if (c === ESC) return text.charCodeAt(j + 1) === 0x5c ? j + 2 : j;
    if (c === C1_LEAD && text.charCodeAt(j + 1) === 0x9c) return j + 2;
  }
  return text.length;
}

function inRange(c: number, lo: number, hi: number): boolean {
  return c >= lo && c <= hi;
}

/** Where the hidden run that starts at `i` (an ESC, a C1 lead, or a lone control) ends; `i` when nothing is hidden there. */
function hiddenEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === ESC) {
    if (i + 1 === text.length) return i + 1;
    const n = text.charCodeAt(i + 1);
    if (n === 0x5b) return csiEnd(text, i + 2);
    if (n === 0x5d || n === 0x50 || n === 0x58 || n === 0x5e || n === 0x5f) return stringEnd(text, i + 2);
    if (inRange(n, 0x20, 0x2f)) {
      let j = i + 1;
      while (j < text.length && inRange(text.charCodeAt(j), 0x20, 0x2f)) j++;
      return j < text.length && inRange(text.charCodeAt(j), 0x30, 0x7e) ? j + 1 : j;
    }
    return inRange(n, 0x30, 0x7e) ? i + 2 : i + 1;
  }
  if (c === C1_LEAD) {
    // At the very end it may be the first byte of a C1 control the next write completes.
    if (i + 1 === text.length) return i + 1;
    const n = text.charCodeAt(i + 1);
    if (!inRange(n, 0x80, 0x9f)) return i;
    if (n === 0x9b) return csiEnd(text, i + 2);
    if (n === 0x9d || n === 0x90 || n === 0x98 || n === 0x9e || n === 0x9f) return stringEnd(text, i + 2);
    return i + 2;
  }
  return i + 1;
}

/** Every position of `char` in `text`, ascending. */
function positions(text: string, char: string, into: number[]): void {
  for (let at = text.indexOf(char); at >= 0; at = text.indexOf(char, at + 1)) into.push(at);
}

/**
 * The ESC sequences as one expression, as `hiddenEnd` reads them (an ESC inside a string sequence ends it, so every
 * ESC starts a hidden run). A native replace with it costs about what reading the page as Latin-1 does; a loop over
 * its matches, or over the ESCs by hand, cost 3–6 times more on coloured output, so positions are mapped back only
 * when a secret or a tail is found in what is shown (`Lazy`).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is what it is for
const ESC_SEQUENCE = /\x1b(?:\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?|[\]PX^_](?:[^\x07\x18\x1a\x1b\xc2]|\xc2(?!\x9c))*(?:\x07|[\x18\x1a]|\x1b\\|\xc2\x9c)?|[\x20-\x2f]*[\x30-\x7e]?)/g;

/** What is shown, with where each run of it starts in what is shown (`at`) and in the text (`from`). */
class Mapped implements Shown {
  constructor(
    readonly text: string,
    private readonly at: readonly number[],
    private readonly from: readonly number[],
  ) {}

  originalIndex(index: number): number {
    let lo = 0;
    let hi = this.at.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.at[mid] as number) <= index) lo = mid;
      else hi = mid - 1;
    }
    return (this.from[lo] as number) + index - (this.at[lo] as number);
  }
}

/** Text whose only hidden runs are ESC sequences: shown by one replace; mapped back when asked. */
class Lazy implements Shown {
  private mapped: Mapped | undefined;
  /** How many characters at the end of the text follow its last hidden run (shown as they are). */
  private readonly plainEnd: number;

  constructor(
    private readonly original: string,
    readonly text: string,
  ) {
    const last = original.lastIndexOf('\x1b');
    this.plainEnd = original.length - hiddenEnd(original, last);
  }

  originalIndex(index: number): number {
    // A tail after the last escape (what a streamed read asks about) needs no map.
    if (index >= this.text.length - this.plainEnd) return this.original.length - (this.text.length - index);
    this.mapped ??= scan(this.original, []) as Mapped;
    return this.mapped.originalIndex(index);
  }
}

/** What a terminal shows of `text`; undefined when it shows all of it (nothing is hidden). */
export function shownText(text: string): Shown | undefined {
  // C1 controls and lone C0 controls are rare: a substring search each, then their positions when there are any.
  const others: number[] = [];
  let kinds = 0;
  for (const char of ['\xc2', ...LONE]) {
    if (!text.includes(char)) continue;
    kinds++;
    positions(text, char, others);
  }
  if (kinds > 1) others.sort((a, b) => a - b);
  if (others.length > 0) return scan(text, others);
  if (!text.includes('\x1b')) return undefined;
  return new Lazy(text, text.replace(ESC_SEQUENCE, ''));
}

/** The hidden runs of `text` (its ESCs, found as the pass goes, and `others`, sorted) and what is shown between them. */
function scan(text: string, others: readonly number[]): Mapped | undefined {
  let esc = text.indexOf('\x1b');
  let out = '';
  const at: number[] = [];
  const from: number[] = [];
  let next = 0;
  let o = 0;
  for (;;) {
    while (o < others.length && (others[o] as number) < next) o++;
    if (esc >= 0 && esc < next) esc = text.indexOf('\x1b', next);
    const other = o < others.length ? (others[o] as number) : -1;
    const i = esc < 0 ? other : other < 0 ? esc : Math.min(esc, other);
    if (i < 0) break;
    const end = hiddenEnd(text, i);
    if (end === i) {
      // A C2 that leads an ordinary character (`°`, a no-break space): shown.
      o++;
      continue;
    }
    if (i > next) {
      at.push(out.length);
      from.push(next);
      out += text.slice(next, i);
    }
    next = end;
  }
  if (next === 0) return undefined;
  if (next < text.length) {
    at.push(out.length);
    from.push(next);
    out += text.slice(next);
  }
  return new Mapped(out, at, from);
}
