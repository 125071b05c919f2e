/**
 * apply_patch throughput: our PatchService (the assembled services: NodeWorkspaceFs, a real FileJournal behind the
 * OperationLedger; validate → mint → atomic temp+rename writes → finish) against `git apply` of the
 * same change as a unified diff, on identical fresh copies every round.
 *  - one 5 MB file, 100 hunks spread over it;
 *  - 200 small files, one edit each.
 * Rounds are interleaved (the starting contender rotates), copies are made outside the timed region, and each
 * result is checked against the expected bytes. A separate run samples the process's memory during one 5 MB apply.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ApplyPatchRequest } from '../src/features/patches/common/patchService';
import { silentLogger } from '../src/base/logger';
import { InMemoryWorkspaceSource } from '../src/kernel/workspaceSource';
import type { Workspace } from '../src/kernel/workspaces';
import { WorkspaceRegistry } from '../src/kernel/workspaces';
import { DEFAULT_LIMITS } from '../src/kernel/limits';
import type { AssembledServices } from '../src/app/assembleServices';
import { assembleServices } from '../src/app/assembleServices';
import { NodeWorkspaceFs } from '../src/kernel/node/nodeWorkspaceFs';
import type { BenchGroup, GroupResult, Ratio, Row } from './lib';
import { Resources, ratio, summarize } from './lib';

const BIG_BYTES = 5 * 1024 * 1024;
const BIG_HUNKS = 100;
const SMALL_FILES = 200;
const TARGET_RATIO = 2;

export interface Case {
  readonly name: string;
  /** Files before the patch (relative path → content). */
  readonly files: Map<string, string>;
  /** Files after the patch. */
  readonly after: Map<string, string>;
  readonly v4a: string;
  readonly gitDiff: string;
  readonly warmup: number;
  readonly rounds: number;
}

export function sha256(s: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(s).digest('hex')}`;
}

function line(i: number): string {
  return `export const value_${String(i).padStart(6, '0')} = 'lorem ipsum dolor sit amet, consectetur';`;
}

/** A change of line `at` (0-based) of `lines`, with 3 lines of context each side, in both patch formats. */
interface Edit {
  readonly at: number;
  readonly replacement: string;
}

function v4aSection(rel: string, lines: readonly string[], edits: readonly Edit[]): string {
  const out = [`*** Update File: ${rel}`];
  for (const e of edits) {
    out.push('@@');
    for (let i = Math.max(0, e.at - 3); i < e.at; i++) out.push(` ${lines[i]}`);
    out.push(`-${lines[e.at]}`, `+${e.replacement}`);
    for (let i = e.at + 1; i < Math.min(lines.length, e.at + 4); i++) out.push(` ${lines[i]}`);
  }
  return out.join('\n');
}

function gitSection(rel: string, lines: readonly string[], edits: readonly Edit[]): string {
  const out = [`diff --git a/${rel} b/${rel}`, `--- a/${rel}`, `+++ b/${rel}`];
  for (const e of edits) {
    const start = Math.max(0, e.at - 3);
    const end = Math.min(lines.length, e.at + 4);
    const n = end - start;
    out.push(`@@ -${start + 1},${n} +${start + 1},${n} @@`);
    for (let i = start; i < end; i++) {
      if (i === e.at) out.push(`-${lines[i]}`, `+${e.replacement}`);
      else out.push(` ${lines[i]}`);
    }
  }
  return out.join('\n');
}

function applyEdits(lines: readonly string[], edits: readonly Edit[]): string {
  const copy = [...lines];
  for (const e of edits) copy[e.at] = e.replacement;
  return `${copy.join('\n')}\n`;
}

export function bigCase(): Case {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < BIG_BYTES; i++) {
    const l = line(i);
    lines.push(l);
    bytes += l.length + 1;
  }
  const step = Math.floor(lines.length / (BIG_HUNKS + 1));
  const edits: Edit[] = [];
  for (let h = 1; h <= BIG_HUNKS; h++) edits.push({ at: h * step, replacement: `${lines[h * step]} // edited ${h}` });
  const rel = 'src/big.ts';
  return {
    name: `5 MB file, ${BIG_HUNKS} hunks`,
    files: new Map([[rel, `${lines.join('\n')}\n`]]),
    after: new Map([[rel, applyEdits(lines, edits)]]),
    v4a: ['*** Begin Patch', v4aSection(rel, lines, edits), '*** End Patch'].join('\n'),
    gitDiff: `${gitSection(rel, lines, edits)}\n`,
    warmup: 2,
    rounds: 10,
  };
}

