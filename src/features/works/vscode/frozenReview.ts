import * as path from 'node:path';
import * as vscode from 'vscode';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { WorkCheckpoints } from '../common/workCheckpoint';
import type { WorkFreezer } from '../common/freeze';
import type { Steering } from '../common/steering';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { ReadOnlyDocuments, fromReviewUri, reviewDocuments, toReviewUri } from '../../review/vscode';
import { describeError } from '../../../base/describeError';

/**
 * The developer's review of a frozen work: every file of every repository of the work that differs from the commit
 * it started from (a worktree's base, or HEAD when it was frozen), in one multi-file diff, left side read-only from
 * git (review documents of kind `frozen`), right side the file on disk. The review is bound to the work's digest: Approve and
 * Reject record the developer's review of the digest the review opened with, refused (REVIEW_STALE) when the work
 * changed since. Commit Frozen Work then commits exactly that content in each changed repository, and Deliver
 * Reviewed Work pushes the task branches and opens their pull requests.
 */

export interface FrozenReviewDeps {
  readonly steering: Pick<Steering, 'work' | 'works'>;
  readonly freezer: WorkFreezer;
  readonly checkpoints: WorkCheckpoints;
  /** Pushes a work's reviewed commit and opens its pull requests (src/features/works/node/deliver.ts). */
  readonly deliver: (workId: string) => Promise<readonly { readonly workspace_id: string; readonly branch: string; readonly push: string; readonly pr_url?: string; readonly compare_url?: string; readonly pr_note?: string }[]>;
  readonly log: Logger;
}

/** What the commands return (to a test, or a caller that wants to know). */
export interface FrozenReviewResult {
  readonly ok: boolean;
  /** NOT_FOUND, CANCELLED, NO_CHANGES, NOT_REVIEWED, or a tool error code (INVALID_ARGUMENTS not_frozen, REVIEW_STALE, PERMISSION_DENIED, UNAVAILABLE). */
  readonly code?: string;
  readonly message?: string;
  readonly work_id?: string;
  readonly digest?: string;
  readonly files?: readonly { readonly workspace_id: string; readonly path: string; readonly kind: 'add' | 'update' | 'delete' }[];
  readonly commits?: readonly { readonly workspace_id: string; readonly commit: string }[];
  readonly delivered?: readonly { readonly workspace_id: string; readonly branch: string; readonly push: string; readonly pr_url?: string; readonly compare_url?: string; readonly pr_note?: string }[];
}

/**
 * `codespace-review://frozen.<side>.<commit>/<top as a path>/<file>`: the file at a commit of a repository (side
 * `base`), or nothing (`empty`).
 */
function frozenUri(side: 'base' | 'empty', top: string, rel: string, commit: string): vscode.Uri {
  return toReviewUri({ kind: 'frozen', side, id: commit, path: vscode.Uri.file(path.join(top, ...rel.split('/'))).path });
}

class FrozenFileSystem extends ReadOnlyDocuments {
  /** uri path → the repository top it is in (known from the reviews opened). */
  readonly tops = new Map<string, string>();

  constructor(private readonly checkpoints: WorkCheckpoints) {
    super('CodeSpace: the left side is the file before the work; the work is frozen for review.');
  }

  protected async content(uri: vscode.Uri): Promise<Uint8Array> {
    const ref = fromReviewUri(uri);
    if (ref?.kind === 'frozen' && ref.side === 'empty') return new Uint8Array(0);
    const top = this.tops.get(uri.path);
    if (ref?.kind !== 'frozen' || ref.side !== 'base' || top === undefined || !/^[0-9a-f]{40,64}$/.test(ref.id)) throw vscode.FileSystemError.FileNotFound(uri);
    const rel = path.relative(top, vscode.Uri.file(uri.path).fsPath).split(path.sep).join('/');
    return (await this.checkpoints.show(top, ref.id, rel)) ?? new Uint8Array(0);
  }
}

