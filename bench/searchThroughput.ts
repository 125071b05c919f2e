/**
 * `search` for a literal over the 50,000-file tree of the find group: our MCP `search` tool (SDK client →
 * McpHttpHost → ripgrep) against the same ripgrep run directly on the same tree, side by side in one run.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { TREE_DIR, ensureTree } from './findThroughput';
import { WORKSPACE_ID, connectHttpClient, startBenchHost } from './host';
import type { BenchGroup, Contender, GroupResult } from './lib';
import { Resources, interleave, ratio, summarize } from './lib';

const RG = '/usr/bin/rg';
/** Matches item4242 and item42420…item42429 in the .ts and .js files (the .md files hold no "item"). */
export const SEARCH_QUERY = 'item4242';
const QUERY = SEARCH_QUERY;
const WARMUP_ROUNDS = 1;
const ROUNDS = 10;

const NAMES = {
  ours: 'ours: SDK client → McpHttpHost `search`',
  rg: `rg -F -i ${QUERY} (child process)`,
} as const;

/** rg with the same matching as ours (literal, case-insensitive, hidden files), its lines counted. */
export function runRgSearch(cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(RG, ['--no-config', '--hidden', '--fixed-strings', '--ignore-case', '--line-number', '--column', `--regexp=${QUERY}`, '--', '.'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.split('\n').filter((l) => l.length > 0).length) : reject(new Error(`rg exited ${code}`))));
  });
}

export const searchThroughput: BenchGroup = async (log) => {
  const res = new Resources();
  try {
    if (!fs.existsSync(RG)) throw new Error(`${RG} not found (Debian package ripgrep)`);
    const marker = ensureTree(log);
    const h = await startBenchHost(TREE_DIR);
    res.add(() => h.stop());
    const client = await connectHttpClient(h.url, h.token);
    res.add(() => client.close());
    const callOurs = async (): Promise<number> => {
      const r = await client.callTool({ name: 'search', arguments: { workspace_id: WORKSPACE_ID, query: QUERY, max_results: 1000 } }, undefined, { timeout: 120_000 });
      const sc = r.structuredContent as { matches: unknown[]; truncated: boolean } | undefined;
      if (!sc || r.isError) throw new Error(`search failed: ${JSON.stringify(r.content).slice(0, 300)}`);
      return sc.matches.length;
    };
    const ours = await callOurs();
    const theirs = await runRgSearch(TREE_DIR);
    const contenders: Contender[] = [
      { name: NAMES.ours, run: callOurs },
      { name: NAMES.rg, run: () => runRgSearch(TREE_DIR) },
    ];
    const samples = await interleave(contenders, { rounds: ROUNDS, perRound: 1, warmupRounds: WARMUP_ROUNDS, onRound: (r, total) => log(`  search: round ${r}/${total}`) });
    const stats = new Map([...samples].map(([k, v]) => [k, summarize(v)]));
    const s = (k: keyof typeof NAMES) => stats.get(NAMES[k]) as ReturnType<typeof summarize>;
    const result: GroupResult = {
      title: `search: literal "${QUERY}" over a 50,000-file tree`,
      description: 'Time of one complete search, client to client. Lower is better.',
      rows: [
        { contender: NAMES.ours, stats: s('ours'), note: `${ours} matching lines` },
        { contender: NAMES.rg, stats: s('rg'), note: `${theirs} matching lines, includes process spawn` },
      ],
      ratios: [ratio('ours / rg', s('ours'), s('rg'), 1.5)],
      notes: [
        `${WARMUP_ROUNDS} warm-up round(s), then ${ROUNDS} measured calls per contender, interleaved; page cache warm. Tree: ${TREE_DIR}, ${marker.files} files.`,
        ours === theirs ? 'Same number of matching lines from both.' : `WARNING: ours ${ours} lines, rg ${theirs} lines.`,
        'Both run the same ripgrep binary; ours adds the MCP round trip over HTTP, JSON output parsing and the confinement check of each reported file.',
      ],
    };
    return result;
  } finally {
    await res.dispose();
  }
};
