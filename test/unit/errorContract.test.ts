import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { z } from 'zod';
import { ERROR_CODES, InvalidArgumentsError } from '../../src/base/errors';
import { defineTool } from '../../src/kernel/tool';
import type { RunningHost } from './helpers/httpFixture';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, removeTree, toolError } from './helpers/workspaceFixture';

/** A tool that refuses its arguments the way core tools do, with and without naming the field. */
const refuser = defineTool({
  name: 'refuse',
  title: 'Refuse',
  description: 'Test tool that refuses its arguments.',
  kind: 'inspect',
  input: { named: z.boolean() },
  output: { never: z.string() },
  create: () => ({ named }) => {
    if (named) throw new InvalidArgumentsError('limit: expected at most 10, got 11', { field: 'limit', hint: 'Ask for fewer.', details: { max: 10 } });
    throw new InvalidArgumentsError('Pass exactly one of a or b.');
  },
});

describe('error contract (MCP 2025-11-25, SEP-1303): bad arguments are tool errors the model can correct', () => {
  let base: string;
  let h: Harness;
  const err = async (tool: string, args: Record<string, unknown>) => toolError(await h.call(tool, args));

  before(async () => {
    base = await makeTree({ 'proj/a.txt': 'a\n' }, 'codespace-errors-');
    h = await connectHarness([{ root: path.join(base, 'proj'), name: 'proj', profile: 'exec' }], { tools: [refuser.create(undefined)] });
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('INVALID_ARGUMENTS is an error code of the contract', () => {
    assert.ok((ERROR_CODES as readonly string[]).includes('INVALID_ARGUMENTS'));
  });

  const cases: [string, string, Record<string, unknown>, string, string][] = [
    ['a negative start_line', 'read', { workspace_id: 'proj', path: 'a.txt', start_line: -3 }, 'start_line', 'start_line: expected an integer ≥ 1, got -3'],
    ['a fractional start_line', 'read', { workspace_id: 'proj', path: 'a.txt', start_line: 1.5 }, 'start_line', 'start_line: expected an integer, got 1.5'],
    ['a number for a path', 'read', { workspace_id: 'proj', path: 5 }, 'path', 'path: expected a string, got 5'],
    ['a missing argument', 'read', { path: 'a.txt' }, 'workspace_id', 'workspace_id: required, expected a string'],
    ['an empty workspace id', 'read', { workspace_id: '', path: 'a.txt' }, 'workspace_id', 'workspace_id: expected a non-empty string, got an empty string'],
    ['a value not in the enum', 'exec_command', { workspace_id: 'proj', command: ['true'], occupancy: 'solo' }, 'occupancy', 'occupancy: expected one of "exclusive", "shared", got "solo"'],
    ['an empty command array', 'exec_command', { workspace_id: 'proj', command: [] }, 'command', 'command: expected at least 1 item(s), got an array of 0 item(s)'],
    ['a NUL byte in an argument (a refinement)', 'exec_command', { workspace_id: 'proj', command: ['echo', 'a\0b'] }, 'command[1]', 'command[1]: Arguments must not contain NUL bytes, got "a\\u0000b"'],
    ['a terminal too tall', 'process_resize', { process_id: 'p1', rows: 5000, cols: 80 }, 'rows', 'rows: expected an integer ≤ 1000, got 5000'],
    ['a version that is not a string', 'apply_patch', { workspace_id: 'proj', patch: 'x', operation_key: 'k', expected_versions: { 'src/a b.ts': 7 } }, 'expected_versions["src/a b.ts"]', 'expected_versions["src/a b.ts"]: expected a string, got 7'],
    ['a boolean given as a string', 'apply_patch', { workspace_id: 'proj', patch: 'x', operation_key: 'k', expected_versions: {}, check_only: 'yes' }, 'check_only', 'check_only: expected a boolean (true or false), got "yes"'],
  ];
  for (const [name, tool, args, field, message] of cases) {
    it(`${tool}: ${name} → "${message}"`, async () => {
      const e = await err(tool, args);
      assert.equal(e.code, 'INVALID_ARGUMENTS');
      assert.equal(e.message, message);
      assert.equal(e.details?.field, field);
      assert.match(e.hint ?? '', new RegExp(`call ${tool} again`));
      assert.doesNotMatch(e.message, /MCP error/);
    });
  }

  it('several problems: each is named, details list them all', async () => {
    const e = await err('read', { workspace_id: 7, start_line: 0 });
    assert.equal(e.message, 'workspace_id: expected a string, got 7; path: required, expected a string; start_line: expected an integer ≥ 1, got 0');
    assert.equal(e.details?.field, 'workspace_id');
    assert.deepEqual((e.details?.problems as { field: string }[]).map((p) => p.field), ['workspace_id', 'path', 'start_line']);
  });

  it('a long string is described by its length, not echoed', async () => {
    const e = await err('read', { workspace_id: 'proj', path: 'a.txt', start_line: 'x'.repeat(10_000) });
    assert.equal(e.message, 'start_line: expected a number, got a string of 10000 characters');
  });

  it('hostile arguments get a bounded message: long keys are cut, at most 10 problems are named', async () => {
    const args: Record<string, unknown> = { workspace_id: 'proj', path: 'a.txt' };
    for (let i = 0; i < 5000; i++) args[`k${i}_${'x'.repeat(1000)}`] = i;
    const e = await err('read', args);
    assert.equal(e.code, 'INVALID_ARGUMENTS');
    assert.ok(e.message.length < 4000, `message of ${e.message.length} characters`);
    assert.match(e.message, /; and 4990 more problem\(s\)$/);
    assert.equal((e.details?.problems as unknown[]).length, 10);
    assert.ok(String(e.details?.field).endsWith('…'));
  });

  it('InvalidArgumentsError from a tool: INVALID_ARGUMENTS with its field, hint and details', async () => {
    const named = await err('refuse', { named: true });
    assert.deepEqual(named, { code: 'INVALID_ARGUMENTS', message: 'limit: expected at most 10, got 11', hint: 'Ask for fewer.', details: { field: 'limit', max: 10 } });
    const plain = await err('refuse', { named: false });
    assert.equal(plain.code, 'INVALID_ARGUMENTS');
    assert.equal(plain.message, 'Pass exactly one of a or b.');
    assert.match(plain.hint ?? '', /call refuse again/);
  });

  it('the error body is text only (no structuredContent for the output schema to reject)', async () => {
    const r = await h.call('read', { workspace_id: 'proj', path: 'a.txt', start_line: -3 });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent, undefined);
  });
});

describe('error contract on the wire (real host over HTTP)', () => {
  let root: string;
  let h: RunningHost;
  let sid: string;
  const headers = () => ({ ...MCP_HEADERS, authorization: `Bearer ${h.token.value}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' });
  const call = async (params: Record<string, unknown>) => {
    const r = await rawRequest(h.port, { headers: headers(), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params }) });
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body) as { result?: { isError?: boolean; content: { text: string }[] }; error?: { code: number; message: string } };
  };

  before(async () => {
    root = await makeTree({ 'a.txt': 'a\n' }, 'codespace-errors-http-');
    h = await startHost(root);
  });
  after(async () => {
    await h.stop();
    await removeTree(root);
  });

  it('initialize advertises tools with listChanged (the operator may turn tool groups off and on)', async () => {
    const r = await rawRequest(h.port, { headers: { ...MCP_HEADERS, authorization: `Bearer ${h.token.value}` }, body: INIT_BODY });
    assert.equal(r.status, 200, r.body);
    sid = r.headers['mcp-session-id'] as string;
    const body = JSON.parse(r.body) as { result: { capabilities: { tools?: { listChanged?: boolean } } } };
    assert.deepEqual(body.result.capabilities.tools, { listChanged: true });
  });

  it('a bad argument is a result with isError and INVALID_ARGUMENTS, not a JSON-RPC error', async () => {
    const r = await call({ name: 'read', arguments: { workspace_id: 'demo', path: 'a.txt', start_line: -3 } });
    assert.equal(r.error, undefined);
    assert.equal(r.result?.isError, true);
    const e = (JSON.parse(r.result?.content[0]?.text ?? '{}') as { error: { code: string; message: string } }).error;
    assert.equal(e.code, 'INVALID_ARGUMENTS');
    assert.equal(e.message, 'start_line: expected an integer ≥ 1, got -3');
  });

  it('an unknown tool stays a protocol error (InvalidParams) whose message carries no "MCP error" prefix', async () => {
    const r = await call({ name: 'no_such_tool', arguments: {} });
    assert.equal(r.error?.code, -32602);
    assert.match(r.error?.message ?? '', /^Unknown tool "no_such_tool"\. Known tools: workspace_info, /);
  });

  it('a huge unknown tool name is not echoed whole', async () => {
    const r = await call({ name: 'x'.repeat(1_000_000), arguments: {} });
    assert.equal(r.error?.code, -32602);
    assert.ok((r.error?.message.length ?? 0) < 1000);
    assert.match(r.error?.message ?? '', /\(1000000 characters\)/);
  });

  it('a malformed tools/call (no tool name) is a protocol error without the prefix either', async () => {
    const r = await call({ arguments: {} });
    assert.ok(r.error, JSON.stringify(r));
    assert.doesNotMatch(r.error.message, /^MCP error/);
  });
});
