/**
 * Text that came from outside (an instruction, an agent's note) shown exactly: every character that would act
 * instead of show — C0 and C1 controls (ESC of an ANSI sequence included), DEL, bidirectional overrides and
 * isolates, zero-width and invisible format characters, line and paragraph separators — becomes a visible escape
 * like `\x1b` or `\u202e`, marked so the page can style it. Newlines and tabs stay (the page keeps white space).
 * The page puts the pieces in text nodes only: nothing here is HTML.
 */
export interface VisiblePiece {
  readonly text: string;
  /** True for an escape standing for one invisible or acting character. */
  readonly escaped: boolean;
}

// eslint-disable-next-line no-control-regex
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;

function escapeOf(ch: string): string {
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Splits `text` into plain runs and escapes; joining the escapes' `text` back gives a string with no acting character. */
export function visiblePieces(text: string): VisiblePiece[] {
  const out: VisiblePiece[] = [];
  let last = 0;
  for (const m of text.matchAll(ACTING)) {
    const at = m.index ?? 0;
    if (at > last) out.push({ text: text.slice(last, at), escaped: false });
    out.push({ text: escapeOf(m[0]), escaped: true });
    last = at + m[0].length;
  }
  if (last < text.length) out.push({ text: text.slice(last), escaped: false });
  return out;
}

/** The same as one string (for titles, quick picks and notifications, which cannot style). */
export function visibleString(text: string): string {
  return visiblePieces(text)
    .map((p) => p.text)
    .join('');
}