export function registerFrozenReview(deps: FrozenReviewDeps): vscode.Disposable[] {
  const { steering, freezer, log } = deps;
  const fs = new FrozenFileSystem(deps.checkpoints);
  /** work id → the digest the developer's open review shows. */
  const reviewed = new Map<string, string>();

  const fail = (err: unknown, workId?: string): FrozenReviewResult => {
    const code = ToolError.is(err) ? err.code : err instanceof Error && err.name === 'InvalidArgumentsError' ? 'INVALID_ARGUMENTS' : 'UNAVAILABLE';
    const text = describeError(err);
    void vscode.window.showErrorMessage(`CodeSpace: ${text}`);
    log.info(`[frozen-review] ${code}: ${text}`);
    return { ok: false, code, message: text, ...(workId !== undefined ? { work_id: workId } : {}) };
  };

  const pick = async (arg: unknown, title: string): Promise<string | undefined> => {
    if (typeof arg === 'string' && arg !== '') return arg;
    const frozen = steering.works({ status: 'open' }).filter((w) => w.frozen !== undefined);
    if (frozen.length === 1) return frozen[0]?.id;
    if (frozen.length === 0) {
      void vscode.window.showInformationMessage('CodeSpace: no work is frozen for review (an agent freezes one with work_review).');
      return undefined;
    }
    const choice = await vscode.window.showQuickPick(
      frozen.map((w) => ({ label: visibleString(w.title), description: w.worktrees?.[0]?.branch ?? w.workspace_id, id: w.id })),
      { title, placeHolder: 'Pick a frozen work' },
    );
    return choice?.id;
  };

  const review = async (arg?: unknown): Promise<FrozenReviewResult> => {
    const workId = await pick(arg, 'CodeSpace: review which frozen work?');
    if (workId === undefined) return { ok: false, code: 'CANCELLED' };
    const work = steering.work(workId);
    if (!work) return fail(new Error(`there is no work ${workId}.`), workId);
    let inspected;
    try {
      inspected = await freezer.inspect(workId);
    } catch (err) {
      return fail(err, workId);
    }
    const files: { workspace_id: string; path: string; kind: 'add' | 'update' | 'delete'; top: string; base: string }[] = [];
    for (const { repo, base } of inspected.repos) {
      const before = await deps.checkpoints.treeFiles(repo.top, base);
      const now = new Map<string, string>();
      for (const e of repo.entries) if (e.kind === 'file') now.set(e.path, `${e.mode} ${e.blob}`);
      const id = repo.workspace_ids[0] as string;
      for (const [p, v] of now) if (before.get(p) !== v) files.push({ workspace_id: id, path: p, kind: before.has(p) ? 'update' : 'add', top: repo.top, base });
      for (const p of before.keys()) if (!now.has(p)) files.push({ workspace_id: id, path: p, kind: 'delete', top: repo.top, base });
    }
    reviewed.set(workId, inspected.digest);
    const out = files.map((f) => ({ workspace_id: f.workspace_id, path: f.path, kind: f.kind }));
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`CodeSpace: the frozen work "${visibleString(work.title)}" changes nothing.`);
      return { ok: true, code: 'NO_CHANGES', work_id: workId, digest: inspected.digest, files: out };
    }
    const resources = files
      .sort((a, b) => a.workspace_id.localeCompare(b.workspace_id) || a.path.localeCompare(b.path))
      .map((f) => {
        const left = frozenUri('base', f.top, f.path, f.base);
        fs.tops.set(left.path, f.top);
        const right = f.kind === 'delete' ? frozenUri('empty', f.top, f.path, f.base) : vscode.Uri.file(path.join(f.top, ...f.path.split('/')));
        return [right, left, right] as [vscode.Uri, vscode.Uri, vscode.Uri];
      });
    await vscode.commands.executeCommand('vscode.changes', `CodeSpace frozen work: ${visibleString(work.title).slice(0, 80)} (${inspected.digest.slice(7, 19)})`, resources);
    log.info(`[frozen-review] review of ${workId} at ${inspected.digest} opened: ${files.length} file(s)`);
    if (typeof arg !== 'string') {
      void vscode.window.showInformationMessage(`CodeSpace: reviewing "${visibleString(work.title)}" frozen at ${inspected.digest.slice(7, 19)}.`, 'Approve', 'Reject').then((answer) => {
        if (answer === 'Approve' || answer === 'Reject') void decide(workId, answer === 'Approve');
      });
    }
    return { ok: true, work_id: workId, digest: inspected.digest, files: out };
  };

  const decide = async (arg: unknown, approved: unknown, findings?: unknown): Promise<FrozenReviewResult> => {
    const workId = await pick(arg, 'CodeSpace: approve which frozen work?');
    if (workId === undefined) return { ok: false, code: 'CANCELLED' };
    const digest = reviewed.get(workId);
    if (digest === undefined) return fail(new Error(`open the review of work ${workId} first (Review Frozen Work…): an approval is of what you saw.`), workId);
    try {
      const r = await freezer.review(workId, digest, approved !== false, { developer: true }, typeof findings === 'string' ? findings : undefined);
      void vscode.window.showInformationMessage(`CodeSpace: ${r.approved ? 'approved' : 'rejected'} the work at ${digest.slice(7, 19)}.`);
      return { ok: true, work_id: workId, digest };
    } catch (err) {
      return fail(err, workId);
    }
  };

  const commit = async (arg?: unknown): Promise<FrozenReviewResult> => {
    const workId = await pick(arg, 'CodeSpace: commit which reviewed work?');
    if (workId === undefined) return { ok: false, code: 'CANCELLED' };
    try {
      const r = await freezer.commit(workId);
      void vscode.window.showInformationMessage(`CodeSpace: committed the reviewed work: ${r.commits.map((c) => `${c.workspace_id} ${c.commit.slice(0, 10)}`).join(', ') || 'nothing changed'}.`);
      return { ok: true, work_id: workId, ...(r.digest !== undefined ? { digest: r.digest } : {}), commits: r.commits };
    } catch (err) {
      return fail(err, workId);
    }
  };

  const deliver = async (arg?: unknown): Promise<FrozenReviewResult> => {
    const workId = await pick(arg, 'CodeSpace: deliver which committed work?');
    if (workId === undefined) return { ok: false, code: 'CANCELLED' };
    try {
      const out = await deps.deliver(workId);
      for (const d of out) log.info(`[frozen-review] ${workId} ${d.workspace_id}: ${d.branch} ${d.push}; ${d.pr_url ?? d.compare_url ?? d.pr_note ?? ''}`);
      const links = out.map((d) => `${d.workspace_id}: ${d.pr_url ?? `${d.compare_url ?? `${d.branch} pushed`} (${d.pr_note ?? 'no pull request'})`}`).join('; ');
      const first = out.find((d) => d.pr_url !== undefined || d.compare_url !== undefined);
      const open = first?.pr_url !== undefined ? 'Open Pull Request' : first?.compare_url !== undefined ? 'Open Compare Page' : undefined;
      void (open ? vscode.window.showInformationMessage(`CodeSpace: delivered. ${links}`, open) : vscode.window.showInformationMessage(`CodeSpace: delivered. ${links}`)).then((answer) => {
        const url = first?.pr_url ?? first?.compare_url;
        if (answer !== undefined && url !== undefined) void vscode.env.openExternal(vscode.Uri.parse(url));
      });
      return { ok: true, work_id: workId, delivered: out.map((d) => ({ ...d })) };
    } catch (err) {
      return fail(err, workId);
    }
  };

  return [
    fs,
    vscode.commands.registerCommand(COMMANDS.deliverWork, deliver),
    reviewDocuments.serve(['frozen'], fs),
    vscode.commands.registerCommand(COMMANDS.reviewFrozenWork, review),
    vscode.commands.registerCommand(COMMANDS.approveFrozenWork, (arg?: unknown, findings?: unknown) => decide(arg, true, findings)),
    vscode.commands.registerCommand(COMMANDS.rejectFrozenWork, (arg?: unknown, findings?: unknown) => decide(arg, false, findings)),
    vscode.commands.registerCommand(COMMANDS.commitFrozenWork, commit),
  ];
}
