// Delivery of a reviewed work, with the git CLI and, when it is on PATH and authenticated, the GitHub CLI (execFile,
// never a shell; hooks off). Each repository's task branch is pushed only when the remote has no such branch or
// already has it at the reviewed commit (`--force-with-lease=<ref>:` expects it absent), never to an integration or
// release branch; then a pull request is found or opened: first through an injected opener (in the editor, the GitHub
// Pull Requests extension), else with `gh`, else a compare URL is given. An uncertain result (a push that failed or
// was cut off) is reconciled by reading the remote again, never by pushing twice; a pull request is always looked
// for before one is opened, so a repeat never opens a second.
import { execFile } from 'node:child_process';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import type { WorkRecord } from '../../../kernel/ledger/schemas';
import type { PullRequestOpener, PullRequestRequest } from '../common/pullRequestOpener';
import { describeError } from '../../../base/describeError';

export type { PullRequestOpener, PullRequestRequest } from '../common/pullRequestOpener';

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_OPENER_TIMEOUT_MS = 20_000;
/** Branches a delivery never pushes to: the integration and release branches. */
const PROTECTED = /^(main|master|trunk|develop|development|release|releases?[/-].*|stable|production|prod|HEAD)$/i;

export interface DeliveryTarget {
  readonly workspace_id: string;
  /** The repository's (or worktree's) top folder. */
  readonly top: string;
  /** The reviewed commit (it must be what the branch points at). */
  readonly commit: string;
  readonly title: string;
  readonly body: string;
}

export interface Delivered {
  readonly workspace_id: string;
  readonly remote: string;
  readonly branch: string;
  readonly commit: string;
  /** `pushed` now, or `already` there (a repeat, or a push whose answer was lost). */
  readonly push: 'pushed' | 'already';
  readonly pr_url?: string;
  /** Set when no pull request could be opened here (no `gh`, or not authenticated): open it in the browser. */
  readonly compare_url?: string;
  /**
   * Why there is no pull request (`gh` missing, unauthenticated, or failed), where it waits (opened in a pull request
   * view for the developer to create), or why the opener was passed over for `gh`.
   */
  readonly pr_note?: string;
}

export interface DeliveryOptions {
  readonly git?: string;
  /** The GitHub CLI's command (default `gh` on PATH). */
  readonly gh?: string;
  /** The environment git and gh run with (default: the extension host's). */
  readonly env?: () => NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** Tried before `gh`: it finds the branch's pull request, or opens one. */
  readonly opener?: PullRequestOpener;
  /** How long the opener may take to answer one question (default 20 s); past it, `gh` is used. */
  readonly openerTimeoutMs?: number;
  readonly log?: Logger;
}

class CliFailure extends Error {
  constructor(
    message: string,
    readonly missing: boolean,
  ) {
    super(message);
  }
}

export class WorkDelivery {
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(private readonly options: DeliveryOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.log ?? silentLogger;
  }

