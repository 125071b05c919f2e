import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const sha = (b: string | Uint8Array) => 'sha256:' + createHash('sha256').update(b).digest('hex');

describe('inspect tools over a real MCP client', () => {
  let base: string;
  let root: string;
  let root2: string;
  let h: Harness;

  before(async () => {
    base = await makeTree({
      'proj/README.md': '# Demo\n',
      'proj/src/a.ts': 'export const a = 1;\n',
      'proj/src/deep/b.ts': 'export const b = 2;\r\nexport const c = 3;\r\n',
      'proj/src/c.js': 'c\n',
      'proj/bom.txt': '\ufeffhello\n',
      'proj/noeol.txt': 'one\ntwo',
      'proj/bin.dat': new Uint8Array([0x89, 0x50, 0x00, 0x01]),
      'proj/.git/config': '[core]\n',
      'proj/lines.txt': Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
      'other/x.ts': 'x\n',
      'outside/secret.ts': 'secret\n',
    }, 'codespace-inspect-');
    root = path.join(base, 'proj');
    root2 = path.join(base, 'other');
    await fsp.symlink(path.join(base, 'outside'), path.join(root, 'escape'));
    h = await connectHarness([
      { root, name: 'proj', profile: 'exec' },
      { root: root2, name: 'proj', profile: 'read-only' },
    ]);
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('lists the tools with schemas and annotations from the kind table', async () => {
    const { tools } = await h.client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(names.slice(0, 3), ['workspace_info', 'find', 'read']);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, 'object');
      assert.ok(t.outputSchema, `${t.name} has an output schema`);
      assert.ok(t.description && t.description.length > 20);
    }
    const read = tools.find((t) => t.name === 'read');
    assert.equal(read?.annotations?.readOnlyHint, true);
    assert.deepEqual(read?.annotations, { readOnlyHint: true });
    assert.deepEqual(tools.find((t) => t.name === 'apply_patch')?.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: true });
  });

  it('workspace_info without an id lists every folder with unique ids', async () => {
    const r = ok<{ workspaces: { id: string; name: string }[] }>(await h.call('workspace_info', {}));
    assert.deepEqual(r.workspaces.map((w) => w.id), ['proj', 'proj-2']);
  });

  it('workspace_info with an id reports what the server enforces', async () => {
    const r = ok<{ profile: string; execution: { files: { write: { available: boolean } }; network: string }; limits: { read_bytes: number } }>(await h.call('workspace_info', { workspace_id: 'proj' }));
    assert.equal(r.profile, 'exec');
    assert.equal(r.execution.files.write.available, true);
    assert.equal(r.limits.read_bytes, 1024 * 1024);
    const ro = ok<{ execution: { files: { write: { available: boolean } }; process: { available: boolean } } }>(await h.call('workspace_info', { workspace_id: 'proj-2' }));
    assert.equal(ro.execution.files.write.available, false);
    assert.equal(ro.execution.process.available, false);
  });

  it('unknown workspace id → WORKSPACE_NOT_FOUND naming the known ids', async () => {
    const e = toolError(await h.call('read', { workspace_id: 'nope', path: 'README.md' }));
    assert.equal(e.code, 'WORKSPACE_NOT_FOUND');
    assert.deepEqual((e.details as { known: string[] }).known, ['proj', 'proj-2']);
  });

  it('read returns content, the sha256 version, eol and dirty state', async () => {
    const r = ok<{ content: string; version: string; size: number; eol: string; truncated: boolean; dirty_in_editor: boolean; total_lines: number }>(await h.call('read', { workspace_id: 'proj', path: 'src/deep/b.ts' }));
    const bytes = await fsp.readFile(path.join(root, 'src/deep/b.ts'));
    assert.equal(r.content, bytes.toString('utf8'));
    assert.equal(r.version, sha(bytes));
    assert.equal(r.size, bytes.length);
    assert.equal(r.eol, 'crlf');
    assert.equal(r.truncated, false);
    assert.equal(r.dirty_in_editor, false);
    assert.equal(r.total_lines, 2);
  });

  it('read reports a BOM and a missing final newline', async () => {
    const bom = ok<{ content: string; bom: boolean }>(await h.call('read', { workspace_id: 'proj', path: 'bom.txt' }));
    assert.equal(bom.bom, true);
    assert.equal(bom.content, 'hello\n');
    const noeol = ok<{ content: string; total_lines: number }>(await h.call('read', { workspace_id: 'proj', path: 'noeol.txt' }));
    assert.equal(noeol.content, 'one\ntwo');
    assert.equal(noeol.total_lines, 2);
  });

  it('read reports dirty_in_editor from the editor port', async () => {
    h.fs.dirty.add(path.join(root, 'README.md'));
    try {
      const r = ok<{ dirty_in_editor: boolean }>(await h.call('read', { workspace_id: 'proj', path: 'README.md' }));
      assert.equal(r.dirty_in_editor, true);
    } finally {
      h.fs.dirty.clear();
    }
  });

  it('read of a line range returns exactly those lines', async () => {
    const r = ok<{ content: string; start_line: number; end_line: number; total_lines: number }>(await h.call('read', { workspace_id: 'proj', path: 'lines.txt', start_line: 10, end_line: 12 }));
    assert.equal(r.content, 'line 10\nline 11\nline 12\n');
    assert.deepEqual([r.start_line, r.end_line, r.total_lines], [10, 12, 300]);
  });

  it('read truncates at the byte limit on a line boundary and says where to continue', async () => {
    h.limits.current = { ...h.limits.current, readBytes: 1024 };
    try {
      const r = ok<{ content: string; truncated: boolean; next_start_line: number; end_line: number }>(await h.call('read', { workspace_id: 'proj', path: 'lines.txt' }));
      assert.equal(r.truncated, true);
      assert.ok(Buffer.byteLength(r.content) <= 1024);
      assert.ok(r.content.endsWith('\n'));
      assert.equal(r.next_start_line, r.end_line + 1);
      // Following next_start_line reassembles the exact file.
      let whole = r.content;
      let next: number | undefined = r.next_start_line;
      for (let guard = 0; next !== undefined && guard < 50; guard++) {
        const part: { content: string; next_start_line?: number } = ok(await h.call('read', { workspace_id: 'proj', path: 'lines.txt', start_line: next }));
        whole += part.content;
        next = part.next_start_line;
      }
      assert.equal(next, undefined);
      assert.equal(whole, await fsp.readFile(path.join(root, 'lines.txt'), 'utf8'));
    } finally {
      h.limits.current = { ...h.limits.current, readBytes: 1024 * 1024 };
    }
  });

  it('read errors are specific: NOT_FOUND, IS_DIRECTORY, NOT_TEXT with size and version', async () => {
    assert.equal(toolError(await h.call('read', { workspace_id: 'proj', path: 'missing.txt' })).code, 'NOT_FOUND');
    assert.equal(toolError(await h.call('read', { workspace_id: 'proj', path: 'src' })).code, 'IS_DIRECTORY');
    const e = toolError(await h.call('read', { workspace_id: 'proj', path: 'bin.dat' }));
    assert.equal(e.code, 'NOT_TEXT');
    assert.equal(e.details?.size, 4);
    assert.equal(e.details?.version, sha(new Uint8Array([0x89, 0x50, 0x00, 0x01])));
  });

  it('read refuses escapes, including a symlinked folder pointing outside', async () => {
    for (const p of ['../outside/secret.ts', 'escape/secret.ts', '/etc/passwd']) {
      assert.equal(toolError(await h.call('read', { workspace_id: 'proj', path: p })).code, 'PATH_OUTSIDE_WORKSPACE', p);
    }
  });

  it('malformed arguments are INVALID_ARGUMENTS tool errors naming the field; an unknown tool is a protocol error', async () => {
    const missing = toolError(await h.call('read', { workspace_id: 'proj' }));
    assert.equal(missing.code, 'INVALID_ARGUMENTS');
    assert.equal(missing.message, 'path: required, expected a string');
    assert.equal(missing.details?.field, 'path');
    const zero = toolError(await h.call('read', { workspace_id: 'proj', path: 'a', start_line: 0 }));
    assert.equal(zero.message, 'start_line: expected an integer ≥ 1, got 0');
    const reversed = toolError(await h.call('read', { workspace_id: 'proj', path: 'lines.txt', start_line: 5, end_line: 2 }));
    assert.equal(reversed.code, 'INVALID_ARGUMENTS');
    assert.match(reversed.message, /end_line/);
    const bogus = toolError(await h.call('read', { workspace_id: 'proj', path: 'a', bogus: 1 }));
    assert.equal(bogus.code, 'INVALID_ARGUMENTS');
    assert.equal(bogus.details?.field, 'bogus');
    assert.match(bogus.message, /^bogus: unknown argument; the arguments are workspace_id, path, start_line, end_line, start_column, work_id$/);
    await assert.rejects(h.call('no_such_tool', {}), (e: unknown) => e instanceof McpError && e.code === -32602 && e.message.startsWith('MCP error -32602: Unknown tool "no_such_tool". Known tools: workspace_info, '));
  });

  it('find matches globs, honours default excludes, sorts, and never lists through an escaping symlink', async () => {
    const r = ok<{ paths: string[]; truncated: boolean }>(await h.call('find', { workspace_id: 'proj', pattern: '**/*.ts' }));
    assert.deepEqual(r.paths, ['src/a.ts', 'src/deep/b.ts']);
    assert.equal(r.truncated, false);
    const root1 = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: '*.md' }));
    assert.deepEqual(root1.paths, ['README.md']);
    const braces = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: 'src/*.{ts,js}' }));
    assert.deepEqual(braces.paths, ['src/a.ts', 'src/c.js']);
    const git = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: '**/config' }));
    assert.deepEqual(git.paths, []);
  });

  it('find is bounded and says truncated', async () => {
    const r = ok<{ paths: string[]; truncated: boolean }>(await h.call('find', { workspace_id: 'proj', pattern: '**/*', max_results: 2 }));
    assert.equal(r.paths.length, 2);
    assert.equal(r.truncated, true);
  });

  it('takes arguments that look like command-line options as plain patterns and paths', async () => {
    const f = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: '--files' }));
    assert.deepEqual(f.paths, []);
    const g = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: '-*' }));
    assert.deepEqual(g.paths, []);
    assert.equal(toolError(await h.call('read', { workspace_id: 'proj', path: '-rf' })).code, 'NOT_FOUND');
  });

  it('find refuses a malformed or oversized glob as bad arguments naming the problem, never INTERNAL', async () => {
    const refusal = async (pattern: string): Promise<string> => {
      const e = toolError(await h.call('find', { workspace_id: 'proj', pattern }));
      assert.equal(e.code, 'INVALID_ARGUMENTS', `${pattern}: ${e.message}`);
      return e.message;
    };
    assert.match(await refusal('['), /"\[" at column 1 is never closed/);
    assert.match(await refusal('**/*.{'), /"\{" at column 6 is never closed/);
    assert.match(await refusal('src/{a,{b,c}}'), /nesting limit 1/);
    assert.match(await refusal(Array.from({ length: 40 }, () => '*q').join('')), /the limit \(maxStars\) is 32/);
    // A long run of stars is one star: answered, not refused, and quickly.
    const stars = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: `src/${'*'.repeat(990)}.ts` }));
    assert.deepEqual(stars.paths, ['src/a.ts']);
  });

  it('find refuses absolute and escaping patterns (INVALID_ARGUMENTS)', async () => {
    assert.equal(toolError(await h.call('find', { workspace_id: 'proj', pattern: '/etc/*' })).code, 'INVALID_ARGUMENTS');
    assert.equal(toolError(await h.call('find', { workspace_id: 'proj', pattern: '../**' })).code, 'INVALID_ARGUMENTS');
  });

  it('Restricted Mode: every workspace is read-only and says so', async () => {
    h.source.set(h.source.folders().slice(), false);
    try {
      const r = ok<{ trusted: boolean; profile: string; execution: { files: { write: { available: boolean } } }; notes: string[] }>(await h.call('workspace_info', { workspace_id: 'proj' }));
      assert.equal(r.trusted, false);
      assert.equal(r.profile, 'read-only');
      assert.equal(r.execution.files.write.available, false);
      assert.ok(r.notes.some((n) => /Restricted Mode/.test(n)));
      ok(await h.call('read', { workspace_id: 'proj', path: 'README.md' }));
    } finally {
      h.source.set(h.source.folders().slice(), true);
    }
  });

  it('a folder removed from the workspace is no longer reachable', async () => {
    const before = h.source.folders().slice();
    h.source.set([before[0]!]);
    try {
      assert.equal(toolError(await h.call('read', { workspace_id: 'proj-2', path: 'x.ts' })).code, 'WORKSPACE_NOT_FOUND');
    } finally {
      h.source.set(before);
    }
  });
});
