// End to end: two agents (two real MCP clients) in two works at once, in a real workbench on a two-folder window
// whose folders are git repositories. Each opens its work with isolation "worktree"; agent A starts a long command
// in its worktree, agent B patches both repositories of its own meanwhile (not WORKSPACE_BUSY), while A's own
// patch is busy. The developer's folders stay unchanged throughout. The panel lists both works with their state
// and task branch; the screenshot goes to docs/parallel-works.png.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Workbench } from './index';
import { screenshotForDocs } from './agentWorkbench';
import { call, callError } from './mcpClient';
import { panelFrame, sha256, sleep } from './webview';
import { folderState, startWorksWindow, stopWorksWindow } from './worksWindow';
import type { WorksWindow } from './worksWindow';

interface Opened {
  work_id: string;
  branch: string;
}

describe('parallel works (two agents, two worktrees)', function () {
  this.timeout(6 * 60_000);
  let win: WorksWindow | undefined;
  let wb: Workbench;
  let agents: Client[];
  let ids: string[];

  before(async () => {
    win = await startWorksWindow();
    ({ wb, agents, ids } = win);
  });

  after(() => stopWorksWindow(win, 'e2e-works-final'));

  it('runs a long command in work A while work B patches both repositories; the folders stay unchanged; the panel lists both works with branch and state', async () => {
    const [a, b] = agents as [Client, Client];
    const before = wb.workspaceRoots.map(folderState);
    const workA = await call<Opened>(a, 'work_open', { workspace_id: ids[0], title: 'Serve the app', isolation: 'worktree' });
    const workB = await call<Opened>(b, 'work_open', { workspace_id: ids[0], title: 'Document the API', isolation: 'worktree' });
    assert.notEqual(workA.branch, workB.branch);

    const server = await call<{ process_id: string }>(a, 'exec_command', { workspace_id: ids[0], work_id: workA.work_id, command: ['sh', '-c', 'echo serving; sleep 300'] });
    try {
      for (let i = 0; i < 100; i++) {
        const s = await call<{ state: string }>(a, 'process_status', { process_id: server.process_id });
        if (s.state === 'running') break;
        await sleep(100);
      }
      for (const [i, root] of wb.workspaceRoots.entries()) {
        const text = `# ${path.basename(root)}\n`;
        await call(b, 'apply_patch', {
          workspace_id: ids[i],
          work_id: workB.work_id,
          operation_key: `e2e-works-b${i}`,
          expected_versions: { 'TASKS.md': sha256(text) },
          patch: `*** Begin Patch\n*** Update File: TASKS.md\n@@\n-# ${path.basename(root)}\n+# ${path.basename(root)}\n+\n+- API documented (work B)\n*** End Patch`,
        });
      }
      const busy = await callError(a, 'apply_patch', {
        workspace_id: ids[0],
        work_id: workA.work_id,
        operation_key: 'e2e-works-a0',
        expected_versions: { 'TASKS.md': sha256(`# ${path.basename(wb.workspaceRoots[0] as string)}\n`) },
        patch: `*** Begin Patch\n*** Update File: TASKS.md\n@@\n-# ${path.basename(wb.workspaceRoots[0] as string)}\n+# served\n*** End Patch`,
      });
      assert.equal(busy.code, 'WORKSPACE_BUSY', 'work A is busy with its own command');
      const inB = await call<{ content: string }>(b, 'read', { workspace_id: ids[1], path: 'TASKS.md', work_id: workB.work_id });
      assert.match(inB.content, /API documented \(work B\)/);
      assert.deepEqual(wb.workspaceRoots.map(folderState), before, 'the developer\'s folders are unchanged');

      await wb.runCommand('CodeSpace: Show Panel');
      const frame = await panelFrame(wb, `.work[data-work-id="${workB.work_id}"]`);
      for (const w of [workA, workB]) {
        const node = frame.locator(`.work[data-work-id="${w.work_id}"][data-status="open"]`);
        await node.waitFor({ timeout: 30_000 });
        assert.equal(await node.locator('[data-role="work-branch"] .branch').innerText(), w.branch);
      }
      await sleep(1000);
      await screenshotForDocs(wb, 'parallel-works', 'parallel-works.png');

      // Work B finishes: the panel shows it finished, work A still open, and the folders are still unchanged. Its
      // worktrees hold edits not committed, so they are kept, each with its reason.
      const finished = await call<{ closed: boolean; worktrees?: { workspace_id: string; removed: boolean; reason?: string }[] }>(b, 'work_finish', { work_id: workB.work_id });
      assert.equal(finished.closed, true);
      assert.deepEqual(finished.worktrees?.map((t) => [t.workspace_id, t.removed, t.reason]), ids.map((id) => [id, false, 'uncommitted']));
      assert.match((await call<{ content: string }>(b, 'read', { workspace_id: ids[1], path: 'TASKS.md', work_id: workB.work_id })).content, /API documented \(work B\)/);
      await frame.locator(`.work[data-work-id="${workB.work_id}"][data-status="finished"]`).waitFor({ timeout: 30_000 });
      await frame.locator(`.work[data-work-id="${workA.work_id}"][data-status="open"]`).waitFor({ timeout: 30_000 });
      assert.deepEqual(wb.workspaceRoots.map(folderState), before);
    } finally {
      await call(a, 'terminate_process', { process_id: server.process_id }).catch(() => undefined);
    }
  });
});
