// The git worktrees of works with isolation "worktree", with the git CLI (execFile, never a shell). Each git
// repository among the window's folders gets one worktree on the work's task branch, placed under the extension's
// storage folder: outside every workspace folder, so the editor's searches and watchers do not see it twice.
// Hooks are off for every call (a post-checkout hook of the repository does not run when a work opens).
import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import type { WorkWorktree, WorktreeDiscard, WorktreeFactory, WorktreeKeptReason, WorktreeRetirement, WorktreeSurvey } from '../common/workTree';
import { isInside } from '../../../base/paths';
import { describeError } from '../../../base/describeError';

const DEFAULT_TIMEOUT_MS = 120_000;
/** A branch name we make: `codespace/<slug>-<id>`; checked again here, since it reaches git's command line. */
const BRANCH = /^codespace\/[a-z0-9][a-z0-9-]{0,60}$/;
/** Most entries one usage walk visits; beyond it the walk stops and the size is what it saw (logged). */
const MAX_WALK_ENTRIES = 2_000_000;

export interface GitWorktreeFactoryOptions {
  /** The folder the worktrees go in (made on first use); must be outside every workspace folder. */
  readonly dir: string;
  readonly git?: string;
  readonly timeoutMs?: number;
  readonly log?: Logger;
}

/** One repository's answer at work_finish. */
type Outcome = { removed: true } | { removed: false; reason: WorktreeKeptReason; detail?: string };

class GitFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number | undefined,
  ) {
    super(message);
  }
}

export class GitWorktreeFactory implements WorktreeFactory {
  private readonly git: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(private readonly options: GitWorktreeFactoryOptions) {
    this.git = options.git ?? 'git';
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.log ?? silentLogger;
  }

