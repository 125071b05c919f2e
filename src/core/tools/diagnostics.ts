import * as path from 'node:path';
import { z } from 'zod';
import { InvalidArgumentsError } from '../errors';
import type { DiagnosticSeverity, FileDiagnostics, LanguageFeatures } from '../ports/languageFeatures';
import { checkPath, realRootOf } from '../policy/paths';
import type { Workspace } from '../policy/workspaces';
import { LANGUAGE_LIMITS, LocationMapper, featuresOf, rangeSchema } from './language';
import { defineTool } from './tool';
import type { CoreServices } from './tool';

const SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;

export const diagnosticSchema = z.object({
  path: z.string(),
  range: rangeSchema,
  severity: z.enum(SEVERITIES),
  message: z.string(),
  source: z.string().optional(),
  code: z.string().optional(),
});

export const diagnosticsReportSchema = z.object({
  settled: z.boolean().describe('The language servers re-reported the files and went quiet within the settle limit.'),
  items: z.array(diagnosticSchema),
  counts: z.object({ error: z.number(), warning: z.number(), information: z.number(), hint: z.number() }),
  truncated: z.boolean(),
  unchecked: z.number().optional().describe('Files the patch wrote beyond the first ones checked (a large patch): not waited for; call diagnostics for them.'),
});

/** Most files of one patch whose diagnostics are waited for: opening a tab each for a 1000-file patch would swamp the editor. */
export const MAX_SETTLE_FILES = 20;

export type DiagnosticView = z.infer<typeof diagnosticSchema>;
export type DiagnosticsReport = z.infer<typeof diagnosticsReportSchema>;

/**
 * The diagnostics of one workspace, as agents see them: only files inside it (by real path too), most severe first,
 * then by path and position; at most `maxDiagnostics`, messages bounded. Counts cover everything found.
 */
export async function workspaceDiagnostics(services: CoreServices, ws: Workspace, found: readonly FileDiagnostics[]): Promise<Omit<DiagnosticsReport, 'settled'>> {
  const mapper = new LocationMapper(services);
  const items: DiagnosticView[] = [];
  const counts: Record<DiagnosticSeverity, number> = { error: 0, warning: 0, information: 0, hint: 0 };
  for (const file of found) {
    if (file.diagnostics.length === 0) continue;
    const where = await mapper.confinePath(file.path);
    if (!where || where.ws.id !== ws.id) continue;
    for (const d of file.diagnostics) {
      counts[d.severity]++;
      items.push({
        path: where.rel,
        range: d.range,
        severity: d.severity,
        message: d.message.length > LANGUAGE_LIMITS.maxMessageChars ? `${d.message.slice(0, LANGUAGE_LIMITS.maxMessageChars)}…` : d.message,
        ...(d.source !== undefined ? { source: d.source } : {}),
        ...(d.code !== undefined ? { code: d.code } : {}),
      });
    }
  }
  const rank = (s: DiagnosticSeverity): number => SEVERITIES.indexOf(s);
  items.sort((a, b) => rank(a.severity) - rank(b.severity) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character);
  const truncated = items.length > LANGUAGE_LIMITS.maxDiagnostics;
  return { items: items.slice(0, LANGUAGE_LIMITS.maxDiagnostics), counts, truncated };
}

/** Opens the files, waits for their diagnostics to settle (bounded), and reports them. */
export async function settledDiagnostics(
  services: CoreServices,
  features: LanguageFeatures,
  ws: Workspace,
  abs: readonly string[],
  options: { timeoutMs: number; requireChange: boolean; signal?: AbortSignal },
): Promise<DiagnosticsReport> {
  const { settled, files } = await features.settle(abs, options);
  return { settled, ...(await workspaceDiagnostics(services, ws, files)) };
}

/**
 * The diagnostics apply_patch adds to an applied patch: the touched files (written or added; moved files under
 * their new path), after the language servers re-reported them. Never fails the patch, which is already written and
 * recorded: a failure here only leaves the field out.
 */
export async function patchDiagnostics(services: CoreServices, workspaceId: string, rels: readonly string[], signal?: AbortSignal): Promise<DiagnosticsReport | undefined> {
  const timeoutMs = services.diagnosticsSettleMs();
  if (!services.language || timeoutMs <= 0 || rels.length === 0) return undefined;
  try {
    const ws = services.workspaces.get(workspaceId);
    const abs = rels.slice(0, MAX_SETTLE_FILES).map((rel) => path.join(ws.root, ...rel.split('/')));
    const report = await settledDiagnostics(services, services.language, ws, abs, { timeoutMs, requireChange: true, ...(signal ? { signal } : {}) });
    return rels.length > MAX_SETTLE_FILES ? { ...report, unchecked: rels.length - MAX_SETTLE_FILES } : report;
  } catch (err) {
    services.logger.error('[diagnostics] collecting diagnostics after a patch failed', err instanceof Error ? (err.stack ?? err.message) : String(err));
    return undefined;
  }
}

export const diagnosticsTool = defineTool({
  name: 'diagnostics',
  title: 'Problems (diagnostics)',
  description:
    'The Problems the language servers report (type errors, lint): for paths, opened and waited for (settled: they ' +
    'went quiet in time), or for all files the editor has checked. Errors first.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1),
    paths: z
      .array(z.string().min(1))
      .max(LANGUAGE_LIMITS.maxPaths)
      .optional(),
  },
  output: {
    diagnostics: z.array(diagnosticSchema),
    counts: diagnosticsReportSchema.shape.counts,
    truncated: z.boolean(),
    settled: z.boolean(),
  },
  async handler(args, { services, signal }) {
    const features = featuresOf(services);
    const ws = services.workspaces.get(args.workspace_id);
    if (args.paths === undefined) {
      const all = await workspaceDiagnostics(services, ws, await features.diagnostics());
      return { diagnostics: all.items, counts: all.counts, truncated: all.truncated, settled: true };
    }
    if (args.paths.length === 0) throw new InvalidArgumentsError('paths is empty; omit it for the whole workspace.', { field: 'paths' });
    const realRoot = await realRootOf(services.fs, ws.root);
    const abs: string[] = [];
    // Each path gets the check every path-taking tool makes (a refusal names the path in details.path), before the
    // editor opens it: a FIFO handed to the editor would block its file service (microsoft/vscode#148034).
    for (const p of args.paths) abs.push((await checkPath(services.fs, ws.root, p, 'file', { realRoot })).abs);
    const timeoutMs = Math.max(services.diagnosticsSettleMs(), 0);
    const report = await settledDiagnostics(services, features, ws, abs, { timeoutMs, requireChange: false, signal });
    return { diagnostics: report.items, counts: report.counts, truncated: report.truncated, settled: report.settled };
  },
});