export function smallCase(): Case {
  const files = new Map<string, string>();
  const after = new Map<string, string>();
  const v4a: string[] = ['*** Begin Patch'];
  const git: string[] = [];
  for (let f = 0; f < SMALL_FILES; f++) {
    const rel = `pkg${Math.floor(f / 20)}/mod_${String(f).padStart(3, '0')}.ts`;
    const lines = Array.from({ length: 30 }, (_, i) => line(f * 100 + i));
    const edits = [{ at: 12, replacement: `${lines[12]} // edited` }];
    files.set(rel, `${lines.join('\n')}\n`);
    after.set(rel, applyEdits(lines, edits));
    v4a.push(v4aSection(rel, lines, edits));
    git.push(gitSection(rel, lines, edits));
  }
  v4a.push('*** End Patch');
  return { name: `${SMALL_FILES} files, 1 edit each`, files, after, v4a: v4a.join('\n'), gitDiff: `${git.join('\n')}\n`, warmup: 2, rounds: 10 };
}

/** The small files of the one-line edit cases, one kind each: 20 lines as such a file has them. */
const SMALL_FILE_LINES: Record<string, (i: number) => string> = {
  txt: (i) => `Line ${i} of the notes, plain text without any structure.`,
  md: (i) => (i === 0 ? '# Notes' : i % 5 === 1 ? '' : `- item ${i}: a short bullet of the list`),
  json: (i) => (i === 0 ? '{' : i === 19 ? '  "last": true' : i === 20 ? '}' : `  "key_${i}": "value ${i}",`),
  ts: (i) => `export const value${i}: number = ${i};`,
  py: (i) => `value_${i} = ${i}  # a module-level constant`,
};

/** A one-line edit (line 10) of a 20-line file of one kind (`txt`, `md`, `json`, `ts`, `py`), as an agent makes it. */
export function oneLineCase(kind: string): Case {
  const make = SMALL_FILE_LINES[kind];
  if (!make) throw new Error(`no small file of kind ${kind}`);
  const count = kind === 'json' ? 21 : 20;
  const lines = Array.from({ length: count }, (_, i) => make(i));
  const rel = `edit/small.${kind}`;
  const target = lines[10] as string;
  const replacement = kind === 'json' ? target.replace('value', 'changed value') : kind === 'md' ? `${target} (edited)` : target.replace(/10/g, '11');
  const edits = [{ at: 10, replacement }];
  return {
    name: `one-line edit of a ${count}-line .${kind}`,
    files: new Map([[rel, `${lines.join('\n')}\n`]]),
    after: new Map([[rel, applyEdits(lines, edits)]]),
    v4a: `*** Begin Patch\n${v4aSection(rel, lines, edits)}\n*** End Patch`,
    gitDiff: `${gitSection(rel, lines, edits)}\n`,
    warmup: 2,
    rounds: 10,
  };
}

/** Replaces `dir` with a fresh copy of the case's files. */
export function populate(dir: string, files: Map<string, string>): void {
  fs.rmSync(dir, { recursive: true, force: true });
  for (const [rel, content] of files) {
    const abs = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

export function verify(dir: string, after: Map<string, string>, who: string): void {
  for (const [rel, content] of after) {
    const got = fs.readFileSync(path.join(dir, ...rel.split('/')), 'utf8');
    if (got !== content) throw new Error(`${who} produced a different ${rel} (${got.length} bytes, expected ${content.length})`);
  }
}

export function gitApply(cwd: string, patchFile: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('git', ['apply', '--whitespace=nowarn', patchFile], { cwd }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`git apply failed: ${stderr || err.message}`));
      else resolve();
    });
  });
}

