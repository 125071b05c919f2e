/**
 * What credential redaction adds to a `read_process` page: a 1 MiB page of a flood read from the output ring with
 * redaction (readRedacted: the page plus 8 KiB either side, read one character per byte and matched against every
 * secret shape) against the same page read raw. Three kinds of output: log lines, a test runner's lines with non-ASCII
 * marks and names (UTF-8), and one long run of a single letter (the flood `bench:editor` reads, where every position
 * could start a token), and coloured lines (`grep --color=always`: escape sequences around every match).
 */
import { readRedacted } from '../src/features/processes/common/redactedRead';
import { RingBuffer } from '../src/features/processes/common/ringBuffer';
import { SecretRedactor } from '../src/base/secretRedactor';
import type { BenchGroup, Contender, Row } from './lib';
import { interleave, ratio, summarize } from './lib';

const MIB = 1024 * 1024;
const PAGE = MIB;

function logLines(bytes: number): Uint8Array {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `[${i}] INFO server listening on port ${3000 + (i % 100)} request id=${((i * 2654435761) >>> 0).toString(16)} ok\n`;
  return new TextEncoder().encode(s.slice(0, bytes));
}

function testRunnerLines(bytes: number): Uint8Array {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `  ${i % 7 === 0 ? '✗' : '✔'} décodé le fichier nº${i} → résultat attendu (${i % 97} ms)\n`;
  const all = new TextEncoder().encode(s);
  return all.subarray(0, bytes);
}

/** `grep --color=always` / `ls --color` output: SGR codes and erase-line around every match and name. */
function colouredLines(bytes: number): Uint8Array {
  let s = '';
  for (let i = 0; s.length < bytes; i++) {
    s += `\x1b[35m\x1b[Ksrc/file${i % 300}.ts\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K${i}:  const \x1b[01;31m\x1b[Ktoken\x1b[m\x1b[K = read(\x1b[01;34mid${i}\x1b[0m);\n`;
  }
  return new TextEncoder().encode(s.slice(0, bytes));
}

export const redactionCost: BenchGroup = async (log) => {
  const redactor = new SecretRedactor({ enabled: () => true, values: () => [], ownTokens: () => ['own-token-0123456789abcdef'] });
  const kinds = { 'log lines': logLines(3 * MIB), 'test runner, UTF-8': testRunnerLines(3 * MIB), 'one letter': new Uint8Array(3 * MIB).fill(0x61), 'coloured (grep --color)': colouredLines(3 * MIB) };
  const contenders: Contender[] = [];
  for (const [kind, bytes] of Object.entries(kinds)) {
    const ring = new RingBuffer(4 * MIB);
    ring.write(bytes);
    // A page in the middle of what is retained, with output still to come (the held-tail check runs too).
    contenders.push({ name: `redacted page, ${kind}`, run: async () => readRedacted(ring, MIB, PAGE, false, redactor) });
    contenders.push({ name: `raw page, ${kind}`, run: async () => ring.read(MIB, PAGE) });
  }
  log('redaction: 1 MiB pages, redacted and raw, interleaved…');
  const samples = await interleave(contenders, { rounds: 10, perRound: 5, warmupRounds: 2 });
  const stats = new Map([...samples].map(([name, times]) => [name, summarize(times)]));
  const rows: Row[] = [...stats].map(([contender, s]) => ({ contender, stats: s }));
  return {
    title: 'Redaction: what it adds to a 1 MiB `read_process` page',
    rows,
    ratios: Object.keys(kinds).map((kind) => ratio(`redacted / raw, ${kind}`, stats.get(`redacted page, ${kind}`)!, stats.get(`raw page, ${kind}`)!)),
    notes: [`Throughput of redacted reading: ${Object.keys(kinds).map((k) => `${k} ${(1000 / stats.get(`redacted page, ${k}`)!.median).toFixed(0)} MiB/s`).join(', ')}.`],
  };
};
