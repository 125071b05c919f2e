// End to end: an agent runs a sample project's test suite inside the command sandbox (bubblewrap) of the extension
// running in a real VS Code, reads its result, and the developer watches it in the terminal. The suite itself
// checks what the sandbox promises from the inside; the test checks the disk from the outside.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { call, connect, copyConnectionSettings } from './mcpClient';

/** Whether bwrap can run here at all; where it cannot, the sandbox cannot be tested (the reason is printed). */
function bwrapRuns(): string | undefined {
  const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', 'true'], { encoding: 'utf8' });
  if (r.error) return `bwrap is not installed (${r.error.message})`;
  return r.status === 0 ? undefined : `bwrap cannot run here: ${r.stderr.trim()}`;
}

const SUITE = [
  'pass=0; fail=0',
  'check() { if sh -c "$2" >/dev/null 2>&1; then pass=$((pass+1)); echo "ok - $1"; else fail=$((fail+1)); echo "not ok - $1"; fi; }',
  'check "sum adds numbers" \'[ "$(sh src/sum.sh 2 3)" = 5 ]\'',
  'check "the workspace is writable" \'echo built > build.txt\'',
  'check "editor tasks cannot be planted" \'! sh -c "mkdir -p .vscode && echo {} > .vscode/tasks.json"\'',
  'check "git hooks cannot be planted" \'! sh -c "mkdir -p .git/hooks && echo x > .git/hooks/pre-commit"\'',
  'check "outside the workspace is read-only" \'! sh -c "echo x > $HOME/.codespace-sandbox-probe"\'',
  'echo "$pass passed, $fail failed"',
  '[ "$fail" -eq 0 ]',
];

describe('an agent runs a test suite in the command sandbox', function () {
  this.timeout(5 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;
  const missing = bwrapRuns();

  before(async function () {
    if (missing) {
      console.log(`    (skipped: ${missing})`);
      this.skip();
    }
    wb = await startWorkbench({ workspace: 'workspace' });
    await wb.waitForActivation();
    const { url, token } = await copyConnectionSettings(wb);
    client = await connect(url, token, 'e2e-sandbox');
    wsId = (await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {})).workspaces[0]?.id as string;
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) await wb.stop();
  });

  it('reports the sandbox, runs the suite in it, and the terminal shows the run', async () => {
    const info = await call<{ execution: { isolation: { command_sandbox: { enabled: boolean; kind: string; reason?: string } }; network: string } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual(info.execution.isolation.command_sandbox.enabled, true, `sandbox off: ${info.execution.isolation.command_sandbox.reason ?? ''}`);
    assert.equal(info.execution.isolation.command_sandbox.kind, 'bubblewrap');
    assert.equal(info.execution.network, 'blocked');

    const patch = [
      '*** Begin Patch',
      '*** Add File: src/sum.sh',
      '+echo $(($1 + $2))',
      '*** Add File: tests/run.sh',
      ...SUITE.map((l) => `+${l}`),
      '*** End Patch',
    ].join('\n');
    const applied = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: {}, operation_key: 'e2e-sandbox-suite' });
    assert.equal(applied.status, 'applied');

    const run = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['sh', 'tests/run.sh'], tty: true });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 60; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id: run.process_id, cursor, wait_ms: 2000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    const st = await call<{ state: string; termination: string; exit_code?: number }>(client, 'process_status', { process_id: run.process_id });
    assert.deepEqual([st.state, st.termination, st.exit_code], ['exited', 'exited', 0], out);
    assert.match(out, /5 passed, 0 failed/);

    // From the outside: the allowed write landed, nothing was planted.
    assert.equal(fs.readFileSync(path.join(wb.workspaceDir, 'build.txt'), 'utf8'), 'built\n');
    assert.equal(fs.existsSync(path.join(wb.workspaceDir, '.vscode', 'tasks.json')), false);
    assert.equal(fs.existsSync(path.join(wb.workspaceDir, '.git', 'hooks', 'pre-commit')), false);

    // The developer watched it: the run is a terminal named after its command, showing the result.
    await wb.page.locator('.terminal-tabs-entry, .tabs-list .monaco-list-row, .single-terminal-tab', { hasText: 'CodeSpace' }).first().waitFor({ timeout: 60_000 });
    await new Promise((r) => setTimeout(r, 1500)); // let the terminal paint before the screenshot
    await wb.screenshot('e2e-sandbox-terminal');
  });
});
