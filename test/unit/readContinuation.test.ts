import * as assert from 'node:assert/strict';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

interface ReadResult {
  content: string;
  truncated: boolean;
  start_line: number;
  end_line: number;
  total_lines: number;
  next_start_line?: number;
  next_start_column?: number;
}

const LIMIT = 1024;

describe('read: continuing after a truncation', () => {
  let root: string;
  let h: Harness;

  // One line of 3,000 characters mixing 1-, 2-, 3- and 4-byte characters, so cuts fall at every kind of boundary.
  const long = Array.from({ length: 3000 }, (_, i) => ['a', 'é', '€', '😀'][i % 4]).join('');
  const files = {
    'one-line.txt': long,
    'mixed.txt': `short\n${long}\nafter\n`,
    'many.txt': Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join(''),
  };

  before(async () => {
    root = await makeTree(files);
    h = await connectHarness([{ root, name: 'ws', profile: 'read-only' }]);
    h.limits.current = { ...h.limits.current, readBytes: LIMIT };
  });
  after(async () => {
    await h.close();
    await removeTree(root);
  });

  /** Reads from the start, following next_start_line / next_start_column, and joins what came back. */
  async function readAll(rel: string): Promise<{ text: string; calls: ReadResult[] }> {
    const calls: ReadResult[] = [];
    let args: Record<string, unknown> = {};
    for (let n = 0; n < 100; n++) {
      const r = ok<ReadResult>(await h.call('read', { workspace_id: 'ws', path: rel, ...args }));
      calls.push(r);
      assert.ok(Buffer.byteLength(r.content) <= LIMIT, 'each call stays within the limit');
      if (!r.truncated) return { text: calls.map((c) => c.content).join(''), calls };
      assert.ok(r.next_start_line !== undefined && r.next_start_line <= r.total_lines, `next_start_line ${r.next_start_line} is a line of the file`);
      args = { start_line: r.next_start_line, ...(r.next_start_column !== undefined ? { start_column: r.next_start_column } : {}) };
    }
    assert.fail('did not reach the end');
  }

  for (const rel of Object.keys(files) as (keyof typeof files)[]) {
    it(`reads ${rel} back exactly, piece by piece`, async () => {
      const { text, calls } = await readAll(rel);
      assert.equal(text, files[rel]);
      assert.ok(calls.length > 1, 'the file needed more than one call');
    });
  }

  it('a cut inside a one-line file points into that line, never past the end', async () => {
    const r = ok<ReadResult>(await h.call('read', { workspace_id: 'ws', path: 'one-line.txt' }));
    assert.equal(r.truncated, true);
    assert.equal(r.next_start_line, 1);
    assert.equal(r.end_line, 1);
    assert.equal(long.slice(0, (r.next_start_column as number) - 1), r.content);
  });

  it('refuses a start_column past the end of its line', async () => {
    const e = toolError(await h.call('read', { workspace_id: 'ws', path: 'mixed.txt', start_line: 1, start_column: 50 }));
    assert.equal(e.code, 'INVALID_ARGUMENTS');
    assert.match(e.message, /start_column 50 is past the end of line 1/);
  });
});
