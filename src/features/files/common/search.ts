import { z } from 'zod';
import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { GLOB_LIMITS, checkGlob } from '../../../base/glob';
import { isInside, isNameable, leftOutNamesNote, realRootOf } from '../../../base/paths';
import { mapLimit } from '../../../base/concurrency';
import { defineTool } from '../../../kernel/tool';
import type { FileToolDeps } from './fileTools';

/** Matching lines one call returns by default, and at most. */
export const SEARCH_DEFAULT_RESULTS = 100;
export const SEARCH_MAX_RESULTS = 2000;
export const SEARCH_MAX_CONTEXT_LINES = 10;
/** Characters kept of one line (match or context). */
export const SEARCH_MAX_LINE_CHARS = 500;
/** Characters of line text one call returns in total. */
export const SEARCH_MAX_TOTAL_CHARS = 1024 * 1024;
/** Wall-clock bound of one search: past it the engine is stopped and the result is partial (timed_out). */
export const SEARCH_TIMEOUT_MS = 30_000;
const MAX_QUERY_CHARS = 4096;
const MAX_GLOBS = 64;

/** A root-relative glob from the agent: the same rules as find's pattern, plus no leading "!" (that is exclude). */
function checkSearchGlob(field: string, glob: string): string {
  if (glob.includes('\0')) throw new InvalidArgumentsError(`${field}: a glob must not contain a NUL byte.`, { field });
  if (glob.startsWith('!')) throw new InvalidArgumentsError(`${field}: a glob must not start with "!"; put it in exclude instead.`, { field });
  if (glob.startsWith('/') || /^[a-zA-Z]:/.test(glob) || glob.startsWith('~') || glob.includes('\\')) {
    throw new InvalidArgumentsError(`${field}: globs are relative to the workspace root with "/" separators, for example "src/**/*.ts".`, { field });
  }
  if (glob.split('/').includes('..')) throw new InvalidArgumentsError(`${field}: a glob must not contain "..": search only looks inside the workspace.`, { field });
  try {
    return checkGlob(glob).pattern;
  } catch (err) {
    if (InvalidArgumentsError.is(err)) throw new InvalidArgumentsError(`${field}: ${err.message}`, { field });
    throw err;
  }
}

const contextLine = z.object({ line: z.number(), text: z.string() });