  private exec(cmd: string, args: readonly string[], cwd: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...(this.options.env?.() ?? process.env) };
    for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX']) delete env[k];
    Object.assign(env, { GIT_TERMINAL_PROMPT: '0', GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1', LC_ALL: 'C' });
    return new Promise((resolve, reject) => {
      execFile(cmd, [...args], { cwd, env, timeout: this.timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8', windowsHide: true }, (err, stdout, stderr) => {
        if (err) {
          const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
          reject(new CliFailure(`${cmd} ${args[0] ?? ''} failed: ${String(stderr).trim() || err.message}`, missing));
          return;
        }
        resolve(String(stdout));
      });
    });
  }

  private git(args: readonly string[], cwd: string): Promise<string> {
    return this.exec(this.options.git ?? 'git', ['-c', 'core.hooksPath=/dev/null', ...args], cwd);
  }

  /** The branch HEAD is on, which must point at the reviewed commit. */
  private async branchOf(t: DeliveryTarget): Promise<string> {
    const branch = (await this.git(['symbolic-ref', '-q', '--short', 'HEAD'], t.top).catch(() => '')).trim();
    if (branch === '') throw refuse(t, 'detached', 'HEAD is on no branch, so there is no task branch to push.');
    if (PROTECTED.test(branch)) throw refuse(t, 'protected_branch', `the commit is on ${branch}, an integration or release branch: a delivery pushes task branches only.`, { branch });
    const tip = (await this.git(['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], t.top)).trim();
    if (tip !== t.commit) throw refuse(t, 'branch_moved', `the branch ${branch} is at ${tip.slice(0, 10)}, not at the reviewed commit ${t.commit.slice(0, 10)}.`, { branch });
    return branch;
  }

  private async remoteOf(t: DeliveryTarget): Promise<string> {
    const remotes = (await this.git(['remote'], t.top)).split('\n').map((r) => r.trim()).filter((r) => r !== '');
    const remote = remotes.includes('origin') ? 'origin' : remotes.length === 1 ? remotes[0] : undefined;
    if (remote === undefined) throw refuse(t, 'no_remote', remotes.length === 0 ? 'the repository has no remote to push to.' : `the repository has several remotes and none is "origin" (${remotes.join(', ')}).`);
    return remote;
  }

  /** The commit the remote's branch points at, or undefined when it has none. */
  private async remoteTip(t: DeliveryTarget, remote: string, branch: string): Promise<string | undefined> {
    const out = await this.git(['ls-remote', '--heads', '--', remote, `refs/heads/${branch}`], t.top);
    const line = out.split('\n').find((l) => l.endsWith(`\trefs/heads/${branch}`));
    return line?.split('\t')[0];
  }

  async deliver(targets: readonly DeliveryTarget[]): Promise<Delivered[]> {
    const out: Delivered[] = [];
    for (const t of targets) out.push(await this.deliverOne(t));
    return out;
  }

  private async deliverOne(t: DeliveryTarget): Promise<Delivered> {
    const branch = await this.branchOf(t);
    const remote = await this.remoteOf(t);
    const ref = `refs/heads/${branch}`;
    let push: Delivered['push'];
    const before = await this.remoteTip(t, remote, branch);
    if (before === t.commit) {
      push = 'already';
    } else if (before !== undefined) {
      throw racing(t, remote, branch, before);
    } else {
      try {
        await this.git(['push', '--porcelain', '--no-verify', `--force-with-lease=${ref}:`, '--', remote, `${t.commit}:${ref}`], t.top);
        push = 'pushed';
      } catch (err) {
        // The answer may be lost or the lease broken by a racing push: the remote says which.
        const now = await this.remoteTip(t, remote, branch).catch(() => undefined);
        if (now === t.commit) push = 'already';
        else if (now !== undefined) throw racing(t, remote, branch, now);
        else throw refuse(t, 'push_failed', `the push to ${remote} failed: ${describeError(err)}`, { remote, branch });
      }
    }
    this.log.info(`[works] ${t.workspace_id}: ${branch} at ${t.commit.slice(0, 10)} on ${remote} (${push})`);
    const base = await this.baseBranch(t, remote);
    const pr = await this.pullRequest(t, { top: t.top, remote, branch, base, title: t.title, body: t.body });
    const compare = pr.url === undefined ? await this.compareUrl(t, remote, base, branch) : undefined;
    return {
      workspace_id: t.workspace_id,
      remote,
      branch,
      commit: t.commit,
      push,
      ...(pr.url !== undefined ? { pr_url: pr.url } : {}),
      ...(compare !== undefined ? { compare_url: compare } : {}),
      ...(pr.note !== undefined ? { pr_note: pr.note } : {}),
    };
  }

  /** The remote's default branch (its HEAD as last fetched), else main. */
  private async baseBranch(t: DeliveryTarget, remote: string): Promise<string> {
    const head = (await this.git(['symbolic-ref', '-q', '--short', `refs/remotes/${remote}/HEAD`], t.top).catch(() => '')).trim();
    return head.startsWith(`${remote}/`) ? head.slice(remote.length + 1) : 'main';
  }

  /**
   * The pull request of the branch, found before any is opened (never two): through the opener when it is present
   * and serves the repository, else with gh; or why there is none. The opener's failure (it throws, does not answer
   * in time, or does nothing) falls back to gh, and its reason is kept in the note.
   */
  private async pullRequest(t: DeliveryTarget, req: PullRequestRequest): Promise<{ url?: string; note?: string }> {
    const opener = this.options.opener;
    let passed: string | undefined;
    if (opener?.present() === true) {
      try {
        const found = await this.answerOf(opener.find(req));
        if (found !== undefined) return { url: found };
        const opened = await this.answerOf(opener.open(req));
        if (opened !== undefined && 'url' in opened) return { url: opened.url };
        if (opened !== undefined) return { note: opened.pending };
        passed = `${opener.name} opened no pull request`;
      } catch (err) {
        passed = `${opener.name}: ${describeError(err)}`;
      }
      this.log.info(`[works] ${t.workspace_id}: ${passed}; trying gh`);
    }
    const gh = await this.viaGh(t, req.branch, req.base);
    const note = [passed, gh.note].filter((n) => n !== undefined).join('; ');
    return { ...(gh.url !== undefined ? { url: gh.url } : {}), ...(note !== '' ? { note } : {}) };
  }

  /** The opener's answer, or a failure when it takes longer than its time. */
  private answerOf<T>(answer: Promise<T>): Promise<T> {
    const ms = this.options.openerTimeoutMs ?? DEFAULT_OPENER_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }

  /** The branch's pull request with gh: found (never opened twice), or opened; or why there is none. */
  private async viaGh(t: DeliveryTarget, branch: string, base: string): Promise<{ url?: string; note?: string }> {
    const gh = this.options.gh ?? 'gh';
    try {
      await this.exec(gh, ['auth', 'status'], t.top);
    } catch (err) {
      return { note: err instanceof CliFailure && err.missing ? 'gh is not on PATH' : 'gh is not authenticated (gh auth login)' };
    }
    try {
      const listed = JSON.parse(await this.exec(gh, ['pr', 'list', '--head', branch, '--state', 'all', '--json', 'url', '--limit', '1'], t.top)) as { url?: unknown }[];
      const found = listed.find((p) => typeof p.url === 'string')?.url;
      if (typeof found === 'string') return { url: found };
      const created = await this.exec(gh, ['pr', 'create', '--head', branch, '--base', base, '--title', t.title, '--body', t.body], t.top);
      const url = /https?:\/\/\S+/.exec(created)?.[0];
      return url !== undefined ? { url } : { note: `gh pr create answered no URL: ${created.trim().slice(0, 200)}` };
    } catch (err) {
      return { note: describeError(err) };
    }
  }

  private async compareUrl(t: DeliveryTarget, remote: string, base: string, branch: string): Promise<string | undefined> {
    return compareUrlOf((await this.git(['remote', 'get-url', '--', remote], t.top).catch(() => '')).trim(), base, branch);
  }
}

/** The compare page of `branch` against `base` for a remote URL of a GitHub-style host (https or ssh), else undefined. */
export function compareUrlOf(remoteUrl: string, base: string, branch: string): string | undefined {
  const m = /^(?:https:\/\/(?:[^@/]+@)?|ssh:\/\/git@|git@)([a-z0-9.-]+)(?::\d+)?[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/i.exec(remoteUrl);
  if (!m) return undefined;
  return `https://${m[1]}/${m[2]}/${m[3]}/compare/${encodeURIComponent(base)}...${branch.split('/').map(encodeURIComponent).join('/')}?expand=1`;
}

function refuse(t: DeliveryTarget, reason: string, message: string, extra: Record<string, unknown> = {}): ToolError {
  return new ToolError('UNAVAILABLE', `Not delivered (${t.workspace_id}): ${message}`, { details: { reason, workspace_id: t.workspace_id, ...extra } });
}

function racing(t: DeliveryTarget, remote: string, branch: string, at: string): ToolError {
  return new ToolError('VERSION_CONFLICT', `Not delivered (${t.workspace_id}): ${remote} already has ${branch} at ${at.slice(0, 10)}, not at the reviewed commit ${t.commit.slice(0, 10)}; nothing was pushed over it.`, {
    hint: 'Someone else pushed that branch: look at it before delivering again.',
    details: { reason: 'remote_branch_exists', workspace_id: t.workspace_id, remote, branch, remote_commit: at, commit: t.commit },
  });
}

/** The part of the steering service a delivery needs. */
export interface DeliverySteering {
  requireWork(workId: string): WorkRecord;
  updateWork(workId: string, change: (w: WorkRecord) => WorkRecord): Promise<WorkRecord>;
}

/**
 * Delivers a work's reviewed commit: only once `commit` recorded it for the work's current checkpoint. One push (and
 * pull request) per repository; the outcome is recorded with the work, and a repeat reconciles with the remote.
 */
export async function deliverReviewedWork(steering: DeliverySteering, delivery: WorkDelivery, workId: string): Promise<Delivered[]> {
  const w = steering.requireWork(workId);
  if (w.frozen === undefined || w.committed === undefined || w.committed.digest !== w.frozen.digest) {
    throw new ToolError('PERMISSION_DENIED', `Work ${w.id} has no reviewed commit of its checkpoint to deliver.`, {
      hint: 'Freeze the work, have it approved, and commit it first.',
      details: { reason: 'not_committed', work_id: w.id },
    });
  }
  const targets: DeliveryTarget[] = [];
  const seen = new Set<string>();
  for (const c of w.committed.commits) {
    const repo = w.frozen.repos.find((r) => r.workspace_ids.includes(c.workspace_id));
    if (!repo || seen.has(repo.top)) continue;
    seen.add(repo.top);
    targets.push({ workspace_id: c.workspace_id, top: repo.top, commit: c.commit, title: w.title, body: `Reviewed at ${w.frozen.digest}.` });
  }
  const out = await delivery.deliver(targets);
  const at = new Date().toISOString();
  await steering.updateWork(workId, (cur) => ({
    ...cur,
    delivered: out.map((d) => ({ workspace_id: d.workspace_id, remote: d.remote, branch: d.branch, commit: d.commit, at, ...(d.pr_url !== undefined ? { pr_url: d.pr_url } : {}), ...(d.compare_url !== undefined ? { compare_url: d.compare_url } : {}), ...(d.pr_note !== undefined ? { pr_note: d.pr_note } : {}) })),
  }));
  return out;
}
