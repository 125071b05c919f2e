import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { contentVersion } from '../../patches';
import { readCheckedFile } from '../../../base/paths';
import { EXTRA_CONTENT, defineTool } from '../../../kernel/tool';
import type { FileToolDeps } from './fileTools';
import { MAX_IMAGE_BYTES, sniffImage } from './images';
import { decodeText, hasBom } from '../../patches';
import { countLines, detectEol, utf8Prefix } from './text';

/** Files above this size cannot be read at all, even by line range. */
export const MAX_READABLE_FILE_BYTES = 256 * 1024 * 1024;

/** A cancelled read of a big file stops between its steps (read, decode, split) instead of finishing. */
function stopIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError('CANCELLED', 'The read was cancelled.');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

export const readTool = defineTool({
  name: 'read',
  title: 'Read a file',
  description:
    'Reads a text file: content and version (pass it in apply_patch\'s expected_versions). end_line is inclusive. When ' +
    'truncated, go on from start_line = next_start_line (and start_column = next_start_column). An image comes back as image content.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    path: z.string().min(1),
    start_line: z.number().int().min(1).optional(),
    end_line: z.number().int().min(1).optional(),
    start_column: z
      .number()
      .int()
      .min(1)
      .optional(),
    work_id: z.string().optional(),
  },
  output: {
    path: z.string(),
    /** Absent for an image: its bytes travel as an image content block. */
    content: z.string().optional(),
    version: z.string(),
    size: z.number(),
    truncated: z.boolean(),
    /** Only for an image: its type, from its magic bytes. */
    mime: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']).optional(),
    eol: z.enum(['lf', 'crlf', 'mixed', 'none']).optional(),
    bom: z.boolean().optional(),
    dirty_in_editor: z.boolean(),
    start_line: z.number().optional(),
    end_line: z.number().optional(),
    total_lines: z.number().optional(),
    next_start_line: z.number().optional(),
    next_start_column: z.number().optional(),
  },
  create: (deps: Pick<FileToolDeps, 'workspaces' | 'fs' | 'limits'>) => async (args, { signal }) => {
    if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) {
      throw new InvalidArgumentsError(`end_line (${args.end_line}) is before start_line (${args.start_line}).`);
    }
    const ws = deps.workspaces.get(args.workspace_id, args.work_id);
    const { rel, abs, bytes } = await readCheckedFile(deps.fs, ws.root, args.path, { maxBytes: MAX_READABLE_FILE_BYTES, limit: 'max_read_file_bytes' });
    stopIfCancelled(signal);
    const version = contentVersion(bytes);
    const mime = sniffImage(bytes);
    if (mime !== undefined) {
      if (bytes.length > MAX_IMAGE_BYTES) {
        throw new ToolError('TOO_LARGE', `${rel} is a ${mime} image of ${bytes.length} bytes; read returns images up to ${MAX_IMAGE_BYTES} bytes.`, {
          hint: 'Ask the developer for a smaller export of the image.',
          details: { path: rel, size: bytes.length, version, mime, limit: MAX_IMAGE_BYTES, limit_name: 'max_image_bytes' },
        });
      }
      if (args.start_line !== undefined || args.end_line !== undefined || args.start_column !== undefined) {
        throw new InvalidArgumentsError(`${rel} is an image (${mime}): start_line, end_line and start_column apply to text only.`);
      }
      const image = { path: rel, version, size: bytes.length, mime, truncated: false, dirty_in_editor: deps.fs.isDirty(abs) };
      const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
      return Object.assign(image, { [EXTRA_CONTENT]: [{ type: 'image' as const, data, mimeType: mime }] });
    }
    // The same test of "text" as the patch engine's, so a file that reads as text can be patched.
    const bom = hasBom(bytes);
    const text = decodeText(bom ? bytes.subarray(3) : bytes);
    if (text === undefined) {
      throw new ToolError('NOT_TEXT', `${rel} is not UTF-8 text (${bytes.length} bytes).`, {
        hint: 'Binary files cannot be read or patched as text.',
        details: { path: rel, size: bytes.length, version },
      });
    }
    stopIfCancelled(signal);
    const eol = detectEol(text);
    const limit = deps.limits().readBytes;
    const base = { path: rel, version, size: bytes.length, eol, bom, dirty_in_editor: deps.fs.isDirty(abs) };

    // The common case, a whole file within the limit: no need to split it into lines.
    if (args.start_line === undefined && args.end_line === undefined && args.start_column === undefined && bytes.length <= limit) {
      const total = countLines(text);
      return { ...base, content: text, truncated: false, start_line: 1, end_line: total, total_lines: total };
    }

    // Split keeping terminators so a slice of lines rejoins to the exact original text.
    const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    const total = lines.length;
    const start = args.start_line ?? 1;
    if (start > Math.max(total, 1)) {
      throw new InvalidArgumentsError(`start_line ${start} is past the end of ${rel}, which has ${total} line(s).`);
    }
    const column = args.start_column ?? 1;
    const first = lines[start - 1] ?? '';
    if (column > 1 && column > first.length) {
      throw new InvalidArgumentsError(`start_column ${column} is past the end of line ${start} of ${rel}, which has ${first.length} character(s).`);
    }
    const end = Math.min(args.end_line ?? total, total);
    let used = 0;
    const parts: string[] = [];
    let next: { line: number; column?: number } | undefined;
    for (let i = start - 1; i < end; i++) {
      if ((i & 0xffff) === 0) stopIfCancelled(signal);
      const line = i === start - 1 && column > 1 ? (lines[i] as string).slice(column - 1) : (lines[i] as string);
      const size = encoder.encode(line).length;
      if (used + size > limit) {
        if (parts.length === 0) {
          // A line longer than the limit: return its first bytes, on a character boundary, and say where to go on.
          const piece = decoder.decode(utf8Prefix(encoder.encode(line), limit));
          parts.push(piece);
          next = { line: i + 1, column: (i === start - 1 ? column : 1) + piece.length };
        } else {
          next = { line: i + 1 };
        }
        break;
      }
      parts.push(line);
      used += size;
    }
    const lastLine = next ? (next.column !== undefined ? next.line : next.line - 1) : end;
    const result = {
      ...base,
      content: parts.join(''),
      truncated: next !== undefined,
      start_line: start,
      end_line: total === 0 ? 0 : lastLine,
      total_lines: total,
    };
    if (!next) return result;
    return { ...result, next_start_line: next.line, ...(next.column !== undefined ? { next_start_column: next.column } : {}) };
  },
});
