import * as path from 'node:path';
import { z } from 'zod';
import { InvalidArgumentsError } from '../../../base/errors';
import type { DiagnosticsFeed, FileReport, FollowedFile } from './diagnosticsFeed';
import { MAX_FOLLOWED_FILES, MAX_FOLLOWED_FILE_BYTES } from './diagnosticsFeed';
import type { DiagnosticSeverity, EditorDiagnostic, FileDiagnostics } from './languageFeatures';
import { checkPath, realRootOf } from '../../../base/paths';
import type { Workspace } from '../../../kernel/workspaces';
import { LocationMapper, featuresOf } from './language';
import { LANGUAGE_LIMITS, rangeSchema } from './languageSchemas';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';
import type { CallHook } from '../../../kernel/callHooks';
import { describeErrorWithStack } from '../../../base/describeError';

const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

export const diagnosticSchema = z.object({
  path: z.string(),
  range: rangeSchema,
  severity: z.enum(SEVERITIES),
  message: z.string(),
  source: z.string().optional(),
  code: z.string().optional(),
});

/** The `diagnostics` field of an applied patch: what was known when it answered. */
export const diagnosticsReportSchema = z.object({
  pending: z.boolean().describe('true: the language servers are still checking the new content; their report comes as diagnostics_update on your next result, or call diagnostics with these paths to wait for it.'),
  items: z.array(diagnosticSchema).describe('What the servers had reported for these files before this edit (may be out of date).'),
  counts: z.object({ error: z.number(), warning: z.number(), information: z.number(), hint: z.number() }),
  truncated: z.boolean(),
  unchecked: z.number().optional().describe('Files written but not followed (beyond the first 20, or over 1 MiB); call diagnostics for them.'),
});

/**
 * `diagnostics_update`, which any result of a session may carry: per edited file, what the language servers
 * reported for the version that edit wrote. Loose here (the shape is in TOOLS.md), because every tool's output schema
 * allows it and tools/list repeats it once per tool.
 */
export const diagnosticsUpdateSchema = z
  .array(z.record(z.string(), z.unknown()))
  .describe('New Problems of files you edited, per file; fix errors you introduced.');

/** Most files of one patch that are followed: opening a tab each for a 1000-file patch would swamp the editor. */
export const MAX_SETTLE_FILES = MAX_FOLLOWED_FILES;

export type DiagnosticView = z.infer<typeof diagnosticSchema>;
export type DiagnosticsReport = z.infer<typeof diagnosticsReportSchema>;
type Counts = DiagnosticsReport['counts'];

const rank = (s: DiagnosticSeverity): number => SEVERITIES.indexOf(s);

function shortMessage(message: string): string {
  return message.length > LANGUAGE_LIMITS.maxMessageChars ? `${message.slice(0, LANGUAGE_LIMITS.maxMessageChars)}…` : message;
}

