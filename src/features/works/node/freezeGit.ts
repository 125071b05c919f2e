// The checkpoints and reviewed commits of frozen works, with the git CLI (execFile, never a shell; hooks off on
// every call). A checkpoint lists HEAD, the index and every working-tree file git sees (tracked, and untracked ones
// not ignored) with its mode, git blob id and sha256, read from disk here; its digest is computed in core
// (core/steering/freeze.ts). The reviewed commit is built in a temporary index (GIT_INDEX_FILE), checked entry by
// entry against the checkpoint, written with commit-tree and moved onto HEAD with a compare-and-swap update-ref:
// the user's index is reset to the new HEAD only after that, and nothing is committed when anything differs.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import { silentLogger } from '../../../base/logger';
import type { CheckpointEntry, CheckpointTarget, RepoCheckpoint, WorkCheckpoints } from '../common/workCheckpoint';
import { repoDigest } from '../common/freeze';
import { describeError } from '../../../base/describeError';

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
/** How deep nested repositories are compared by their own checkpoint (deeper ones are named only). */
const MAX_NESTING = 4;

export interface FreezeGitOptions {
  readonly git?: string;
  readonly timeoutMs?: number;
  readonly log?: Logger;
}

class GitFailure extends Error {}

function splitZ(out: string): string[] {
  const parts = out.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

export class FreezeGit implements WorkCheckpoints {
  private readonly git: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(options: FreezeGitOptions = {}) {
    this.git = options.git ?? 'git';
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.log ?? silentLogger;
  }

  /** What the extension host inherited must not redirect git to another repository or index. */
  private env(extraEnv: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE', 'GIT_PREFIX']) delete env[k];
    return Object.assign(env, { GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' }, extraEnv);
  }

  private run(args: readonly string[], cwd: string, extraEnv: Record<string, string> = {}): Promise<string> {
    const env = this.env(extraEnv);
    return new Promise((resolve, reject) => {
      execFile(this.git, ['-c', 'core.hooksPath=/dev/null', '-c', 'core.quotePath=false', ...args], { cwd, env, timeout: this.timeoutMs, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8', windowsHide: true }, (err, stdout, stderr) => {
        if (err) {
          const why = (err as { killed?: boolean }).killed ? `timed out after ${this.timeoutMs} ms` : String(stderr).trim() || err.message;
          reject(new GitFailure(`git ${args[0] ?? ''} failed: ${why}`));
          return;
        }
        resolve(String(stdout));
      });
    });
  }

  async capture(targets: readonly CheckpointTarget[]): Promise<RepoCheckpoint[]> {
    const byTop = new Map<string, string[]>();
    for (const t of targets) {
      const top = (await this.run(['rev-parse', '--show-toplevel'], t.root)).trim();
      const ids = byTop.get(top);
      if (ids) ids.push(...t.workspace_ids);
      else byTop.set(top, [...t.workspace_ids]);
    }
    const out: RepoCheckpoint[] = [];
    for (const [top, ids] of byTop) out.push(await this.captureOne(top, ids));
    return out;
  }

  private async captureOne(top: string, workspaceIds: readonly string[], depth = 0): Promise<RepoCheckpoint> {
    const format = (await this.run(['rev-parse', '--show-object-format'], top).catch(() => 'sha1')).trim() === 'sha256' ? 'sha256' : 'sha1';
    const head = await this.headOf(top);
    const branch = (await this.run(['symbolic-ref', '-q', '--short', 'HEAD'], top).catch(() => '')).trim() || 'detached';
    const entries: CheckpointEntry[] = [{ kind: 'head', commit: head, branch }];
    const tracked = new Set<string>();
    // path → the index's mode of it (stage 0, else the first stage listed).
    const indexModes = new Map<string, string>();
    for (const line of splitZ(await this.run(['ls-files', '-s', '-z'], top))) {
      const m = /^(\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(line);
      if (!m) continue;
      const p = m[4] as string;
      entries.push({ kind: 'index', path: p, mode: m[1] as string, blob: m[2] as string, stage: Number(m[3]) });
      tracked.add(p);
      if (m[3] === '0' || !indexModes.has(p)) indexModes.set(p, m[1] as string);
    }
    // With core.fileMode=false git ignores the executable bit on disk: the mode it would commit is the index's (a
    // new file's is 100644), so that is the mode recorded, and a bit flipped on disk changes nothing.
    const trustModes = (await this.run(['config', '--type=bool', '--get', 'core.fileMode'], top).catch(() => 'true')).trim() !== 'false';
    const modeOf = (p: string, disk: string): string => {
      if (trustModes || disk === '120000') return disk;
      const indexed = indexModes.get(p);
      return indexed === '100644' || indexed === '100755' ? indexed : '100644';
    };
    const untracked = splitZ(await this.run(['ls-files', '-z', '--others', '--exclude-standard'], top));
    const seen = new Set<string>();
    for (const [p, isUntracked] of [...[...tracked].map((p) => [p, false] as const), ...untracked.map((p) => [p, true] as const)]) {
      if (seen.has(p)) continue;
      seen.add(p);
      const e = await this.fileEntry(top, p, isUntracked, format, depth);
      if (e) entries.push(e.kind === 'file' ? { ...e, mode: modeOf(p, e.mode) } : e);
    }
    const changed = await this.differsFromHead(top, head, entries);
    return { workspace_ids: workspaceIds, top, head, digest: repoDigest(entries), changed, entries };
  }

  private async headOf(top: string): Promise<string> {
    return (await this.run(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], top).catch(() => '')).trim() || 'unborn';
  }

  private async fileEntry(top: string, rel: string, untracked: boolean, format: 'sha1' | 'sha256', depth: number): Promise<CheckpointEntry | undefined> {
    const abs = path.join(top, ...rel.replace(/\/$/, '').split('/'));
    let st;
    try {
      st = await fsp.lstat(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return untracked ? undefined : { kind: 'deleted', path: rel };
      throw err;
    }
    let bytes: Buffer;
    let mode: string;
    if (st.isSymbolicLink()) {
      bytes = Buffer.from(await fsp.readlink(abs), 'utf8');
      mode = '120000';
    } else if (st.isFile()) {
      bytes = await fsp.readFile(abs);
      mode = (st.mode & 0o111) !== 0 ? '100755' : '100644';
    } else if (st.isDirectory()) {
      return (await this.nestedEntry(abs, rel, depth)) ?? { kind: 'other', path: rel };
    } else {
      return { kind: 'other', path: rel };
    }
    const blob = createHash(format).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
    return { kind: 'file', path: rel, mode, blob, sha256: createHash('sha256').update(bytes).digest('hex'), untracked };
  }

  /**
   * A folder git lists as one path: a submodule's checkout or an untracked folder with its own `.git`. Compared by
   * its own checkpoint (HEAD, index, files, untracked files), so moving it to another commit, or any change inside
   * it, changes the outer digest; a folder without a repository of its own (an uninitialised submodule) is named only.
   */
  private async nestedEntry(abs: string, rel: string, depth: number): Promise<CheckpointEntry | undefined> {
    if (depth >= MAX_NESTING) return undefined;
    try {
      await fsp.lstat(path.join(abs, '.git'));
    } catch {
      return undefined;
    }
    let inner: string;
    try {
      inner = (await this.run(['rev-parse', '--show-toplevel'], abs)).trim();
    } catch {
      return undefined;
    }
    // A broken .git makes git answer for the outer repository: that is no nested repository.
    if (path.resolve(inner) !== path.resolve(await fsp.realpath(abs))) return undefined;
    const cp = await this.captureOne(abs, [], depth + 1);
    return { kind: 'repo', path: rel, digest: cp.digest };
  }

  /** Whether the working-tree files differ from HEAD's tree (what a commit would record). */
  private async differsFromHead(top: string, head: string, entries: readonly CheckpointEntry[]): Promise<boolean> {
    return !sameMap(fileMap(entries), head === 'unborn' ? new Map() : await this.treeFiles(top, head));
  }

  async treeFiles(top: string, commit: string): Promise<Map<string, string>> {
    const have = new Map<string, string>();
    for (const line of splitZ(await this.run(['ls-tree', '-r', '-z', '--full-tree', '--end-of-options', commit], top))) {
      const m = /^(\d+) (\w+) ([0-9a-f]+)\t(.*)$/s.exec(line);
      if (m && m[1] !== '160000') have.set(m[4] as string, `${m[1]} ${m[3]}`);
    }
    return have;
  }

  async show(top: string, commit: string, rel: string): Promise<Uint8Array | undefined> {
    const blob = (await this.treeFiles(top, commit)).get(rel)?.split(' ')[1];
    if (blob === undefined) return undefined;
    return new Promise((resolve, reject) => {
      execFile(this.git, ['cat-file', 'blob', blob], { cwd: top, env: this.env(), encoding: 'buffer', maxBuffer: MAX_OUTPUT_BYTES, timeout: this.timeoutMs, windowsHide: true }, (err, stdout) => {
        if (err) reject(new GitFailure(`git cat-file failed: ${err.message}`));
        else resolve(new Uint8Array(stdout));
      });
    });
  }

  async headTrailer(top: string, key: string): Promise<{ commit: string; value: string | undefined } | undefined> {
    const head = await this.headOf(top);
    if (head === 'unborn') return undefined;
    const out = await this.run(['log', '-1', `--format=%(trailers:key=${key},valueonly,separator=%x00)`, head, '--'], top);
    const value = out.split('\0').map((v) => v.trim()).filter((v) => v !== '').pop();
    return { commit: head, value };
  }

  async commit(expected: RepoCheckpoint, message: string): Promise<string> {
    const top = expected.top;
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-freeze-'));
    const env = { GIT_INDEX_FILE: path.join(dir, `index-${randomBytes(4).toString('hex')}`) };
    try {
      if ((await this.headOf(top)) !== expected.head) throw stale(expected, 'HEAD moved');
      await this.run(expected.head === 'unborn' ? ['read-tree', '--empty'] : ['read-tree', expected.head], top, env);
      await this.run(['add', '-A', '--', ':/'], top, env);
      const stagedNow = async (): Promise<Map<string, string>> => {
        const out = new Map<string, string>();
        for (const line of splitZ(await this.run(['ls-files', '-s', '-z'], top, env))) {
          const m = /^(\d+) ([0-9a-f]+) (\d)\t(.*)$/s.exec(line);
          if (m && m[1] !== '160000') out.set(m[4] as string, `${m[1]} ${m[2]}`);
        }
        return out;
      };
      let staged = await stagedNow();
      // With core.fileMode=false, add keeps HEAD's mode; the checkpoint recorded the user's index's (a staged chmod).
      const flips: string[][] = [];
      for (const e of expected.entries) {
        if (e.kind !== 'file' || (e.mode !== '100644' && e.mode !== '100755')) continue;
        const now = staged.get(e.path)?.split(' ')[0];
        if ((now === '100644' || now === '100755') && now !== e.mode) flips.push([e.mode === '100755' ? '--chmod=+x' : '--chmod=-x', e.path]);
      }
      if (flips.length > 0) {
        for (const [flag, p] of flips) await this.run(['update-index', flag as string, '--', p as string], top, env);
        staged = await stagedNow();
      }
      if (!sameMap(fileMap(expected.entries), staged)) throw stale(expected, 'the files changed');
      const tree = (await this.run(['write-tree'], top, env)).trim();
      const commit = (await this.run(['commit-tree', tree, ...(expected.head === 'unborn' ? [] : ['-p', expected.head]), '-m', message], top)).trim();
      await this.run(['update-ref', '-m', 'codespace: reviewed commit', 'HEAD', commit, expected.head === 'unborn' ? '' : expected.head], top);
      // The user's index follows the new HEAD; the working tree is already what was committed.
      await this.run(['reset', '-q'], top);
      this.log.info(`[works] committed ${commit} in ${top}`);
      return commit;
    } catch (err) {
      if (ToolError.is(err)) throw err;
      throw new ToolError('UNAVAILABLE', `The reviewed commit in ${expected.workspace_ids.join(', ')} failed: ${describeError(err)}`, {
        hint: 'Nothing was committed in that repository; the developer can see details in the CodeSpace log.',
        details: { reason: 'commit_failed', workspace_ids: [...expected.workspace_ids] },
      });
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }
}

/** path → `mode blob` of the working-tree files of a listing. */
function fileMap(entries: readonly CheckpointEntry[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of entries) if (e.kind === 'file') m.set(e.path, `${e.mode} ${e.blob}`);
  return m;
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function stale(expected: RepoCheckpoint, why: string): ToolError {
  return new ToolError('REVIEW_STALE', `Not committed in ${expected.workspace_ids.join(', ')}: ${why} since the work was frozen and reviewed.`, {
    hint: 'Reopen the work, freeze it again and have the new digest reviewed.',
    details: { reason: 'changed_since_freeze', changed: [...expected.workspace_ids] },
  });
}
