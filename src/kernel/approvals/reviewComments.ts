import { ToolError } from '../../base/errors';
import { isCanonicalPath } from '../../base/paths';

/** Which side of a diff a comment is on: `old` the file before the change (left), `new` the file after it (right). */
export type CommentSide = 'old' | 'new';

/**
 * A reviewer's comment on lines of a file under review (a held patch, a work review, an applied change): the
 * workspace-relative path, the side of the diff, the 1-based inclusive line range on that side, the lines as the
 * reviewer saw them, and what the reviewer wrote, exactly. The same shape reaches the agent whichever way it is sent
 * (a held patch's changes_requested result, or a review_comments steering instruction).
 */
export interface ReviewComment {
  readonly path: string;
  /** Absent in what a sender passes in: `new`. Always present in what checkReviewComments returns. */
  readonly side?: CommentSide;
  readonly range: { readonly start_line: number; readonly end_line: number };
  readonly quoted: string;
  readonly body: string;
}

/** Most comments sent at once. */
export const MAX_REVIEW_COMMENTS = 200;
/** Most characters (Unicode code points) of one comment's body. */
export const MAX_COMMENT_BODY_CHARS = 4000;
/** Most characters (code points) of the quoted lines kept with a comment (longer quotes are cut and end with "…"). */
export const MAX_QUOTED_CHARS = 4000;

function invalid(message: string, field: string): ToolError {
  return new ToolError('INVALID_ARGUMENTS', message, { details: { field } });
}

/** `text` cut to at most `max` code points, ending with "…" when cut (never inside a surrogate pair). */
function cut(text: string, max: number): string {
  const points = Array.from(text);
  return points.length > max ? `${points.slice(0, max - 1).join('')}…` : text;
}

/**
 * The one check every sender of review comments goes through: at least one and at most MAX_REVIEW_COMMENTS, each
 * with a valid workspace path (one of `paths` when given: the files under review), side `old` or `new` (absent:
 * `new`), a range of positive integers with start ≤ end, and a body of at most MAX_COMMENT_BODY_CHARS code points
 * that is not only whitespace. The body is kept exactly as written, byte for byte (leading and trailing whitespace,
 * CR LF, any Unicode): what the reviewer typed is what the agent reads. Quotes are cut to MAX_QUOTED_CHARS code
 * points; the comments come back in file, side and line order. Throws INVALID_ARGUMENTS naming the field.
 */
export function checkReviewComments(input: readonly ReviewComment[], paths?: readonly string[]): ReviewComment[] {
  if (!Array.isArray(input) || input.length === 0) throw invalid('Send at least one comment.', 'comments');
  if (input.length > MAX_REVIEW_COMMENTS) throw invalid(`At most ${MAX_REVIEW_COMMENTS} comments can be sent at once (got ${input.length}).`, 'comments');
  const out = input.map((c, i): ReviewComment => {
    const field = `comments[${i}]`;
    if (typeof c !== 'object' || c === null) throw invalid(`${field} is not a comment.`, field);
    if (typeof c.path !== 'string' || !isCanonicalPath(c.path)) throw invalid(`${field}.path must be a workspace-relative path with / separators.`, `${field}.path`);
    if (paths !== undefined && !paths.includes(c.path)) throw invalid(`${field}.path ${JSON.stringify(c.path)} is not a file under review (${paths.join(', ')}).`, `${field}.path`);
    const start = c.range?.start_line;
    const end = c.range?.end_line;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 1 || end < start) {
      throw invalid(`${field}.range must have whole start_line ≥ 1 and end_line ≥ start_line.`, `${field}.range`);
    }
    const side = c.side ?? 'new';
    if (side !== 'old' && side !== 'new') throw invalid(`${field}.side must be "old" or "new".`, `${field}.side`);
    const body = typeof c.body === 'string' ? c.body : '';
    if (body.trim() === '') throw invalid(`${field}.body is empty: a comment says something.`, `${field}.body`);
    const chars = Array.from(body).length;
    if (chars > MAX_COMMENT_BODY_CHARS) throw invalid(`${field}.body has ${chars} characters; at most ${MAX_COMMENT_BODY_CHARS}.`, `${field}.body`);
    const quoted = cut(typeof c.quoted === 'string' ? c.quoted : '', MAX_QUOTED_CHARS);
    return { path: c.path, side, range: { start_line: start, end_line: end }, quoted, body };
  });
  const order = (c: ReviewComment): number => (c.side === 'old' ? 0 : 1);
  return out
    .map((c, i) => ({ c, i }))
    .sort(
      (a, b) =>
        (a.c.path < b.c.path ? -1 : a.c.path > b.c.path ? 1 : 0) ||
        order(a.c) - order(b.c) ||
        a.c.range.start_line - b.c.range.start_line ||
        a.c.range.end_line - b.c.range.end_line ||
        a.i - b.i,
    )
    .map((x) => x.c);
}