/** Items as agents see them: most severe first, then by path and position; at most `max`, messages bounded. */
function itemsOf(found: readonly { rel: string; diagnostics: readonly EditorDiagnostic[] }[], max: number = LANGUAGE_LIMITS.maxDiagnostics): { items: DiagnosticView[]; counts: Counts; truncated: boolean } {
  const items: DiagnosticView[] = [];
  const counts: Counts = { error: 0, warning: 0, information: 0, hint: 0 };
  for (const file of found) {
    for (const d of file.diagnostics) {
      counts[d.severity]++;
      items.push({
        path: file.rel,
        range: d.range,
        severity: d.severity,
        message: shortMessage(d.message),
        ...(d.source !== undefined ? { source: d.source } : {}),
        ...(d.code !== undefined ? { code: d.code } : {}),
      });
    }
  }
  items.sort((a, b) => rank(a.severity) - rank(b.severity) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  return { items: items.slice(0, max), counts, truncated: items.length > max };
}

/**
 * The diagnostics of one workspace, as agents see them: only files inside it (by real path too), most severe first,
 * then by path and position; at most `maxDiagnostics`, messages bounded. Counts cover everything found.
 */
export async function workspaceDiagnostics(deps: Pick<EditorToolDeps, 'workspaces' | 'fs'>, ws: Workspace, found: readonly FileDiagnostics[]): Promise<Omit<DiagnosticsReport, 'pending'>> {
  const mapper = new LocationMapper(deps);
  const inside: { rel: string; diagnostics: readonly EditorDiagnostic[] }[] = [];
  for (const file of found) {
    if (file.diagnostics.length === 0) continue;
    const where = await mapper.confinePath(file.path);
    if (!where || where.ws.id !== ws.id) continue;
    inside.push({ rel: where.rel, diagnostics: file.diagnostics });
  }
  return itemsOf(inside);
}

/**
 * The reports an answer carries as `diagnostics_update`: per file, its items (without the path each item would
 * repeat); at most `maxDiagnostics` items over all files.
 */
export function updateOf(reports: readonly FileReport[]): Record<string, unknown>[] {
  let room: number = LANGUAGE_LIMITS.maxDiagnostics;
  return reports.map((r) => {
    const { items, counts, truncated } = itemsOf([{ rel: r.path, diagnostics: r.diagnostics }], room);
    room -= items.length;
    return {
      workspace_id: r.workspace_id,
      path: r.path,
      version: r.version,
      settled: r.settled,
      counts,
      items: items.map(({ path: _path, ...rest }) => rest),
      ...(truncated ? { truncated } : {}),
    };
  });
}

/** A file an applied patch wrote: its path and the version it wrote. */
export interface WrittenFile {
  readonly path: string;
  readonly version: string | undefined;
}

/**
 * The diagnostics apply_patch adds to an applied patch, without waiting: the files it wrote that a language server
 * reports on are handed to the feed (their report comes on the session's next result), and the answer carries what
 * the servers had reported for them so far, with `pending: true`. No field at all when no written file is followed
 * (a file type no server reports on, following off, no editor). Never fails the patch, which is already written and
 * recorded.
 */
/** What following the diagnostics of a patch's files uses (apply_patch's after-commit work). */
export type PatchDiagnosticsDeps = Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs' | 'diagnosticsFeed' | 'logger'>;

export async function patchDiagnostics(deps: PatchDiagnosticsDeps, workspaceId: string, written: readonly WrittenFile[], session?: string): Promise<DiagnosticsReport | undefined> {
  if (!deps.language || written.length === 0) return undefined;
  try {
    const ws = deps.workspaces.get(workspaceId);
    const files: FollowedFile[] = [];
    /** Files a server reports on that are too large to follow. */
    let large = 0;
    for (const f of written.slice(0, MAX_SETTLE_FILES)) {
      if (f.version === undefined) continue;
      const abs = path.join(ws.root, ...f.path.split('/'));
      if (!deps.diagnosticsFeed.follows(abs)) continue;
      if (((await deps.fs.stat(abs).catch(() => undefined))?.size ?? 0) > MAX_FOLLOWED_FILE_BYTES) large++;
      else files.push({ workspace_id: ws.id, path: f.path, abs, version: f.version });
    }
    const followed = deps.diagnosticsFeed.follow(session, files);
    const unchecked = large + Math.max(0, written.length - MAX_SETTLE_FILES);
    const extra = unchecked > 0 ? { unchecked } : {};
    if (followed.length === 0) return large > 0 ? { pending: false, ...itemsOf([]), ...extra } : undefined;
    const known = await deps.language.diagnostics(followed.map((f) => f.abs));
    const report = itemsOf(followed.map((f) => ({ rel: f.path, diagnostics: known.find((k) => k.path === f.abs)?.diagnostics ?? [] })));
    return { pending: true, ...report, ...extra };
  } catch (err) {
    deps.logger.error('[diagnostics] collecting diagnostics after a patch failed', describeErrorWithStack(err));
    return undefined;
  }
}

/** Longest wait one diagnostics call may ask for. */
export const MAX_DIAGNOSTICS_WAIT_MS = 30_000;

export const diagnosticsTool = defineTool({
  name: 'diagnostics',
  title: 'Problems (diagnostics)',
  description:
    'The Problems the language servers report (type errors, lint): for paths, checked and waited for up to wait_ms ' +
    '(settled: they went quiet in time; 0: what is known now), or for all files the editor has checked. Errors first.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    paths: z
      .array(z.string().min(1))
      .max(LANGUAGE_LIMITS.maxPaths)
      .optional(),
    wait_ms: z.number().int().min(0).max(MAX_DIAGNOSTICS_WAIT_MS).optional(),
  },
  output: {
    diagnostics: z.array(diagnosticSchema),
    counts: diagnosticsReportSchema.shape.counts,
    truncated: z.boolean(),
    settled: z.boolean(),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs' | 'diagnosticsFeed' | 'diagnosticsSettleMs'>) => async (args, { signal, session }) => {
    const features = featuresOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    if (args.paths === undefined) {
      if (args.wait_ms !== undefined) throw new InvalidArgumentsError('wait_ms needs paths: the whole-workspace view never waits.', { field: 'wait_ms' });
      const all = await workspaceDiagnostics(deps, ws, await features.diagnostics());
      return { diagnostics: all.items, counts: all.counts, truncated: all.truncated, settled: true };
    }
    if (args.paths.length === 0) throw new InvalidArgumentsError('paths is empty; omit it for the whole workspace.', { field: 'paths' });
    const realRoot = await realRootOf(deps.fs, ws.root);
    const abs: string[] = [];
    // Each path gets the check every path-taking tool makes (a refusal names the path in details.path), before the
    // editor opens it: a FIFO handed to the editor would block its file service (microsoft/vscode#148034).
    for (const p of args.paths) abs.push((await checkPath(deps.fs, ws.root, p, 'file', { realRoot })).abs);
    const deadline = Date.now() + (args.wait_ms ?? Math.max(deps.diagnosticsSettleMs(), 0));
    // Files an edit handed to the feed: their report for the version the edit wrote (waiting for it, bounded).
    const fed = await deps.diagnosticsFeed.await(session, abs, deadline - Date.now(), signal);
    let settled = true;
    const files: FileDiagnostics[] = [];
    const current: string[] = [];
    const check: string[] = [];
    for (const a of abs) {
      const report = fed.get(a);
      if (report === 'pending') {
        settled = false;
        current.push(a);
      } else if (report) {
        settled &&= report.settled;
        files.push({ path: a, diagnostics: report.diagnostics });
      } else if (features.reportsOn(a)) {
        check.push(a);
      } else {
        // No language server reports on this kind of file: nothing to wait for.
        current.push(a);
      }
    }
    if (current.length > 0) files.push(...(await features.diagnostics(current)));
    if (check.length > 0) {
      const checked = await features.settle(check, { timeoutMs: Math.max(0, deadline - Date.now()), requireChange: false, signal });
      settled &&= checked.settled;
      files.push(...checked.files);
    }
    const report = await workspaceDiagnostics(deps, ws, files);
    return { diagnostics: report.items, counts: report.counts, truncated: report.truncated, settled };
  },
});

/**
 * Every answer to a session carries `diagnostics_update`: what the language servers reported, since its last answer,
 * about files it edited (taken once: delivered now).
 */
export function diagnosticsHook(feed: Pick<DiagnosticsFeed, 'take'>): CallHook {
  return {
    after(call) {
      const reports = feed.take(call.session);
      return reports.length > 0 ? { diagnostics_update: updateOf(reports) } : undefined;
    },
  };
}
