/**
 * Every tool, walked with hostile arguments: wrong types, missing and extra fields, huge, negative and non-integer
 * numbers, NUL bytes, traversal, over-long paths, broken globs, huge argv. Each call must come back as an answer
 * the agent can act on: a result, or `isError` with a specific code. `INTERNAL` (a bug) and protocol errors (the
 * model cannot see what to fix) fail the test. The tool list is read from the server, so a new tool without an
 * entry below fails here too.
 */
import * as assert from 'node:assert/strict';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';

const HUGE = 'x'.repeat(1024 * 1024);
const LONG_PATH = `${'d'.repeat(200)}/`.repeat(25) + 'f.txt';

/** Hostile values for any field, by the JSON type its schema declares. */
function hostileValues(schema: { type?: string | string[] }): unknown[] {
  const generic: unknown[] = [null, {}, [], true, { nested: { deep: [1, 2, 3] } }];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return [...generic, 42, '', HUGE, 'a\u0000b', '../../etc/passwd', '/etc/passwd', '~/.ssh/id_rsa', '%2e%2e/x', 'C:\\x', LONG_PATH, '\ud800', '-e', '--pre=sh'];
    case 'integer':
    case 'number':
      return [...generic, '1', -1, 0, 1.5, -1e308, 1e308, Number.MAX_SAFE_INTEGER + 2];
    case 'boolean':
      return [...generic, 'true', 1];
    case 'array':
      return [...generic, 'ls', [], [42], [HUGE], Array.from({ length: 20_000 }, () => 'a'), ['a\u0000b'], [''], [null]];
    case 'object':
      return [...generic, 'x', { [HUGE.slice(0, 5000)]: HUGE.slice(0, 10) }, { 'a.txt': 42 }];
    default:
      return generic;
  }
}

