// End to end: an MCP client fixes a deliberately broken TypeScript file (test/fixtures/lang-project/src/broken.ts)
// using only the editor's diagnostics, search, read and apply_patch, and sees what the developer selects in the
// editor (a selection made with the mouse and keyboard in the browser) through editor_context.
import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { call, connect, copyConnectionSettings } from './mcpClient';

interface Diag {
  path: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: string;
  message: string;
  code?: string;
}

describe('an agent fixing code by diagnostics, and pointed at code by a selection', function () {
  this.timeout(8 * 60_000);
  let wb: Workbench;
  let client: Client;
  let wsId: string;

  before(async () => {
    wb = await startWorkbench({ workspace: 'lang-project', userSettings: { 'codespace.diagnostics.settleMs': 20_000 } });
    await wb.waitForActivation();
    const { url, token } = await copyConnectionSettings(wb);
    client = await connect(url, token);
    wsId = (await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {})).workspaces[0]!.id;
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-language-final').catch(() => undefined);
      await wb.stop();
    }
  });

  it('finds the errors with diagnostics and fixes them with patches until none are left', async () => {
    // Which files use the math module? Content search (VS Code's own ripgrep), as an agent starts on an unknown tree.
    const found = await call<{ matches: { path: string; line: number }[]; engine: { source: string } }>(client, 'search', { workspace_id: wsId, query: "from './math'", include: ['src/**'] });
    assert.equal(found.engine.source, 'vscode');
    const files = [...new Set(found.matches.map((m) => m.path))].sort();
    assert.deepEqual(files, ['src/broken.ts', 'src/main.ts', 'src/report.ts']);
    // The TypeScript server needs a while to load the project the first time: ask until it has answered.
    let errors: Diag[] = [];
    for (let i = 0; i < 120 && errors.length === 0; i++) {
      const d = await call<{ diagnostics: Diag[] }>(client, 'diagnostics', { workspace_id: wsId, paths: files });
      errors = d.diagnostics.filter((x) => x.severity === 'error');
    }
    assert.deepEqual(errors.map((e) => `${e.path}:${e.range.start.line}:${e.code}`).sort(), ['src/broken.ts:4:2345', 'src/broken.ts:5:2322']);

    // The agent's loop: take the first error, read its line, fix it by what the diagnostic says, patch, repeat.
    for (let round = 0; errors.length > 0; round++) {
      assert.ok(round < 5, 'the agent converges');
      const e = errors[0] as Diag;
      const file = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: e.path, start_line: e.range.start.line, end_line: e.range.start.line });
      const line = file.content.replace(/\n$/, '');
      const at = line.slice(e.range.start.character - 1, e.range.end.character - 1);
      let fixed: string;
      if (e.code === '2345' && /^'.*'$/.test(at)) {
        // "Argument of type 'string' is not assignable to parameter of type 'number'": pass the number itself.
        fixed = line.slice(0, e.range.start.character - 1) + at.slice(1, -1) + line.slice(e.range.end.character - 1);
      } else if (e.code === '2322' && /Type 'string' is not assignable to type 'number'/.test(e.message)) {
        // The declared type is wrong: the value is a string.
        fixed = line.replace(`${at}: number`, `${at}: string`);
      } else {
        assert.fail(`the agent has no fix for ${JSON.stringify(e)}`);
      }
      const applied = await call<{ status: string; diagnostics?: { pending: boolean; items: Diag[] } }>(client, 'apply_patch', {
        workspace_id: wsId,
        patch: `*** Begin Patch\n*** Update File: ${e.path}\n@@\n-${line}\n+${fixed}\n*** End Patch\n`,
        expected_versions: { [e.path]: file.version },
        operation_key: `fix-${round}`,
      });
      assert.equal(applied.status, 'applied');
      // The result answers before the language server has checked the edit (pending), as the agent-loop prompt says;
      // the agent then asks diagnostics, which waits for the report on what the edit wrote (bounded; asked again
      // while not settled).
      assert.equal(applied.diagnostics?.pending, true, 'the patch result says at once that a report is coming');
      let next = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: files, wait_ms: 30_000 });
      for (let i = 0; i < 4 && !next.settled; i++) next = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: files, wait_ms: 30_000 });
      errors = next.diagnostics.filter((x) => x.severity === 'error');
    }
    assert.equal(wb.readWorkspaceFile('src/broken.ts'), "import { scale } from './math';\n\n// Deliberately broken: the end-to-end test has an agent fix it from diagnostics alone.\nexport const half: number = scale(10, 0.5);\nexport const label: string = `half is ${half}`;\n");
    const after = await call<{ diagnostics: Diag[] }>(client, 'diagnostics', { workspace_id: wsId, paths: files });
    assert.deepEqual(after.diagnostics.filter((x) => x.severity === 'error'), []);
  });

  it('editor_context reflects a selection made in the browser', async () => {
    const { page } = wb;
    await page.keyboard.press('Control+P');
    await page.keyboard.type('math.ts', { delay: 20 });
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'math.ts' }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Enter');
    const line = page.locator('.monaco-editor .view-line', { hasText: 'export function scale' }).first();
    await line.waitFor({ timeout: 30_000 });
    // Double-click the word "scale": the editor selects it.
    await line.locator('span', { hasText: /^scale$/ }).last().dblclick();
    let ctx: { active?: { outside: boolean; path?: string; selected_text?: string; selections?: Diag['range'][] } } = {};
    for (let i = 0; i < 50 && ctx.active?.selected_text !== 'scale'; i++) {
      ctx = await call(client, 'editor_context', {});
      if (ctx.active?.selected_text !== 'scale') await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(ctx.active?.outside, false);
    assert.equal(ctx.active?.path, 'src/math.ts');
    assert.equal(ctx.active?.selected_text, 'scale');
    assert.deepEqual(ctx.active?.selections?.[0], { start: { line: 6, character: 17 }, end: { line: 6, character: 22 } });
    // Extend it with the keyboard: shift+End selects to the end of the line.
    await page.keyboard.press('Shift+End');
    for (let i = 0; i < 50 && ctx.active?.selected_text === 'scale'; i++) {
      ctx = await call(client, 'editor_context', {});
      if (ctx.active?.selected_text === 'scale') await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(ctx.active?.selected_text, 'scale(value: number, factor: number): number {');
    await wb.screenshot('e2e-language-selection');
  });
});
