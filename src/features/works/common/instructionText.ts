import { createHash } from 'node:crypto';
import { InvalidArgumentsError } from '../../../base/errors';
import type { ReviewComment } from '../../../kernel/approvals/reviewComments';
import type { RewindNotice } from './steering';
import { MAX_INSTRUCTION_BYTES, MAX_NOTE_BYTES } from './steering';

const utf8 = new TextEncoder();

/** The text of a rewind instruction: what the developer did and which files now hold other content, cut to the size limit. */
export function rewindText(n: RewindNotice): string {
  const where = n.checkpoint === 0 ? 'before its first operation' : `checkpoint ${n.checkpoint} (right after operation ${n.operation_id ?? '?'})`;
  const head =
    n.action === 'rewind'
      ? `The developer rewound this work's files to ${where}. Your later changes to these files are gone from disk; read them again before editing (versions in "rewind"):`
      : `The developer redid the rewind: this work's files are back as they were before it, at ${where}. Read them again before editing (versions in "rewind"):`;
  return cutToLimit([head, ...n.files.map((f) => `- ${f.path}${f.version === null ? ' (no file)' : ''}`)].join('\n'), 'every file is in "rewind"');
}

/**
 * The text of a review_comments instruction, for whoever reads only text (the panel, /inbox, an agent that ignores
 * `comments`): one line per comment, `path:start-end: body` (` (old side)` after the lines of a comment on the file
 * before the change; the body's whitespace runs as one space), cut to the instruction size limit. `comments` has
 * each body exactly.
 */
export function reviewCommentsText(comments: readonly ReviewComment[]): string {
  const files = new Set(comments.map((c) => c.path)).size;
  const head = `Review comments from the developer (${comments.length} on ${files} file${files === 1 ? '' : 's'}; each with its lines in "comments"):`;
  const lines = comments.map((c) => {
    const at = c.range.start_line === c.range.end_line ? `${c.range.start_line}` : `${c.range.start_line}-${c.range.end_line}`;
    return `- ${c.path}:${at}${c.side === 'old' ? ' (old side)' : ''}: ${c.body.replace(/\s+/g, ' ').trim()}`;
  });
  return cutToLimit([head, ...lines].join('\n'), 'every comment is in "comments"');
}

/** `text`, or its start with a line saying where the rest is when it has more than MAX_INSTRUCTION_BYTES. */
function cutToLimit(text: string, rest: string): string {
  if (utf8.encode(text).length <= MAX_INSTRUCTION_BYTES) return text;
  let cut = text;
  while (utf8.encode(cut).length > MAX_INSTRUCTION_BYTES - 64) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut}\n… (cut; ${rest})`;
}

/** INVALID_ARGUMENTS unless `text` is a non-empty instruction of at most MAX_INSTRUCTION_BYTES. */
export function checkText(text: string): void {
  if (text.trim() === '') throw new InvalidArgumentsError('The instruction text is empty.', { field: 'text', hint: 'Write what the agent should do.' });
  const n = utf8.encode(text).length;
  if (n > MAX_INSTRUCTION_BYTES) {
    throw new InvalidArgumentsError(`The instruction has ${n} bytes; at most ${MAX_INSTRUCTION_BYTES} (UTF-8).`, {
      field: 'text',
      hint: 'Shorten it, or split it into several instructions.',
      details: { bytes: n, max_bytes: MAX_INSTRUCTION_BYTES },
    });
  }
}

/** INVALID_ARGUMENTS when the agent's note at steer_complete has more than MAX_NOTE_BYTES. */
export function checkNote(note: string | undefined): void {
  const n = note === undefined ? 0 : utf8.encode(note).length;
  if (n > MAX_NOTE_BYTES) throw new InvalidArgumentsError(`note has ${n} bytes; at most ${MAX_NOTE_BYTES}.`, { field: 'note' });
}

export function checkKey(key: string): void {
  if (key === '' || key.length > 200) throw new InvalidArgumentsError('The idempotency key must have 1 to 200 characters.', { field: 'idempotency_key' });
}

/** The request hash an idempotency key is bound to. */
export function hashOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}