describe('every tool with hostile arguments', function () {
  this.timeout(120_000);
  let world: PatchWorld;
  let processId: string;
  let exitedId: string;
  let base: Record<string, Record<string, unknown>>;

  before(async () => {
    world = await openPatchWorld({ 'a.txt': 'alpha\n', 'src/b.ts': 'export {};\n' }, { profile: 'exec', contentSearch: new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit' }) });
    const started = (await world.call('exec_command', { workspace_id: WS_ID, command: ['cat'], occupancy: 'shared' })).structuredContent as { process_id: string };
    processId = started.process_id;
    // read_process long-polls up to its cap (30 s) on a live process for a huge wait_ms: read an exited one.
    const done = (await world.call('exec_command', { workspace_id: WS_ID, command: ['true'], occupancy: 'shared' })).structuredContent as { process_id: string };
    for (let i = 0; i < 200; i++) {
      const st = (await world.call('process_status', { process_id: done.process_id })).structuredContent as { state: string };
      if (st.state === 'exited') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    exitedId = done.process_id;
    const work = await world.harness.services.steering.openWork(WS_ID, 'hostile');
    base = {
      workspace_info: { workspace_id: WS_ID },
      find: { workspace_id: WS_ID, pattern: '**/*', max_results: 10 },
      read: { workspace_id: WS_ID, path: 'a.txt', start_line: 1, end_line: 1 },
      search: { workspace_id: WS_ID, query: 'alpha', regex: false, case_sensitive: false, include: ['**/*.txt'], exclude: ['src/**'], max_results: 10, context_lines: 1 },
      apply_patch: { workspace_id: WS_ID, patch: v4a('*** Update File: a.txt', '@@', '-alpha', '+beta'), expected_versions: { 'a.txt': sha256('alpha\n') }, operation_key: 'hostile', check_only: true },
      operation_status: { operation_key: 'hostile' },
      approval_create: { workspace_id: WS_ID, tool: 'exec_command', request: { command: ['true'], cwd: 'src' } },
      approval_resolve: { approval_id: 'ap_0000000000000000', decision: 'deny', note: 'no' },
      operation_resume: { approval_id: 'ap_0000000000000000', wait_ms: 0 },
      exec_command: { workspace_id: WS_ID, command: ['true'], tty: false, cwd: 'src' },
      read_process: { process_id: exitedId, cursor: 0, max_bytes: 10, wait_ms: 0 },
      process_status: { process_id: processId },
      write_stdin: { process_id: processId, data: 'x' },
      process_resize: { process_id: processId, rows: 10, cols: 10 },
      terminate_process: { process_id: 'p_0000000000000000' },
      work_open: { workspace_id: WS_ID, title: 'hostile arguments' },
      steer_status: { work_id: work.id },
      steer_claim_next: { work_id: work.id },
      steer_complete: { instruction_id: 'ins_0000000000000000', status: 'done', note: 'n' },
      work_review: { work_id: work.id, action: 'reopen' },
      work_finish: { work_id: work.id },
      // The editor tools: without an editor in this host they answer UNAVAILABLE once the arguments pass.
      diagnostics: { workspace_id: WS_ID, paths: ['src/b.ts'] },
      symbols: { workspace_id: WS_ID, path: 'src/b.ts' },
      workspace_symbols: { workspace_id: WS_ID, query: 'b' },
      definition: { workspace_id: WS_ID, path: 'src/b.ts', line: 1, character: 1 },
      references: { workspace_id: WS_ID, path: 'src/b.ts', line: 1, character: 1 },
      hover: { workspace_id: WS_ID, path: 'src/b.ts', line: 1, character: 1 },
      editor_context: {},
      rename_symbol: { workspace_id: WS_ID, path: 'src/b.ts', line: 1, character: 1, new_name: 'c', operation_key: 'hostile-rename', check_only: true },
      // The task tools: without an editor in this host they answer UNAVAILABLE once the arguments pass.
      tasks: { workspace_id: WS_ID },
      task_run: { workspace_id: WS_ID, label: 'build', source: 'Workspace', wait_ms: 0 },
    };
  });
  after(async () => {
    await world?.dispose();
  });

  /** Calls a tool; returns the error code, 'ok' for a result, or fails on INTERNAL or a protocol error. */
  async function probe(name: string, args: unknown): Promise<string> {
    let r: CallToolResult;
    try {
      r = (await world.harness.client.callTool({ name, arguments: args as Record<string, unknown> })) as CallToolResult;
    } catch (err) {
      assert.fail(`${name}(${JSON.stringify(args).slice(0, 200)}) was a protocol error, not a tool error: ${String(err)}`);
    }
    if (!r.isError) return 'ok';
    const first = r.content[0];
    const body = JSON.parse(first?.type === 'text' ? first.text : '{}') as { error: { code: string; message: string } };
    assert.notEqual(body.error.code, 'INTERNAL', `${name}(${JSON.stringify(args).slice(0, 200)}) → INTERNAL: ${body.error.message}`);
    assert.doesNotMatch(body.error.message, /MCP error -?\d+/);
    return body.error.code;
  }

  it('answers every hostile argument of every tool with a result or a specific error', async () => {
    const { tools } = await world.harness.client.listTools();
    const codes = new Map<string, number>();
    let calls = 0;
    for (const tool of tools as Tool[]) {
      const valid = base[tool.name];
      assert.ok(valid, `no base arguments for ${tool.name}: add them to this test`);
      const props = (tool.inputSchema.properties ?? {}) as Record<string, { type?: string | string[] }>;
      const variants: unknown[] = [{}, { ...valid, unexpected_field: 1 }];
      for (const [field, schema] of Object.entries(props)) {
        for (const value of hostileValues(schema)) variants.push({ ...valid, [field]: value });
        variants.push(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== field)));
      }
      for (const args of variants) {
        const c = await probe(tool.name, args);
        codes.set(c, (codes.get(c) ?? 0) + 1);
        calls++;
      }
    }
    assert.ok((codes.get('INVALID_ARGUMENTS') ?? 0) > 0);
    console.log(`      ${calls} calls: ${JSON.stringify(Object.fromEntries(codes))}`);
  });

  it('answers hostile values that pass the schema with specific errors', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['find', { workspace_id: WS_ID, pattern: '[' }],
      ['find', { workspace_id: WS_ID, pattern: '**/*.{' }],
      ['find', { workspace_id: WS_ID, pattern: `${'*a'.repeat(400)}` }],
      ['read', { workspace_id: WS_ID, path: LONG_PATH }],
      ['read', { workspace_id: WS_ID, path: 'a.txt', start_line: 5 }],
      ['read', { workspace_id: WS_ID, path: 'a.txt', start_line: 2, end_line: 1 }],
      ['apply_patch', { workspace_id: WS_ID, patch: v4a(`*** Add File: ${LONG_PATH}`, '+x'), expected_versions: {}, operation_key: 'long' }],
      ['apply_patch', { workspace_id: WS_ID, patch: 'not a patch', expected_versions: {}, operation_key: 'bad' }],
      ['exec_command', { workspace_id: WS_ID, command: ['echo', HUGE] }],
      ['exec_command', { workspace_id: WS_ID, command: ['true'], cwd: LONG_PATH }],
      ['exec_command', { workspace_id: WS_ID, command: ['definitely-not-a-command-here'] }],
      ['exec_command', { workspace_id: WS_ID, command: ['true'], cwd: 'a.txt' }],
    ];
    for (const [name, args] of cases) {
      const c = await probe(name, args);
      assert.notEqual(c, 'ok', `${name} ${JSON.stringify(args).slice(0, 120)} should have failed`);
    }
    // A long run of stars is one star: a legal pattern, answered (not a stall, not a refusal).
    assert.equal(await probe('find', { workspace_id: WS_ID, pattern: `${'*'.repeat(900)}x` }), 'ok');
  });
});
