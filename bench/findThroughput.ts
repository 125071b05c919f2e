/**
 * `find **\/*.ts` over a generated 50,000-file tree: our MCP `find` tool (SDK client → McpHttpHost) against
 * `rg --files -g '*.ts'` on the same tree. Diagnostic rows split our cost: the NodeWorkspaceFs walk alone, and the
 * find tool handler in-process (walk + per-result realpath confinement), both without transport.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findTool } from '../src/features/files/common/find';
import { WORKSPACE_ID, benchTool, connectHttpClient, startBenchHost } from './host';
import type { BenchGroup, Contender, GroupResult } from './lib';
import { Resources, interleave, ratio, summarize } from './lib';

/** Where the tree is generated once and reused, by this group and by `npm run bench:editor`. */
export const TREE_DIR = path.join(os.tmpdir(), 'codespace-bench-tree-50k');
const MARKER = '.codespace-bench-tree.json';
const TREE_VERSION = 1;
const FILES = 50_000;
/** Binary folder tree, depth 10: 2^11 - 1 = 2047 folders, root included. */
const DEPTH = 10;
const EXTENSIONS = ['ts', 'js', 'md'] as const;
const RG = '/usr/bin/rg';
const MAX_RESULTS = 100_000;
const WARMUP_ROUNDS = 1;
const ROUNDS = 8;

const NAMES = {
  ours: 'ours: SDK client → McpHttpHost `find`',
  rg: "rg --files -g '*.ts' (child process)",
  walk: 'diag: NodeWorkspaceFs.find in-process (walk only)',
  handler: 'diag: find handler in-process (walk + realpath)',
} as const;

export interface Marker {
  version: number;
  files: number;
  ts: number;
}

/** Relative folder path of folder j in a heap-numbered binary tree (root 0, children 2j+1 and 2j+2). */
function folderPath(j: number): string {
  const parts: string[] = [];
  while (j > 0) {
    const parent = Math.floor((j - 1) / 2);
    parts.push(j === 2 * parent + 1 ? `pkg${parts.length % 5}a` : `mod${parts.length % 5}b`);
    j = parent;
  }
  return parts.reverse().join('/');
}

/** Generates the tree once (deterministic), reusing it when the marker says it is complete and current. */
export function ensureTree(log: (line: string) => void): Marker {
  const markerPath = path.join(TREE_DIR, MARKER);
  try {
    const m = JSON.parse(fs.readFileSync(markerPath, 'utf8')) as Marker;
    if (m.version === TREE_VERSION && m.files === FILES) return m;
  } catch {
    // absent or unreadable: regenerate
  }
  log(`  find: generating ${FILES} files under ${TREE_DIR} (once; reused later)…`);
  const marker = generateTree(TREE_DIR);
  fs.writeFileSync(markerPath, JSON.stringify(marker));
  return marker;
}

/**
 * Writes the deterministic 50,000-file tree into `dir` (emptied first): 2047 folders, a third of the files `.ts`.
 * Returns what it wrote; writes no marker.
 */
export function generateTree(dir: string): Marker {
  fs.rmSync(dir, { recursive: true, force: true });
  const folders = 2 ** (DEPTH + 1) - 1;
  const folderPaths = Array.from({ length: folders }, (_, j) => folderPath(j));
  for (const rel of folderPaths) fs.mkdirSync(path.join(dir, rel), { recursive: true });
  let ts = 0;
  for (let i = 0; i < FILES; i++) {
    const ext = EXTENSIONS[i % EXTENSIONS.length] as string;
    if (ext === 'ts') ts++;
    const rel = folderPaths[i % folders] as string;
    const body = ext === 'md' ? `# Note ${i}\n` : `export const item${i} = ${i};\n`;
    fs.writeFileSync(path.join(dir, rel, `file${String(i).padStart(5, '0')}.${ext}`), body);
  }
  return { version: TREE_VERSION, files: FILES, ts };
}

/** Runs rg and returns the paths it printed (relative, "/"-separated). */
export function runRg(cwd: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(RG, ['--no-config', '--files', '-g', '*.ts'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`rg exited ${code}: ${err.trim()}`));
      const out = Buffer.concat(chunks).toString('utf8');
      resolve(out.split('\n').filter((l) => l.length > 0).map((l) => l.replace(/^\.\//, '')));
    });
  });
}