export const searchTool = defineTool({
  name: 'search',
  title: 'Search file contents',
  description:
    'Searches file contents with ripgrep as VS Code\'s search does (search.exclude, .gitignore). query is literal ' +
    'unless regex (Rust syntax), case-insensitive unless case_sensitive; include/exclude: globs. One match per line.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    query: z.string().min(1).max(MAX_QUERY_CHARS),
    regex: z.boolean().optional(),
    case_sensitive: z.boolean().optional(),
    include: z.array(z.string().min(1).max(GLOB_LIMITS.maxLength)).max(MAX_GLOBS).optional(),
    exclude: z.array(z.string().min(1).max(GLOB_LIMITS.maxLength)).max(MAX_GLOBS).optional(),
    max_results: z.number().int().min(1).max(SEARCH_MAX_RESULTS).optional(),
    context_lines: z.number().int().min(0).max(SEARCH_MAX_CONTEXT_LINES).optional(),
    work_id: z.string().optional(),
  },
  output: {
    matches: z.array(
      z.object({
        path: z.string(),
        line: z.number(),
        column: z.number(),
        end_column: z.number(),
        text: z.string(),
        text_truncated: z.boolean().optional(),
        before: z.array(contextLine).optional(),
        after: z.array(contextLine).optional(),
      }),
    ),
    truncated: z.boolean(),
    timed_out: z.boolean().optional(),
    files_with_matches: z.number(),
    engine: z.object({ kind: z.literal('ripgrep'), source: z.enum(['vscode', 'explicit', 'none']), path: z.string().optional() }),
    notes: z.array(z.string()).optional(),
  },
  create: (deps: Pick<FileToolDeps, 'workspaces' | 'fs' | 'search' | 'redactor'>) => async (args, { signal, progress }) => {
    if (/[\r\n]/.test(args.query)) throw new InvalidArgumentsError('query must be one line: it must not contain a line break.', { field: 'query' });
    if (args.query.includes('\0')) throw new InvalidArgumentsError('query must not contain a NUL byte.', { field: 'query' });
    const include = (args.include ?? []).map((g, i) => checkSearchGlob(`include[${i}]`, g));
    const exclude = (args.exclude ?? []).map((g, i) => checkSearchGlob(`exclude[${i}]`, g));
    const ws = deps.workspaces.get(args.workspace_id, args.work_id);
    const engine = deps.search.engine();
    if (!engine.available) {
      throw new ToolError('SEARCH_UNAVAILABLE', `Content search is unavailable: ${engine.reason ?? 'no ripgrep was found'}.`, {
        hint: 'Use find and read meanwhile; the developer can see details in the CodeSpace log.',
        details: { engine: engine.kind },
      });
    }
    const realRoot = await realRootOf(deps.fs, ws.root);
    const max = args.max_results ?? SEARCH_DEFAULT_RESULTS;
    progress?.(0, max, 'searching');
    let lastReport = Date.now();
    let reported = 0;
    const result = await deps.search.search({
      root: realRoot,
      query: args.query,
      regex: args.regex ?? false,
      caseSensitive: args.case_sensitive ?? false,
      include,
      exclude,
      settings: deps.search.settings(ws.root),
      maxResults: max,
      contextLines: args.context_lines ?? 0,
      maxLineChars: SEARCH_MAX_LINE_CHARS,
      maxTotalBytes: SEARCH_MAX_TOTAL_CHARS,
      timeoutMs: SEARCH_TIMEOUT_MS,
      signal,
      onMatches: (matches, files) => {
        // A report that reached the total would leave the final 'done' no room (progress only increases).
        if (!progress || matches >= max || Date.now() - lastReport < 100) return;
        lastReport = Date.now();
        reported = matches;
        progress(matches, max, `${matches} matching line(s) in ${files} file(s)`);
      },
    });
    // rg never follows links, but a folder swapped for a link while it walks could still lead it outside: every
    // reported file must resolve inside the root, or it is left out (with everything it matched).
    const files = [...new Set(result.matches.map((m) => m.path))];
    const outside = new Set<string>();
    await mapLimit(files, 32, async (rel) => {
      if (rel === '' || path.isAbsolute(rel) || rel.split('/').includes('..')) {
        outside.add(rel);
        return;
      }
      try {
        const real = await deps.fs.realpath(path.join(realRoot, ...rel.split('/')));
        if (!isInside(realRoot, real)) outside.add(rel);
      } catch {
        outside.add(rel); // vanished since: nothing to show
      }
    });
    // Only paths an agent can name are listed (the check find makes), and names that are not UTF-8 never get here.
    const unnameable = new Set(files.filter((f) => !outside.has(f) && !isNameable(f)));
    const kept = outside.size === 0 && unnameable.size === 0 ? result.matches : result.matches.filter((m) => !outside.has(m.path) && !unnameable.has(m.path));
    // Credentials in the lines are redacted (best effort; `read` stays exact): columns still count the file's text.
    const { redactor } = deps;
    const matches = !redactor.enabled
      ? kept
      : kept.map((m) => ({
          ...m,
          text: redactor.redactText(m.text, { cut: m.text_truncated === true }),
          ...(m.before ? { before: m.before.map((c) => ({ ...c, text: redactor.redactText(c.text, { cut: c.text.length >= SEARCH_MAX_LINE_CHARS }) })) } : {}),
          ...(m.after ? { after: m.after.map((c) => ({ ...c, text: redactor.redactText(c.text, { cut: c.text.length >= SEARCH_MAX_LINE_CHARS }) })) } : {}),
        }));
    const notes: string[] = [];
    if (result.timed_out) notes.push(`The search ran longer than ${SEARCH_TIMEOUT_MS / 1000} s and was stopped: the results are partial. Narrow it with include globs or a more specific query.`);
    if (result.skipped_long_lines > 0) notes.push(`${result.skipped_long_lines} matching line(s) were too long to return and were left out.`);
    if (outside.size > 0) notes.push(`${outside.size} file(s) were left out because they resolve outside the workspace.`);
    const namesNote = leftOutNamesNote(unnameable.size + (result.unrepresentable?.length ?? 0));
    if (namesNote !== undefined) notes.push(namesNote);
    if (result.errors.length > 0) notes.push(`Some files could not be searched: ${result.errors.join('; ')}`);
    // Always above the last report, also when none matched or links and names left matches out: 'done' always goes.
    const done = Math.max(matches.length, reported + 1);
    progress?.(done, done, 'done');
    return {
      matches,
      truncated: result.truncated,
      ...(result.timed_out ? { timed_out: true } : {}),
      files_with_matches: files.length - outside.size - unnameable.size,
      engine: { kind: engine.kind, source: engine.source, ...(engine.path !== undefined ? { path: engine.path } : {}) },
      ...(notes.length > 0 ? { notes } : {}),
    };
  },
});
