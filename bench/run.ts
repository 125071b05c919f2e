/**
 * Benchmark runner: `node out/bench/run.js [group…]` (default: every group). Prints Markdown to stdout and writes
 * the same to .bench/results.md. Progress goes to stderr. To add a group, export a BenchGroup from a new module
 * and list it in GROUPS.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findThroughput } from './findThroughput';
import type { BenchGroup } from './lib';
import { Resources, markdownTable, renderGroup } from './lib';
import { patchApply } from './patchApply';
import { processThroughput } from './processThroughput';
import { networkStartup } from './networkStartup';
import { readLatency } from './readLatency';
import { redactionCost } from './redactionCost';
import { sandboxStartup } from './sandboxStartup';
import { sessionTransport } from './sessionTransport';
import { searchThroughput } from './searchThroughput';
import { toolListSize } from './toolListSize';
import { answerEncoding } from './answerEncoding';
import { bridgeStart } from './bridgeStart';

const GROUPS: Record<string, BenchGroup> = {
  read: readLatency,
  find: findThroughput,
  patch: patchApply,
  process: processThroughput,
  session: sessionTransport,
  sandbox: sandboxStartup,
  network: networkStartup,
  search: searchThroughput,
  toollist: toolListSize,
  redact: redactionCost,
  answer: answerEncoding,
  bridgestart: bridgeStart,
};

/** Repository root: out/bench/run.js → ../.. */
const ROOT = path.resolve(__dirname, '..', '..');

function packageVersion(name: string): string {
  try {
    // Read the file directly: a package's "exports" may map `<name>/package.json` elsewhere (the SDK's does).
    const p = path.join(ROOT, 'node_modules', ...name.split('/'), 'package.json');
    return (JSON.parse(fs.readFileSync(p, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function rgVersion(): string {
  try {
    return execFileSync('/usr/bin/rg', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? 'unknown';
  } catch {
    return 'not found';
  }
}

function environment(groups: readonly string[]): string {
  const cpus = os.cpus();
  const rows = [
    ['Date', new Date().toISOString()],
    ['Node', process.version],
    ['Platform', `${os.platform()} ${os.release()} ${os.arch()}`],
    ['CPU', `${cpus[0]?.model.trim() ?? 'unknown'} × ${cpus.length} (available parallelism ${os.availableParallelism()})`],
    ['Load average (1/5/15 min)', os.loadavg().map((x) => x.toFixed(2)).join(' / ')],
    ['Memory', `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB total, ${(os.freemem() / 2 ** 30).toFixed(1)} GiB free`],
    ['@modelcontextprotocol/sdk', packageVersion('@modelcontextprotocol/sdk')],
    ['@modelcontextprotocol/server-filesystem', packageVersion('@modelcontextprotocol/server-filesystem')],
    ['express', packageVersion('express')],
    ['ripgrep', rgVersion()],
    ['Groups', groups.join(', ')],
  ];
  return ['# CodeSpace benchmarks', '', markdownTable(['Environment', ''], rows), '',
    'Shared, noisy machine: compare the ratios within a run, not absolute times across runs.', ''].join('\n');
}

async function main(): Promise<number> {
  const requested = process.argv.slice(2);
  const unknown = requested.filter((g) => !(g in GROUPS));
  if (unknown.length) {
    process.stderr.write(`Unknown group(s): ${unknown.join(', ')}. Known: ${Object.keys(GROUPS).join(', ')}.\n`);
    return 2;
  }
  const names = requested.length ? requested : Object.keys(GROUPS);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const sections: string[] = [environment(names)];
  process.stdout.write(`${sections[0]}\n`);
  let failed = false;
  const started = Date.now();
  for (const name of names) {
    const t0 = Date.now();
    log(`[bench] ${name}…`);
    let section: string;
    try {
      const result = await (GROUPS[name] as BenchGroup)(log);
      section = renderGroup(result);
    } catch (err) {
      failed = true;
      section = `## ${name}\n\nFAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`;
    }
    log(`[bench] ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    sections.push(section);
    process.stdout.write(`${section}\n`);
  }
  const footer = `_Total run time ${((Date.now() - started) / 1000).toFixed(1)} s._\n`;
  sections.push(footer);
  process.stdout.write(footer);
  const outDir = path.join(ROOT, '.bench');
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'results.md'), sections.join('\n'));
  log(`[bench] wrote ${path.join(outDir, 'results.md')}`);
  return failed ? 1 : 0;
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void Resources.disposeAll().finally(() => process.exit(130));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
