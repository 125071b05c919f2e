// Work baselines and the plumbing of a reviewed commit, with the git CLI (execFile, never a shell). A baseline is
// the workspace folder's content as a git tree object, written through a temporary index (GIT_INDEX_FILE) so the
// user's index, HEAD and working tree are never touched: the tree holds what `git add -A` would stage (tracked
// and untracked files, ignored ones excluded), so changes that commands made appear in the review, not only those
// of patches. The blobs it writes are ordinary loose objects that nothing references (git gc prunes them after
// its expiry, two weeks by default).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import type { WorkTreeChange, WorkTreeRepo } from '../common/workTree';
import type { WorkBaseline } from '../common/steering';
import { describeError } from '../../../base/describeError';

/** How a baseline ref starts; the rest is the tree id. */
export const GIT_TREE_PREFIX = 'git-tree:';
/** Each git call gets at most this long by default (a huge untracked tree is hashed by `git add -A`). */
export const DEFAULT_GIT_TIMEOUT_MS = 60_000;
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
const PATHS_PER_CALL = 200;
const INFO_TTL_MS = 5_000;

interface RepoInfo {
  readonly toplevel: string;
  /** The workspace folder inside the repository: '' at the top, else `sub/dir/`. */
  readonly prefix: string;
  readonly indexFile: string;
  readonly objectFormat: 'sha1' | 'sha256';
}

export interface GitWorkBaselineOptions {
  readonly git?: string;
  readonly timeoutMs?: number;
  readonly log?: Logger;
}

class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(message);
  }
}

function treeOf(baseline: string): string {
  const id = baseline.slice(GIT_TREE_PREFIX.length);
  if (!baseline.startsWith(GIT_TREE_PREFIX) || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(id)) throw new Error(`not a git baseline: ${JSON.stringify(baseline.slice(0, 80))}`);
  return id;
}