interface Rig {
  readonly tmp: string;
  readonly oursRoot: string;
  readonly gitRoot: string;
  readonly assembled: AssembledServices;
  readonly ws: Workspace;
  keys: number;
}

async function makeRig(resources: Resources): Promise<Rig> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-patch-')));
  resources.add(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const oursRoot = path.join(tmp, 'ours');
  const gitRoot = path.join(tmp, 'git');
  fs.mkdirSync(oursRoot);
  fs.mkdirSync(gitRoot);
  const workspaces = new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root: oursRoot, name: 'ours', profile: 'write' }]));
  const assembled = await assembleServices({
    workspaces,
    fs: new NodeWorkspaceFs(),
    logger: silentLogger,
    limits: () => DEFAULT_LIMITS,
    storageDir: path.join(tmp, 'storage'),
    env: () => ({}),
    timeoutMs: () => 0,
    lifetime: 'bench',
  });
  resources.add(() => assembled.shutdown());
  return { tmp, oursRoot, gitRoot, assembled, ws: workspaces.list()[0] as Workspace, keys: 0 };
}

function request(rig: Rig, c: Case, checkOnly = false): ApplyPatchRequest {
  const expected: Record<string, string> = {};
  for (const [rel, content] of c.files) expected[rel] = sha256(content);
  return { workspace_id: rig.ws.id, patch: c.v4a, expected_versions: expected, operation_key: `bench-${rig.keys++}`, ...(checkOnly ? { check_only: true } : {}) };
}

async function oursOnce(rig: Rig, c: Case, req: ApplyPatchRequest): Promise<number> {
  const t0 = performance.now();
  const r = await rig.assembled.patches.apply(rig.ws, req);
  const ms = performance.now() - t0;
  const want = req.check_only ? 'checked' : 'applied';
  if (r.status !== want) throw new Error(`PatchService answered ${r.status} (${r.reason ?? ''}) on ${c.name}`);
  return ms;
}

/** Interleaved rounds with fresh copies made outside the timed region. */
async function runCase(rig: Rig, c: Case, log: (l: string) => void): Promise<{ ours: number[]; git: number[]; preview: number[] }> {
  const patchFile = path.join(rig.tmp, 'change.diff');
  fs.writeFileSync(patchFile, c.gitDiff);
  const samples = { ours: [] as number[], git: [] as number[], preview: [] as number[] };
  const contenders: Record<keyof typeof samples, () => Promise<number>> = {
    ours: async () => {
      populate(rig.oursRoot, c.files);
      const req = request(rig, c);
      const ms = await oursOnce(rig, c, req);
      verify(rig.oursRoot, c.after, 'PatchService');
      return ms;
    },
    git: async () => {
      populate(rig.gitRoot, c.files);
      const t0 = performance.now();
      await gitApply(rig.gitRoot, patchFile);
      const ms = performance.now() - t0;
      verify(rig.gitRoot, c.after, 'git apply');
      return ms;
    },
    preview: async () => {
      populate(rig.oursRoot, c.files);
      return oursOnce(rig, c, request(rig, c, true));
    },
  };
  const order = Object.keys(contenders) as (keyof typeof samples)[];
  const total = c.warmup + c.rounds;
  for (let round = 0; round < total; round++) {
    for (let k = 0; k < order.length; k++) {
      const name = order[(round + k) % order.length] as keyof typeof samples;
      const ms = await contenders[name]();
      if (round >= c.warmup) samples[name].push(ms);
    }
    log(`[bench] patch ${c.name}: round ${round + 1}/${total}${round < c.warmup ? ' (warm-up)' : ''}`);
  }
  return samples;
}

