/**
 * What encoding a large answer costs: a `read_process` answer carrying a 256 KiB page (the page as `structuredContent`
 * and again, as JSON, in its text block), encoded by `jsonBytes` (the extension's encoder, which never builds the
 * answer as one large string) against `Buffer.from(JSON.stringify(answer))` (V8's own serializer, one string of the
 * whole answer). Two kinds of page: log lines, and one long run of a single letter (a flood).
 */
import { jsonBytes } from '../src/mcp/jsonBytes';
import type { BenchGroup, Contender, Row } from './lib';
import { interleave, ratio, summarize } from './lib';

const PAGE = 256 * 1024;

function answer(chunk: string): unknown {
  const structured = { chunk, cursor: 1_048_576, eof: false, output_lost: false, retained_from: 786_432 };
  return { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured } };
}

function logLines(chars: number): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += `[${i}] INFO server listening on port ${3000 + (i % 100)} request id=${((i * 2654435761) >>> 0).toString(16)} "ok"\n`;
  return s.slice(0, chars);
}

export const answerEncoding: BenchGroup = async (log) => {
  const kinds = { 'log lines': answer(logLines(PAGE)), 'one letter': answer('a'.repeat(PAGE)) };
  const contenders: Contender[] = [];
  for (const [kind, value] of Object.entries(kinds)) {
    if (!jsonBytes(value).equals(Buffer.from(JSON.stringify(value), 'utf8'))) throw new Error(`jsonBytes differs from JSON.stringify on ${kind}`);
    contenders.push({ name: `jsonBytes, ${kind}`, run: async () => jsonBytes(value) });
    contenders.push({ name: `Buffer.from(JSON.stringify), ${kind}`, run: async () => Buffer.from(JSON.stringify(value), 'utf8') });
  }
  log('answer encoding: a read_process answer with a 256 KiB page, interleaved…');
  const samples = await interleave(contenders, { rounds: 10, perRound: 20, warmupRounds: 2 });
  const stats = new Map([...samples].map(([name, times]) => [name, summarize(times)]));
  const rows: Row[] = [...stats].map(([contender, s]) => ({ contender, stats: s }));
  return {
    title: 'Answer encoding: a `read_process` answer with a 256 KiB page',
    rows,
    ratios: Object.keys(kinds).map((kind) => ratio(`jsonBytes / JSON.stringify, ${kind}`, stats.get(`jsonBytes, ${kind}`)!, stats.get(`Buffer.from(JSON.stringify), ${kind}`)!)),
    notes: ['Byte for byte the same output (checked before timing). jsonBytes builds no string of 128 KiB or more, so an answer leaves nothing in the old generation of the heap.'],
  };
};