  private run(args: readonly string[], cwd: string): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX']) delete env[k];
    Object.assign(env, { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' });
    // Hooks off: opening or removing a work never runs the repository's scripts.
    const argv = ['-c', 'core.hooksPath=/dev/null', ...args];
    return new Promise((resolve, reject) => {
      execFile(this.git, argv, { cwd, env, timeout: this.timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8', windowsHide: true }, (err, stdout, stderr) => {
        if (err) {
          const code = typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : undefined;
          const why = (err as { killed?: boolean }).killed ? `timed out after ${this.timeoutMs} ms` : String(stderr).trim() || err.message;
          reject(new GitFailure(`git ${args[0] ?? ''} failed: ${why}`, code));
          return;
        }
        resolve(String(stdout));
      });
    });
  }

  /** The repository of a folder: its top and the folder's place in it, or undefined outside git. */
  private async repoOf(root: string): Promise<{ top: string; prefix: string } | undefined> {
    try {
      const [top, prefix] = (await this.run(['rev-parse', '--show-toplevel', '--show-prefix'], root)).split('\n');
      return top ? { top, prefix: prefix ?? '' } : undefined;
    } catch {
      return undefined;
    }
  }

  async create(folders: readonly { readonly id: string; readonly root: string }[], opts: { readonly name: string; readonly base?: string }): Promise<WorkWorktree[]> {
    if (!BRANCH.test(opts.name)) throw new Error(`not a task branch name: ${JSON.stringify(opts.name)}`);
    if (opts.base !== undefined && (opts.base === '' || opts.base.startsWith('-') || /[\s\0]/.test(opts.base) || opts.base.length > 200)) {
      throw new InvalidArgumentsError(`base ${JSON.stringify(opts.base.slice(0, 80))} is not a branch, tag or commit name.`, { field: 'base' });
    }
    const workDir = path.join(this.options.dir, opts.name.slice('codespace/'.length));
    for (const f of folders) {
      if (isInside(f.root, this.options.dir)) throw new Error(`the worktree folder ${this.options.dir} is inside the workspace folder ${f.root}`);
    }
    const made: WorkWorktree[] = [];
    const byTop = new Map<string, { top: string; base: string }>();
    const usedNames = new Set<string>();
    try {
      for (const f of folders) {
        const repo = await this.repoOf(f.root);
        if (!repo) continue;
        let wt = byTop.get(repo.top);
        if (!wt) {
          const base = await this.baseOf(repo.top, opts.base, f.id);
          let name = path.basename(repo.top) || 'repo';
          for (let n = 2; usedNames.has(name); n++) name = `${path.basename(repo.top)}-${n}`;
          usedNames.add(name);
          const top = path.join(workDir, name);
          await fsp.mkdir(workDir, { recursive: true });
          await this.run(['worktree', 'add', '--quiet', '-b', opts.name, '--', top, base], repo.top);
          wt = { top: await fsp.realpath(top), base };
          byTop.set(repo.top, wt);
          // Recorded at once, so that a failure further on removes it again.
          made.push({ workspace_id: f.id, root: path.join(wt.top, ...repo.prefix.split('/').filter((p) => p !== '')), top: wt.top, branch: opts.name, base });
          continue;
        }
        made.push({ workspace_id: f.id, root: path.join(wt.top, ...repo.prefix.split('/').filter((p) => p !== '')), top: wt.top, branch: opts.name, base: wt.base });
      }
    } catch (err) {
      await this.remove(made, { branches: true });
      await this.pruneEmpty(workDir);
      if (InvalidArgumentsError.is(err) || ToolError.is(err)) throw err;
      throw new ToolError('UNAVAILABLE', `The work's worktrees could not be created: ${describeError(err)}`, {
        hint: 'Open the work with isolation "shared", or ask the developer to check the repository (the CodeSpace log has details).',
        details: { reason: 'worktree_failed' },
      });
    }
    this.log.info(`[works] ${made.length} worktree(s) on ${opts.name}: ${[...new Set(made.map((m) => m.top))].join(', ')}`);
    return made;
  }

  /** A walk of the folder the worktrees are in: every worktree made, also one being made or left by a failure. */
  async usage(): Promise<number> {
    const seen = new Set<string>();
    let bytes = 0;
    let entries = 0;
    const stack = existsSync(this.options.dir) ? [this.options.dir] : [];
    // Depth first, lstat only: a symbolic link counts as itself, never as what it points to; a hard-linked file once.
    while (stack.length > 0) {
      const dir = stack.pop() as string;
      let names: string[];
      try {
        names = await fsp.readdir(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (++entries > MAX_WALK_ENTRIES) {
          this.log.warn(`[works] stopped measuring the worktrees after ${MAX_WALK_ENTRIES} entries; the size used is what was seen`);
          return bytes;
        }
        const p = path.join(dir, name);
        let st: BigIntStats;
        try {
          st = await fsp.lstat(p, { bigint: true });
        } catch {
          continue;
        }
        if (st.isDirectory()) {
          stack.push(p);
          continue;
        }
        if (st.nlink > 1n) {
          const id = `${st.dev}:${st.ino}`;
          if (seen.has(id)) continue;
          seen.add(id);
        }
        bytes += Number(st.size);
      }
    }
    return bytes;
  }

  async checkoutBytes(folders: readonly { readonly id: string; readonly root: string }[], opts: { readonly base?: string }): Promise<number> {
    const tops = new Map<string, string>();
    for (const f of folders) {
      const repo = await this.repoOf(f.root);
      if (repo && !tops.has(repo.top)) tops.set(repo.top, f.id);
    }
    let bytes = 0;
    for (const [top, id] of tops) bytes += await this.treeBytes(top, await this.baseOf(top, opts.base, id));
    return bytes;
  }

  /** The sum of the blob sizes of a commit's tree (`git ls-tree -r -l`, streamed: a large tree needs no large buffer). */
  private treeBytes(top: string, commit: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
      for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX']) delete env[k];
      const child = spawn(this.git, ['-c', 'core.hooksPath=/dev/null', 'ls-tree', '-r', '-l', '-z', '--full-tree', commit], { cwd: top, env, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let bytes = 0;
      let rest = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), this.timeoutMs);
      const take = (entry: string): void => {
        // "<mode> blob <oid> <size>\t<path>": a gitlink (commit) or a tree has "-" as its size.
        const m = /^\d+ blob [0-9a-f]+ +(\d+)\t/.exec(entry);
        if (m) bytes += Number(m[1]);
      };
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\0');
        rest = parts.pop() ?? '';
        for (const e of parts) take(e);
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < 4096) stderr += chunk;
      });
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code !== 0) {
          reject(new GitFailure(`git ls-tree failed: ${stderr.trim() || `exit ${String(code)}`}`, code ?? undefined));
          return;
        }
        if (rest !== '') take(rest);
        resolve(bytes);
      });
    });
  }

  /** The commit a task branch starts from: `base` (a branch, tag or commit) or HEAD. */
  private async baseOf(top: string, base: string | undefined, workspaceId: string): Promise<string> {
    try {
      return (await this.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `${base ?? 'HEAD'}^{commit}`], top)).trim();
    } catch (err) {
      if (base !== undefined) {
        throw new InvalidArgumentsError(`base ${JSON.stringify(base)} names no commit in the repository of workspace ${workspaceId}.`, {
          field: 'base',
          hint: 'Pass a branch, tag or commit that exists in every repository of the window, or leave base out (HEAD).',
          details: { reason: 'unknown_base', workspace_id: workspaceId },
        });
      }
      if (err instanceof GitFailure && err.exitCode === 1) {
        throw new InvalidArgumentsError(`The repository of workspace ${workspaceId} has no commit yet, so a work cannot branch from it.`, {
          field: 'isolation',
          hint: 'Commit once first, or open the work with isolation "shared".',
          details: { reason: 'unborn_head', workspace_id: workspaceId },
        });
      }
      throw err;
    }
  }

  async retire(worktrees: readonly WorkWorktree[], opts: { readonly folderOf?: (workspaceId: string) => string | undefined } = {}): Promise<WorktreeRetirement[]> {
    const byTop = new Map<string, WorkWorktree>();
    for (const t of worktrees) if (!byTop.has(t.top)) byTop.set(t.top, t);
    const outcomes = new Map<string, Outcome>();
    for (const [top, t] of byTop) {
      let outcome: Outcome;
      try {
        outcome = existsSync(top) ? await this.retireOne(t) : await this.retireGone(t, opts.folderOf?.(t.workspace_id));
      } catch (err) {
        outcome = { removed: false, reason: 'failed', detail: describeError(err) };
      }
      if (outcome.removed) {
        this.log.info(`[works] removed the worktree ${top} and the branch ${t.branch}`);
        await this.pruneEmpty(path.dirname(top));
      }
      else this.log.info(`[works] kept the worktree ${top} and the branch ${t.branch}: ${'reason' in outcome ? outcome.reason : ''}`);
      outcomes.set(top, outcome);
    }
    return worktrees.map((t) => ({ workspace_id: t.workspace_id, ...(outcomes.get(t.top) as Outcome) }));
  }

  /**
   * One worktree and its branch, or nothing when something would be lost: changed or untracked files (ignored ones
   * go with the worktree), or commits on the branch (or a detached HEAD there) that neither the base, another branch
   * nor a remote-tracking ref holds. Nothing is forced: git itself refuses to remove a worktree that changed since.
   */
  private async retireOne(t: WorkWorktree): Promise<Outcome> {
    if (!BRANCH.test(t.branch)) throw new Error(`not a task branch name: ${JSON.stringify(t.branch)}`);
    const main = path.dirname(path.resolve(t.top, (await this.run(['rev-parse', '--git-common-dir'], t.top)).trim()));
    const changed = (await this.run(['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=none'], t.top)).split('\n').filter((l) => l !== '');
    if (changed.length > 0) return { removed: false, reason: 'uncommitted', detail: `${changed.length} changed or untracked file(s)` };
    const tip = await this.tipOf(t.branch, main);
    const unsaved = await this.unsaved(t, ['HEAD', ...(tip !== undefined ? [tip] : [])], t.top);
    if (unsaved !== undefined) return unsaved;
    try {
      await this.run(['worktree', 'remove', '--', t.top], main);
    } catch (err) {
      const why = describeError(err);
      return /modified or untracked|contains modified/i.test(why) ? { removed: false, reason: 'uncommitted', detail: why } : { removed: false, reason: 'failed', detail: why };
    }
    await this.deleteBranch(t.branch, tip, main);
    return { removed: true };
  }

  /** A worktree whose folder is gone (deleted by hand): its stale entry is pruned, then its branch goes as above. */
  private async retireGone(t: WorkWorktree, folder: string | undefined): Promise<Outcome> {
    if (!BRANCH.test(t.branch)) throw new Error(`not a task branch name: ${JSON.stringify(t.branch)}`);
    const repo = folder === undefined ? undefined : await this.repoOf(folder);
    if (!repo) return { removed: false, reason: 'failed', detail: `the worktree folder ${t.top} is no longer there, and its repository is not found` };
    const main = path.dirname(path.resolve(repo.top, (await this.run(['rev-parse', '--git-common-dir'], repo.top)).trim()));
    await this.run(['worktree', 'prune'], main);
    const tip = await this.tipOf(t.branch, main);
    if (tip !== undefined) {
      const unsaved = await this.unsaved(t, [tip], main);
      if (unsaved !== undefined) return unsaved;
    }
    await this.deleteBranch(t.branch, tip, main);
    return { removed: true };
  }

  async survey(worktrees: readonly WorkWorktree[], opts: { readonly folderOf?: (workspaceId: string) => string | undefined } = {}): Promise<WorktreeSurvey[]> {
    const byTop = new Map<string, Promise<WorktreeSurvey>>();
    for (const t of worktrees) if (!byTop.has(t.top)) byTop.set(t.top, this.surveyOne(t, opts.folderOf?.(t.workspace_id)));
    const out: WorktreeSurvey[] = [];
    for (const t of worktrees) out.push({ ...(await (byTop.get(t.top) as Promise<WorktreeSurvey>)), workspace_id: t.workspace_id });
    return out;
  }

  private async surveyOne(t: WorkWorktree, folder: string | undefined): Promise<WorktreeSurvey> {
    const present = existsSync(t.top);
    let changed = 0;
    let untracked = 0;
    if (present) {
      for (const line of (await this.run(['status', '--porcelain', '--untracked-files=all', '--ignore-submodules=none'], t.top)).split('\n')) {
        if (line.startsWith('??')) untracked++;
        else if (line !== '') changed++;
      }
    }
    const main = await this.mainOf(t, folder);
    const tip = main === undefined ? undefined : await this.tipOf(t.branch, main);
    const heads = [...(present ? ['HEAD'] : []), ...(tip !== undefined ? [tip] : [])];
    const unsaved = heads.length === 0 || main === undefined ? 0 : await this.countUnsaved(t, heads, present ? t.top : main);
    return { workspace_id: t.workspace_id, top: t.top, branch: t.branch, present, changed, untracked, unsaved };
  }

  async discard(worktrees: readonly WorkWorktree[], opts: { readonly folderOf?: (workspaceId: string) => string | undefined } = {}): Promise<WorktreeDiscard[]> {
    const byTop = new Map<string, WorkWorktree>();
    for (const t of worktrees) if (!byTop.has(t.top)) byTop.set(t.top, t);
    const outcomes = new Map<string, WorktreeDiscard>();
    for (const [top, t] of byTop) {
      let outcome: WorktreeDiscard;
      try {
        outcome = await this.discardOne(t, opts.folderOf?.(t.workspace_id));
      } catch (err) {
        outcome = { workspace_id: t.workspace_id, removed: false, branch: t.branch, reason: 'failed', detail: describeError(err) };
      }
      if (outcome.removed) await this.pruneEmpty(path.dirname(top));
      if (outcome.removed) this.log.info(`[works] discarded the worktree ${top}; the branch ${t.branch} ${outcome.branch_deleted ? 'is deleted' : `is kept with ${outcome.kept_commits ?? 0} unpushed commit(s)`}`);
      else this.log.info(`[works] kept the worktree ${top} at a discard: ${outcome.reason}${outcome.detail !== undefined ? ` (${outcome.detail})` : ''}`);
      outcomes.set(top, outcome);
    }
    return worktrees.map((t) => ({ ...(outcomes.get(t.top) as WorktreeDiscard), workspace_id: t.workspace_id }));
  }

  /**
   * Forced removal of one worktree (its changed and untracked files go), then the branch by retire's rule. Commits
   * are never lost: the branch stays when it holds unsaved ones, and a detached HEAD holding some keeps the worktree.
   */
  private async discardOne(t: WorkWorktree, folder: string | undefined): Promise<WorktreeDiscard> {
    if (!BRANCH.test(t.branch)) throw new Error(`not a task branch name: ${JSON.stringify(t.branch)}`);
    const main = await this.mainOf(t, folder);
    if (main === undefined) return { workspace_id: t.workspace_id, removed: false, branch: t.branch, reason: 'failed', detail: `the repository of the worktree ${t.top} is not found` };
    if (existsSync(t.top)) {
      const detached = await this.run(['symbolic-ref', '--quiet', 'HEAD'], t.top).then(() => false, () => true);
      if (detached) {
        // Another branch or the task branch holding them is enough: those stay.
        const n = Number((await this.run(['rev-list', '--count', 'HEAD', '--not', t.base, '--branches', '--remotes', '--'], t.top)).trim());
        if (n > 0) return { workspace_id: t.workspace_id, removed: false, branch: t.branch, reason: 'unmerged', detail: `${n} commit(s) on a detached HEAD that no branch or remote-tracking ref holds` };
      }
      try {
        // Twice forced: changed and untracked files go, and a lock does not stop it.
        await this.run(['worktree', 'remove', '--force', '--force', '--', t.top], main);
      } catch (err) {
        // git refuses some worktrees (one with submodules, for one); the folder is ours, under the storage folder.
        if (!isInside(this.options.dir, t.top) || t.top === this.options.dir) throw err;
        await fsp.rm(t.top, { recursive: true, force: true });
      }
    }
    await this.run(['worktree', 'prune'], main);
    const tip = await this.tipOf(t.branch, main);
    if (tip !== undefined) {
      const n = await this.countUnsaved(t, [tip], main);
      if (n > 0) return { workspace_id: t.workspace_id, removed: true, branch: t.branch, branch_deleted: false, kept_commits: n };
    }
    await this.deleteBranch(t.branch, tip, main);
    return { workspace_id: t.workspace_id, removed: true, branch: t.branch, branch_deleted: true };
  }

  /** The main working folder of a worktree's repository: from the worktree, or (its folder gone) from the workspace folder. */
  private async mainOf(t: WorkWorktree, folder: string | undefined): Promise<string | undefined> {
    for (const from of [t.top, folder]) {
      if (from === undefined || !existsSync(from)) continue;
      try {
        return path.dirname(path.resolve(from, (await this.run(['rev-parse', '--git-common-dir'], from)).trim()));
      } catch {
        // Not a repository (any more): the next place.
      }
    }
    return undefined;
  }

  private async countUnsaved(t: WorkWorktree, heads: readonly string[], cwd: string): Promise<number> {
    return Number((await this.run(['rev-list', '--count', ...heads, '--not', t.base, `--exclude=${t.branch}`, '--branches', '--remotes', '--'], cwd)).trim());
  }

  private async tipOf(branch: string, main: string): Promise<string | undefined> {
    try {
      return (await this.run(['rev-parse', '--verify', '--quiet', '--end-of-options', `refs/heads/${branch}^{commit}`], main)).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** `unmerged` when `heads` have commits that neither the base, another branch nor a remote-tracking ref holds. */
  private async unsaved(t: WorkWorktree, heads: readonly string[], cwd: string): Promise<Outcome | undefined> {
    const n = await this.countUnsaved(t, heads, cwd);
    return n > 0 ? { removed: false, reason: 'unmerged', detail: `${n} commit(s) on no other branch or remote-tracking ref` } : undefined;
  }

  /** Only at the tip just checked: a branch that moved since is left alone. */
  private async deleteBranch(branch: string, tip: string | undefined, main: string): Promise<void> {
    if (tip === undefined) return;
    await this.run(['update-ref', '-d', `refs/heads/${branch}`, tip], main);
    await this.run(['config', '--remove-section', `branch.${branch}`], main).catch(() => undefined);
  }

  /**
   * The work's own folder under the worktree folder (and any folder between it and there) once its worktrees are
   * gone: removed when empty, never the worktree folder itself, never a folder that still holds something.
   */
  private async pruneEmpty(from: string): Promise<void> {
    const base = await fsp.realpath(this.options.dir).catch(() => this.options.dir);
    let dir = await fsp.realpath(from).catch(() => from);
    while (dir !== base && isInside(base, dir)) {
      try {
        await fsp.rmdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return;
      }
      dir = path.dirname(dir);
    }
  }

  async remove(worktrees: readonly WorkWorktree[], opts: { readonly branches?: boolean } = {}): Promise<void> {
    const tops = new Map<string, string>();
    for (const t of worktrees) tops.set(t.top, t.branch);
    for (const [top, branch] of tops) {
      try {
        const common = path.resolve(top, (await this.run(['rev-parse', '--git-common-dir'], top)).trim());
        const main = path.dirname(common);
        await this.run(['worktree', 'remove', '--force', '--', top], main);
        await this.pruneEmpty(path.dirname(top));
        if (opts.branches && BRANCH.test(branch)) await this.run(['branch', '-D', '--', branch], main);
      } catch (err) {
        this.log.warn(`[works] could not remove the worktree ${top}: ${describeError(err)}`);
      }
    }
  }
}
