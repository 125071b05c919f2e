import { spawn } from 'node:child_process';
import type { ContentMatch, ContentSearchRequest, ContentSearchResult, ContextLine } from '../common/contentSearch';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';

/** One JSON record of rg over this many bytes (a minified file's single line, say) is skipped, not buffered. */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;
/** Bytes of rg's stderr kept for an error message. */
const MAX_STDERR_BYTES = 8 * 1024;
/** Engine messages about single files kept in the result. */
const MAX_ERRORS = 5;

/**
 * A root-relative glob in VS Code's dialect as an rg glob: VS Code's search anchors a pattern to the folder unless it
 * starts with `**` or `/` (rg, like gitignore, would match a slash-free pattern at any depth).
 */
export function anchorGlob(glob: string): string {
  return glob.startsWith('**') || glob.startsWith('/') ? glob : `/${glob}`;
}

/**
 * rg's arguments for one request. Every value travels inside its option's own argument (`--regexp=…`,
 * `--glob=…`), so a query or glob that looks like an option (`-e`, `--pre=sh`) is only ever data; the only path
 * is `.` after `--` (rg's working folder is the verified root). Never `--follow`: a link may lead outside the
 * workspace. `--no-config`: RIPGREP_CONFIG_PATH could otherwise add options (`--pre`) behind our back.
 */
export function ripgrepArgs(r: Pick<ContentSearchRequest, 'query' | 'regex' | 'caseSensitive' | 'include' | 'exclude' | 'settings' | 'contextLines'>): string[] {
  const args = ['--json', '--no-config', '--hidden', '--no-require-git', '--no-ignore-global', '--no-follow', '--crlf'];
  args.push(r.caseSensitive ? '--case-sensitive' : '--ignore-case');
  if (!r.regex) args.push('--fixed-strings');
  if (!r.settings.useIgnoreFiles) args.push('--no-ignore');
  else if (!r.settings.useParentIgnoreFiles) args.push('--no-ignore-parent');
  if (r.contextLines > 0) args.push(`--context=${r.contextLines}`);
  for (const g of r.include) args.push(`--glob=${anchorGlob(g)}`);
  for (const g of [...r.settings.excludes, ...r.exclude]) args.push(`--glob=!${anchorGlob(g)}`);
  // The path is given (rg would read a non-terminal stdin instead of walking); `--` ends the options.
  args.push(`--regexp=${r.query}`, '--', '.');
  return args;
}

interface RgText {
  text?: string;
  bytes?: string;
}
interface RgRecord {
  type: string;
  data: {
    path?: RgText;
    lines?: RgText;
    line_number?: number | null;
    submatches?: { start: number; end: number }[];
  };
}

function decode(t: RgText | undefined): string {
  if (!t) return '';
  if (t.text !== undefined) return t.text;
  return Buffer.from(t.bytes ?? '', 'base64').toString('utf8');
}

function lineBytes(t: RgText | undefined): Buffer {
  if (!t) return Buffer.alloc(0);
  return t.text !== undefined ? Buffer.from(t.text, 'utf8') : Buffer.from(t.bytes ?? '', 'base64');
}

/** A line without its terminator. */
function stripEol(s: string): string {
  return s.replace(/\r?\n$/, '');
}

interface FileLines {
  readonly path: string;
  /** Matches of this file, in order, with their context still open. */
  readonly matches: { match: Omit<ContentMatch, 'before' | 'after'>; before: ContextLine[]; after: ContextLine[] }[];
  /** The last context lines seen (at most contextLines), for the next match's `before`. */
  recent: ContextLine[];
}

/**
 * Runs VS Code's (or a given) ripgrep for the `search` tool: spawned with an argument array and no shell, in the
 * verified root, with an empty environment; its `--json` output parsed as it streams, one record at a time, with a
 * bound on each record and on the text kept. It is killed as soon as one match past `maxResults` arrives, the byte
 * budget is spent, the time bound passes or the signal aborts.
 */
export class RipgrepSearch {
  /** How the latest run's rg ended (diagnostics and tests: SIGKILL when it was stopped early). */
  lastExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(private readonly rgPath: string) {}

  get path(): string {
    return this.rgPath;
  }