export const findThroughput: BenchGroup = async (log) => {
  const res = new Resources();
  try {
    if (!fs.existsSync(RG)) throw new Error(`${RG} not found (Debian package ripgrep)`);
    const marker = ensureTree(log);

    const h = await startBenchHost(TREE_DIR, { findResults: MAX_RESULTS });
    res.add(() => h.stop());
    const client = await connectHttpClient(h.url, h.token);
    res.add(() => client.close());
    const signal = new AbortController().signal;

    const callOurs = async (): Promise<string[]> => {
      const r = await client.callTool({ name: 'find', arguments: { workspace_id: WORKSPACE_ID, pattern: '**/*.ts', max_results: MAX_RESULTS } }, undefined, { timeout: 120_000 });
      const sc = r.structuredContent as { paths: string[]; truncated: boolean } | undefined;
      if (!sc || r.isError) throw new Error(`find failed: ${JSON.stringify(r.content).slice(0, 300)}`);
      if (sc.truncated) throw new Error('find truncated its result: raise limits');
      return sc.paths;
    };

    // Counts first (also the first warm-up).
    const oursPaths = await callOurs();
    const rgPaths = await runRg(TREE_DIR);
    const notes: string[] = [
      `Tree: ${TREE_DIR}, ${marker.files} files in ${2 ** (DEPTH + 1) - 1} folders, ${DEPTH} levels deep, ${marker.ts} .ts (generated once, reused via ${MARKER}).`,
      `Counts: ours ${oursPaths.length} paths, rg ${rgPaths.length} paths, generator wrote ${marker.ts} .ts files.`,
    ];
    if (oursPaths.length !== rgPaths.length) {
      const ours = new Set(oursPaths);
      const theirs = new Set(rgPaths);
      const onlyOurs = oursPaths.filter((p) => !theirs.has(p)).slice(0, 3);
      const onlyRg = rgPaths.filter((p) => !ours.has(p)).slice(0, 3);
      notes.push(
        `WARNING: counts differ (ours ${oursPaths.length} vs rg ${rgPaths.length}). rg skips hidden files and honours .gitignore/.ignore/.rgignore; ` +
          `ours honours files.exclude (DEFAULT_EXCLUDES: .git, .svn, .hg, CVS, .DS_Store, Thumbs.db) and includes hidden files. ` +
          `Only in ours: ${JSON.stringify(onlyOurs)}; only in rg: ${JSON.stringify(onlyRg)}.`,
      );
    } else {
      const same = new Set(rgPaths);
      const mismatch = oursPaths.filter((p) => !same.has(p)).length;
      notes.push(mismatch === 0 ? 'Same set of paths from both.' : `WARNING: same count but ${mismatch} paths differ.`);
    }

    const contenders: Contender[] = [
      { name: NAMES.ours, run: callOurs },
      { name: NAMES.rg, run: () => runRg(TREE_DIR) },
      { name: NAMES.walk, run: () => h.services.fs.find(TREE_DIR, '**/*.ts', { maxResults: MAX_RESULTS, useExcludes: true }) },
      { name: NAMES.handler, run: () => benchTool(h.services, findTool).handler({ workspace_id: WORKSPACE_ID, pattern: '**/*.ts', max_results: MAX_RESULTS }, { signal }) },
    ];
    const samples = await interleave(contenders, {
      rounds: ROUNDS,
      perRound: 1,
      warmupRounds: WARMUP_ROUNDS,
      onRound: (r, total) => log(`  find: round ${r}/${total}`),
    });
    const stats = new Map([...samples].map(([k, v]) => [k, summarize(v)]));
    const s = (k: keyof typeof NAMES) => stats.get(NAMES[k]) as ReturnType<typeof summarize>;
    notes.unshift(`${WARMUP_ROUNDS} warm-up round(s), then ${ROUNDS} measured calls per contender, interleaved with a rotating start; page cache warm.`);
    const result: GroupResult = {
      title: "find: '**/*.ts' over a 50,000-file tree",
      description: 'Time of one complete listing, client to client. Lower is better.',
      rows: [
        { contender: NAMES.ours, stats: s('ours'), note: `${oursPaths.length} paths, max_results ${MAX_RESULTS}` },
        { contender: NAMES.rg, stats: s('rg'), note: `${rgPaths.length} paths, includes process spawn` },
        { contender: NAMES.walk, stats: s('walk'), note: 'readdir walk + glob match + sort' },
        { contender: NAMES.handler, stats: s('handler'), note: 'walk + one realpath per result' },
      ],
      ratios: [
        ratio('ours / rg', s('ours'), s('rg'), 2),
        ratio('diag: walk only / rg', s('walk'), s('rg')),
        ratio('diag: handler / walk only (realpath cost)', s('handler'), s('walk')),
        ratio('diag: ours / handler (MCP + HTTP + JSON cost)', s('ours'), s('handler')),
      ],
      notes,
    };
    return result;
  } finally {
    await res.dispose();
  }
};
