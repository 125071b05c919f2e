import { z } from 'zod';
import * as path from 'node:path';
import { InvalidArgumentsError } from '../../../base/errors';
import { GLOB_LIMITS, checkGlob } from '../../../base/glob';
import { isInside, isNameable, leftOutNamesNote } from '../../../base/paths';
import { mapLimit } from '../../../base/concurrency';
import { defineTool } from '../../../kernel/tool';
import type { FileToolDeps } from './fileTools';

/** Checks the pattern (InvalidArgumentsError naming the problem or limit) and returns it with star runs collapsed. */
function checkPattern(pattern: string): string {
  if (pattern.includes('\0')) throw new InvalidArgumentsError('pattern must not contain a NUL byte.');
  if (pattern.startsWith('/') || /^[a-zA-Z]:/.test(pattern) || pattern.startsWith('~')) {
    throw new InvalidArgumentsError('pattern is a glob relative to the workspace root, for example "**/*.ts"; it must not be absolute.');
  }
  if (pattern.split('/').includes('..')) throw new InvalidArgumentsError('pattern must not contain "..": find only looks inside the workspace.');
  // Syntax and size before any file is looked at: the editor's matcher backtracks, so `*****…` or `*a*a*a…` must
  // never reach it as written.
  return checkGlob(pattern).pattern;
}

export const findTool = defineTool({
  name: 'find',
  title: 'Find files',
  description:
    'Files matching a glob (\'**/*.ts\', \'src/*.{js,ts}\'; * stays in a folder, ** spans folders), ' +
    'minus files.exclude.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    pattern: z
      .string()
      .min(1)
      .max(GLOB_LIMITS.maxLength),
    max_results: z.number().int().min(1).optional(),
    work_id: z.string().optional(),
  },
  output: {
    paths: z.array(z.string()),
    truncated: z.boolean(),
    notes: z.array(z.string()).optional(),
  },
  create: (deps: Pick<FileToolDeps, 'workspaces' | 'fs' | 'limits'>) => async (args, { signal, progress }) => {
    const pattern = checkPattern(args.pattern);
    const ws = deps.workspaces.get(args.workspace_id, args.work_id);
    const cap = deps.limits().findResults;
    const max = Math.min(args.max_results ?? cap, cap);
    // The first notification goes when the walk starts, as search and apply_patch do: a client that asked for
    // progress gets one however fast the walk turns out (later ones follow only when it takes a while).
    progress?.(0, undefined, 'reading folders');
    const found = await deps.fs.find(ws.root, pattern, {
      maxResults: max,
      useExcludes: true,
      signal,
      ...(progress ? { onProgress: (folders: number, matched: number) => progress(folders, undefined, `${folders} folder(s) read, ${matched} match(es)`) } : {}),
    });
    // Symlinks inside the root may point outside: keep only results whose real location is inside. When the
    // adapter says which results involve a link, only those need resolving.
    const realRoot = await deps.fs.realpath(ws.root);
    const suspects = found.symlinks ?? found.paths;
    const outside = new Set<string>();
    await mapLimit(suspects, 32, async (rel) => {
      try {
        const real = await deps.fs.realpath(path.join(ws.root, ...rel.split('/')));
        if (!isInside(realRoot, real)) outside.add(rel);
      } catch {
        outside.add(rel);
      }
    });
    // The one name check every tool makes: a listed path is one read and apply_patch take as it is.
    const paths = found.paths.filter((p) => !outside.has(p) && isNameable(p));
    const note = leftOutNamesNote(found.paths.length - outside.size - paths.length + (found.unrepresentable?.length ?? 0));
    return { paths, truncated: found.truncated || found.paths.length > max, ...(note !== undefined ? { notes: [note] } : {}) };
  },
});