  run(req: ContentSearchRequest): Promise<ContentSearchResult> {
    if (req.signal.aborted) return Promise.reject(new ToolError('CANCELLED', 'The search was cancelled before it started.'));
    return new Promise<ContentSearchResult>((resolve, reject) => {
      const child = spawn(this.rgPath, ripgrepArgs(req), {
        cwd: req.root,
        env: process.platform === 'win32' ? { SystemRoot: process.env.SystemRoot ?? 'C:\\Windows' } : {},
        stdio: ['ignore', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      const out: ContentMatch[] = [];
      const errors: string[] = [];
      const unrepresentable = new Set<string>();
      let collected = 0;
      let files = 0;
      let bytes = 0;
      let skipped = 0;
      let truncated = false;
      let timedOut = false;
      let cancelled = false;
      let stopped = false;
      let sawSummary = false;
      let stderr = '';
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let overlong = false;
      let current: FileLines | undefined;
      const N = req.contextLines;

      const stop = (): void => {
        if (stopped) return;
        stopped = true;
        child.kill('SIGKILL');
      };
      const cut = (s: string): { text: string; cut: boolean } => (s.length > req.maxLineChars ? { text: s.slice(0, req.maxLineChars), cut: true } : { text: s, cut: false });
      const flushFile = (): void => {
        if (!current) return;
        for (const m of current.matches) {
          out.push({ ...m.match, ...(N > 0 ? { before: m.before, after: m.after } : {}) });
        }
        current = undefined;
      };
      const onRecord = (rec: RgRecord): void => {
        if (stopped) return;
        switch (rec.type) {
          case 'begin':
            flushFile();
            files++;
            // rg gives a path that is not valid UTF-8 as bytes: no JSON text carries it exactly, so its matches are
            // left out (the tool says how many files in its notes).
            if (rec.data.path?.text === undefined) {
              unrepresentable.add(decode(rec.data.path).replace(/^\.\//, ''));
              return;
            }
            // Only Windows separates folders with a backslash; elsewhere it is a character of the name, kept as is.
            current = { path: (process.platform === 'win32' ? decode(rec.data.path).replace(/\\/g, '/') : decode(rec.data.path)).replace(/^\.\//, ''), matches: [], recent: [] };
            return;
          case 'context': {
            if (!current || N === 0) return;
            const line = rec.data.line_number ?? 0;
            const t = cut(stripEol(decode(rec.data.lines)));
            bytes += t.text.length;
            const entry = { line, text: t.text };
            for (const m of current.matches) if (line > m.match.line && line <= m.match.line + N && m.after.length < N) m.after.push(entry);
            current.recent.push(entry);
            if (current.recent.length > N) current.recent.shift();
            break;
          }
          case 'match': {
            if (!current) return;
            if (collected >= req.maxResults) {
              truncated = true;
              stop();
              return;
            }
            const line = rec.data.line_number ?? 0;
            const raw = lineBytes(rec.data.lines);
            const first = rec.data.submatches?.[0];
            const column = first ? raw.subarray(0, first.start).toString('utf8').length + 1 : 1;
            const endColumn = first ? raw.subarray(0, first.end).toString('utf8').length + 1 : 1;
            const t = cut(stripEol(raw.toString('utf8')));
            bytes += t.text.length;
            const entry = { line, text: t.text };
            for (const m of current.matches) if (line > m.match.line && line <= m.match.line + N && m.after.length < N) m.after.push(entry);
            const before = current.recent.filter((c) => c.line >= line - N && c.line < line);
            current.matches.push({
              match: { path: current.path, line, column, end_column: endColumn, text: t.text, ...(t.cut ? { text_truncated: true as const } : {}) },
              before,
              after: [],
            });
            if (N > 0) {
              current.recent.push(entry);
              if (current.recent.length > N) current.recent.shift();
            }
            collected++;
            if (collected % 16 === 0) req.onMatches?.(collected, files);
            break;
          }
          case 'end':
            flushFile();
            return;
          case 'summary':
            sawSummary = true;
            return;
          default:
            return;
        }
        if (bytes > req.maxTotalBytes) {
          truncated = true;
          stop();
        }
      };
      const onLine = (buf: Buffer): void => {
        if (buf.length === 0) return;
        let rec: RgRecord;
        try {
          rec = JSON.parse(buf.toString('utf8')) as RgRecord;
        } catch {
          return;
        }
        onRecord(rec);
      };
      child.stdout.on('data', (chunk: Buffer) => {
        let start = 0;
        for (;;) {
          const nl = chunk.indexOf(0x0a, start);
          if (nl < 0) break;
          const piece = chunk.subarray(start, nl);
          if (overlong) {
            overlong = false;
            skipped++;
          } else if (pendingBytes > 0) {
            pending.push(piece);
            onLine(Buffer.concat(pending));
          } else {
            onLine(piece);
          }
          pending = [];
          pendingBytes = 0;
          start = nl + 1;
        }
        if (start < chunk.length && !overlong) {
          const rest = chunk.subarray(start);
          pendingBytes += rest.length;
          if (pendingBytes > MAX_RECORD_BYTES) {
            // A record too big to keep (one enormous line): drop it and everything up to its newline.
            pending = [];
            pendingBytes = 0;
            overlong = true;
          } else {
            pending.push(Buffer.from(rest));
          }
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < MAX_STDERR_BYTES) stderr += chunk.toString('utf8').slice(0, MAX_STDERR_BYTES - stderr.length);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        truncated = true;
        stop();
      }, req.timeoutMs);
      const onAbort = (): void => {
        cancelled = true;
        stop();
      };
      req.signal.addEventListener('abort', onAbort, { once: true });
      const finish = (): void => {
        clearTimeout(timer);
        req.signal.removeEventListener('abort', onAbort);
      };
      child.once('error', (err: NodeJS.ErrnoException) => {
        finish();
        reject(
          new ToolError('SEARCH_UNAVAILABLE', `ripgrep could not be started from ${this.rgPath}: ${err.code ?? err.message}.`, {
            hint: 'Content search needs the ripgrep VS Code ships; the developer can check the CodeSpace log.',
            details: { engine: this.rgPath },
          }),
        );
      });
      child.once('close', (code, exitSignal) => {
        this.lastExit = { code, signal: exitSignal };
        finish();
        flushFile();
        if (cancelled) {
          reject(new ToolError('CANCELLED', 'The search was cancelled.'));
          return;
        }
        for (const line of stderr.split('\n')) if (line.trim() && errors.length < MAX_ERRORS) errors.push(line.trim());
        // Exit 2 before any summary and not stopped by us: rg refused the request itself (regex or glob syntax,
        // a regex over its size limit). rg also exits 2 when single files could not be read: then it summarises.
        if (code === 2 && !sawSummary && !stopped && collected === 0) {
          reject(new InvalidArgumentsError(`ripgrep refused the search: ${stderr.trim().slice(0, 500) || 'no message'}`, { hint: 'Check the query (regex: Rust regex syntax) and the include/exclude globs.' }));
          return;
        }
        req.onMatches?.(collected, files);
        resolve({ matches: out, truncated, timed_out: timedOut, errors: sawSummary || stopped ? errors : [], skipped_long_lines: skipped, ...(unrepresentable.size > 0 ? { unrepresentable: [...unrepresentable].sort() } : {}) });
      });
    });
  }
}