/** Samples memoryUsage every 2 ms during one apply of the case; returns growth over the baseline. */
async function memoryDuring(rig: Rig, c: Case): Promise<{ rssMiB: number; heapMiB: number; externalMiB: number; maxRssDeltaMiB: number; samples: number }> {
  populate(rig.oursRoot, c.files);
  const req = request(rig, c);
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const base = process.memoryUsage();
  const maxRssBefore = process.resourceUsage().maxRSS;
  let peak = { rss: base.rss, heap: base.heapUsed, ext: base.external + base.arrayBuffers };
  let samples = 0;
  const sample = (): void => {
    const m = process.memoryUsage();
    samples++;
    peak = { rss: Math.max(peak.rss, m.rss), heap: Math.max(peak.heap, m.heapUsed), ext: Math.max(peak.ext, m.external + m.arrayBuffers) };
  };
  const timer = setInterval(sample, 2);
  try {
    await oursOnce(rig, c, req);
  } finally {
    clearInterval(timer);
  }
  sample();
  const mib = (b: number) => b / 2 ** 20;
  return {
    rssMiB: mib(peak.rss - base.rss),
    heapMiB: mib(peak.heap - base.heapUsed),
    externalMiB: mib(peak.ext - base.external - base.arrayBuffers),
    maxRssDeltaMiB: (process.resourceUsage().maxRSS - maxRssBefore) / 1024,
    samples,
  };
}

export const patchApply: BenchGroup = async (log) => {
  const resources = new Resources();
  try {
    const rig = await makeRig(resources);
    const rows: Row[] = [];
    const ratios: Ratio[] = [];
    const notes: string[] = [];
    const cases = [bigCase(), smallCase()];
    for (const c of cases) {
      const s = await runCase(rig, c, log);
      const ours = summarize(s.ours);
      const git = summarize(s.git);
      const preview = summarize(s.preview);
      rows.push(
        { contender: `ours: PatchService.apply — ${c.name}`, stats: ours, note: `validate, ledger mint, ${c.files.size} atomic write(s), finish; patch ${(c.v4a.length / 1024).toFixed(0)} KiB` },
        { contender: `git apply — ${c.name}`, stats: git, note: `child process per apply (spawn included); diff ${(c.gitDiff.length / 1024).toFixed(0)} KiB` },
        { contender: `diag: check_only preview — ${c.name}`, stats: preview, note: 'parse, read, plan, unified diffs, ledger mint+finish; no file write' },
      );
      ratios.push(ratio(`ours / git apply — ${c.name}`, ours, git, TARGET_RATIO));
    }
    const big = cases[0] as Case;
    const mem = await memoryDuring(rig, big);
    const fileMiB = ((big.files.values().next().value as string).length / 2 ** 20).toFixed(1);
    notes.push(
      `Memory during one ${big.name} apply (${fileMiB} MiB file, ${mem.samples} samples of process.memoryUsage): peak RSS +${mem.rssMiB.toFixed(1)} MiB, ` +
        `peak heapUsed +${mem.heapMiB.toFixed(1)} MiB, peak external+arrayBuffers +${mem.externalMiB.toFixed(1)} MiB over the baseline; ` +
        `resourceUsage().maxRSS grew by ${mem.maxRssDeltaMiB.toFixed(1)} MiB (0 when the process had already peaked higher).`,
      'Copies are made and results verified byte for byte outside the timed region; every round uses a fresh copy and a new operation_key.',
      'Ours appends two fsynced journal records (mint, finish) around the writes; the writes themselves (temp file + rename) are not fsynced, and git apply does not fsync either. Adds and updates are written 8 at a time.',
    );
    return {
      title: 'apply_patch: PatchService vs git apply',
      description: 'Same change, identical fresh copies, interleaved rounds, median wall time per apply.',
      rows,
      ratios,
      notes,
    } satisfies GroupResult;
  } finally {
    await resources.dispose();
  }
};