function splitZ(out: Buffer): string[] {
  const parts = out.toString('utf8').split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class GitWorkBaseline implements WorkBaseline, WorkTreeRepo {
  private readonly git: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(options: GitWorkBaselineOptions = {}) {
    this.git = options.git ?? 'git';
    this.timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
    this.log = options.log ?? silentLogger;
  }

  private run(args: readonly string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<Buffer> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // What the extension host inherited must not redirect git to another repository or index.
    for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX']) delete env[k];
    Object.assign(env, { GIT_OPTIONAL_LOCKS: '0', GIT_LITERAL_PATHSPECS: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, extraEnv);
    return new Promise((resolve, reject) => {
      execFile(this.git, [...args], { cwd, env, timeout: this.timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'buffer', windowsHide: true }, (err, stdout, stderr) => {
        if (err) {
          const code = typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : undefined;
          const text = Buffer.isBuffer(stderr) ? stderr.toString('utf8').trim() : '';
          const why = (err as { killed?: boolean }).killed ? `timed out after ${this.timeoutMs} ms` : text || err.message;
          reject(new GitError(`git ${args[0] ?? ''} failed: ${why}`, code, text));
          return;
        }
        resolve(stdout);
      });
    });
  }

  private async info(root: string): Promise<RepoInfo | undefined> {
    let out: Buffer;
    try {
      out = await this.run(['rev-parse', '--show-toplevel', '--show-prefix', '--git-path', 'index', '--show-object-format'], root);
    } catch (err) {
      this.log.debug(`[baseline] ${root} is not a git work tree: ${describeError(err)}`);
      return undefined;
    }
    const [toplevel, prefix, index, format] = out.toString('utf8').split('\n');
    if (!toplevel || index === undefined) return undefined;
    return { toplevel, prefix: prefix ?? '', indexFile: path.resolve(root, index), objectFormat: format === 'sha256' ? 'sha256' : 'sha1' };
  }

  /** The repository facts of a root, kept briefly: a commit check asks for them once per file. */
  private readonly infoCache = new Map<string, { at: number; info: RepoInfo }>();

  private async mustInfo(root: string): Promise<RepoInfo> {
    const cached = this.infoCache.get(root);
    if (cached && Date.now() - cached.at < INFO_TTL_MS) return cached.info;
    const info = await this.info(root);
    if (!info) throw new Error(`${root} is not inside a git work tree (or git is not installed)`);
    if (this.infoCache.size > 64) this.infoCache.clear();
    this.infoCache.set(root, { at: Date.now(), info });
    return info;
  }

  private async writeTree(root: string, info: RepoInfo): Promise<string> {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-baseline-'));
    const index = path.join(dir, 'index');
    try {
      // Starting from a copy of the user's index keeps its stat cache (unchanged files are not hashed again) and its
      // skip-worktree entries; `add -A` then makes it match the working tree. The copy is read, never written back.
      let copied = false;
      try {
        await fsp.copyFile(info.indexFile, index);
        // The copy keeps the original's times: git trusts an entry's stat data only when the file is older than the
        // index ("racy git"), so a copy stamped now would take a file edited in the index's second for unchanged.
        const original = await fsp.stat(info.indexFile);
        await fsp.utimes(index, original.atime, original.mtime);
        copied = true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      const env = { GIT_INDEX_FILE: index };
      if (!copied && (await this.head(root)) !== undefined) await this.run(['read-tree', 'HEAD'], root, env);
      await this.run(['add', '-A', '--', '.'], root, env);
      const tree = (await this.run(['write-tree'], root, env)).toString('utf8').trim();
      if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new Error(`git write-tree returned ${JSON.stringify(tree.slice(0, 80))}`);
      return tree;
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  async capture(workspaceRoot: string): Promise<string | undefined> {
    const info = await this.info(workspaceRoot);
    if (!info) return undefined;
    try {
      return `${GIT_TREE_PREFIX}${await this.writeTree(workspaceRoot, info)}`;
    } catch (err) {
      this.log.warn(`[baseline] capturing ${workspaceRoot} failed: ${describeError(err)}`);
      return undefined;
    }
  }

  readable(baseline: string | undefined): boolean {
    if (baseline === undefined) return false;
    try {
      treeOf(baseline);
      return true;
    } catch {
      return false;
    }
  }

  async changes(root: string, baseline: string): Promise<WorkTreeChange[]> {
    const base = treeOf(baseline);
    const info = await this.mustInfo(root);
    const now = await this.writeTree(root, info);
    const args = ['diff-tree', '-r', '-z', '--raw', '--no-renames', base, now];
    if (info.prefix !== '') args.push('--', info.prefix.replace(/\/$/, ''));
    const parts = splitZ(await this.run(args, info.toplevel));
    const out: WorkTreeChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const meta = parts[i] as string;
      const repoPath = parts[i + 1] as string;
      const m = /^:(\d{6}) (\d{6}) ([0-9a-f]+) ([0-9a-f]+) ([AMDT])/.exec(meta);
      if (!m) throw new Error(`unexpected git diff-tree output ${JSON.stringify(meta.slice(0, 80))}`);
      const [, from, to, fromId, toId, status] = m as unknown as [string, string, string, string, string, string];
      // Submodules (gitlinks) are repositories of their own: not files to review here.
      if (from === '160000' || to === '160000') continue;
      if (!repoPath.startsWith(info.prefix)) continue;
      const kind = status === 'A' ? 'add' : status === 'D' ? 'delete' : 'update';
      // A change of mode (0644 → 0755, a file turned link) is said, and a change of nothing else is marked so.
      const mode = kind === 'update' && from !== to ? { mode: { from, to }, ...(fromId === toId ? { mode_only: true } : {}) } : {};
      out.push({ path: repoPath.slice(info.prefix.length), kind, ...mode });
    }
    return out;
  }

  async baselineContent(root: string, baseline: string, file: string): Promise<Uint8Array | undefined> {
    const base = treeOf(baseline);
    const info = await this.mustInfo(root);
    let id: string;
    try {
      id = (await this.run(['rev-parse', '--verify', '--quiet', `${base}:${info.prefix}${file}`], info.toplevel)).toString('utf8').trim();
    } catch (err) {
      if (err instanceof GitError && err.exitCode === 1) return undefined;
      throw err;
    }
    const type = (await this.run(['cat-file', '-t', id], info.toplevel)).toString('utf8').trim();
    if (type !== 'blob') return undefined;
    return new Uint8Array(await this.run(['cat-file', 'blob', id], info.toplevel));
  }

  async blobId(root: string, bytes: Uint8Array): Promise<string> {
    const info = await this.mustInfo(root);
    return createHash(info.objectFormat).update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
  }

  async stagedPaths(root: string): Promise<string[]> {
    const info = await this.mustInfo(root);
    return splitZ(await this.run(['diff', '--cached', '--no-renames', '--name-only', '-z'], info.toplevel));
  }

  async indexBlobs(root: string, files: readonly string[]): Promise<Map<string, string | undefined>> {
    const info = await this.mustInfo(root);
    const out = new Map<string, string | undefined>(files.map((f) => [f, undefined]));
    for (const part of chunks(files, PATHS_PER_CALL)) {
      for (const line of splitZ(await this.run(['ls-files', '-s', '-z', '--', ...part.map((f) => info.prefix + f)], info.toplevel))) {
        const m = /^\d{6} ([0-9a-f]+) \d\t(.*)$/s.exec(line);
        if (m && (m[2] as string).startsWith(info.prefix)) {
          const f = (m[2] as string).slice(info.prefix.length);
          if (out.has(f)) out.set(f, m[1]);
        }
      }
    }
    return out;
  }

  async head(root: string): Promise<string | undefined> {
    try {
      const id = (await this.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], root)).toString('utf8').trim();
      return id === '' ? undefined : id;
    } catch (err) {
      if (err instanceof GitError && err.exitCode === 1) return undefined;
      throw err;
    }
  }

  async commitBlobs(root: string, commit: string, files: readonly string[]): Promise<Map<string, string | undefined>> {
    if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error(`not a commit id: ${JSON.stringify(commit.slice(0, 80))}`);
    const info = await this.mustInfo(root);
    const out = new Map<string, string | undefined>(files.map((f) => [f, undefined]));
    for (const part of chunks(files, PATHS_PER_CALL)) {
      for (const line of splitZ(await this.run(['ls-tree', '-z', '--full-tree', commit, '--', ...part.map((f) => info.prefix + f)], info.toplevel))) {
        const m = /^\d{6} blob ([0-9a-f]+)\t(.*)$/s.exec(line);
        if (m && (m[2] as string).startsWith(info.prefix)) {
          const f = (m[2] as string).slice(info.prefix.length);
          if (out.has(f)) out.set(f, m[1]);
        }
      }
    }
    return out;
  }

  async commitChangedPaths(root: string, commit: string): Promise<string[]> {
    if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error(`not a commit id: ${JSON.stringify(commit.slice(0, 80))}`);
    const info = await this.mustInfo(root);
    return splitZ(await this.run(['diff-tree', '--no-commit-id', '--no-renames', '-r', '-z', '--name-only', '--root', commit], info.toplevel));
  }

  async toWorkspacePath(root: string, repoPath: string): Promise<string | undefined> {
    const info = await this.mustInfo(root);
    return repoPath.startsWith(info.prefix) ? repoPath.slice(info.prefix.length) : undefined;
  }
}
