// End to end: two agents (two real MCP clients) in two worktree works at once, on a two-folder window whose folders
// are git repositories with a local bare remote each, and a fake `gh` on the PATH code-server (and so the extension
// host) starts with. Agent A runs a long command in its work while agent B patches both repositories in its own,
// freezes it, and cannot approve it itself. The developer reviews it in the editor (through the command palette:
// the review's diff, then Approve), commits it and delivers it: each bare remote gets the task branch at the reviewed commit,
// `gh` opens one pull request per repository, the developer's folders never change, and the panel shows both works,
// B delivered with its pull request links. The screenshot is docs/delivered-work.png (with CODESPACE_UPDATE_DOCS_SCREENSHOTS=1).
// Then A is frozen: a review of it after another process changed its worktree is refused as stale, and once it is
// committed, a branch of its name pushed by someone else first is neither overwritten nor given a pull request.
import * as assert from 'node:assert/strict';
import { promises as fsp, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Workbench } from './index';
import { screenshotForDocs } from './agentWorkbench';
import { call, callError } from './mcpClient';
import { panelFrame, sha256, sleep } from './webview';
import { folderState, git, startWorksWindow, stopWorksWindow } from './worksWindow';
import type { WorksWindow } from './worksWindow';

/** An authenticated gh that logs its calls, opens a pull request once per repository and finds it afterwards. */
const FAKE_GH = `#!/bin/sh
echo "$*" >> "$FAKE_GH_LOG"
state="$(git rev-parse --git-common-dir)/fake-gh-pr"
case "$1 $2" in
  "auth status") exit 0;;
  "pr list") if [ -f "$state" ]; then printf '[{"url":"%s"}]\\n' "$(cat "$state")"; else echo '[]'; fi;;
  "pr create") n=$(wc -l < "$FAKE_GH_LOG"); echo "https://github.example/o/r/pull/$n" > "$state"; cat "$state";;
  *) exit 2;;
esac
`;

interface Opened {
  work_id: string;
  branch: string;
}

describe('delivered work (two agents, review in the editor, push and pull request)', function () {
  this.timeout(8 * 60_000);
  let win: WorksWindow | undefined;
  let wb: Workbench;
  let agents: Client[];
  let ids: string[];
  let bares: string[];
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'codespace-e2e-deliver-'));
  const ghLog = path.join(scratch, 'gh.log');
  const saved = { PATH: process.env.PATH, FAKE_GH_LOG: process.env.FAKE_GH_LOG, VSCODE_CLI: process.env.VSCODE_CLI };

  before(async () => {
    const bin = path.join(scratch, 'bin');
    await fsp.mkdir(bin);
    await fsp.writeFile(path.join(bin, 'gh'), FAKE_GH, { mode: 0o755 });
    // code-server inherits this process's environment, and the extension host code-server's. VS Code's server would
    // otherwise take PATH from a login shell (which sets its own); VSCODE_CLI=1 is how it skips that.
    Object.assign(process.env, { PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, FAKE_GH_LOG: ghLog, VSCODE_CLI: '1' });
    win = await startWorksWindow({ userSettings: { 'git.openRepositoryInParentFolders': 'never' }, remotesIn: scratch });
    ({ wb, agents, ids, bares } = win);
  });

  after(async () => {
    await stopWorksWindow(win, 'e2e-deliver-final');
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  let workA: Opened;
  let workB: Opened;

  it('work A runs a command while work B is patched, frozen, reviewed and approved in the editor, committed and delivered as a pull request; self-review refused; folders unchanged', async () => {
    const [a, b] = agents as [Client, Client];
    const before = wb.workspaceRoots.map(folderState);
    workA = await call<Opened>(a, 'work_open', { workspace_id: ids[0], title: 'Serve the app', isolation: 'worktree' });
    workB = await call<Opened>(b, 'work_open', { workspace_id: ids[0], title: 'Document the API', isolation: 'worktree' });
    const server = await call<{ process_id: string }>(a, 'exec_command', { workspace_id: ids[0], work_id: workA.work_id, command: ['sh', '-c', 'echo serving; sleep 600'] });
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
          operation_key: `e2e-deliver-b${i}`,
          expected_versions: { 'TASKS.md': sha256(text) },
          patch: `*** Begin Patch\n*** Update File: TASKS.md\n@@\n-# ${path.basename(root)}\n+# ${path.basename(root)}\n+\n+- API documented (work B)\n*** End Patch`,
        });
      }
      const { digest } = await call<{ digest: string }>(b, 'work_review', { work_id: workB.work_id, action: 'freeze' });
      assert.match(digest, /^sha256:[0-9a-f]{64}$/);
      const self = await callError(b, 'work_review', { work_id: workB.work_id, action: 'approve', digest });
      assert.equal(self.code, 'PERMISSION_DENIED', 'agent B cannot approve its own work');
      assert.equal((self.details as { reason?: string } | undefined)?.reason, 'self_review');
      assert.equal((await call<{ state: string }>(a, 'process_status', { process_id: server.process_id })).state, 'running', 'work A\'s command runs on');

      await wb.runCommand('CodeSpace: Show Panel');
      const frame = await panelFrame(wb, `.work[data-work-id="${workB.work_id}"] [data-role="work-delivery"][data-state="frozen"]`);
      const rowB = frame.locator(`.work[data-work-id="${workB.work_id}"]`);
      assert.equal(await rowB.locator('[data-role="work-delivery"] .digest').innerText(), digest.slice(7, 19), 'the panel shows the short digest');

      // The developer reviews in the editor: the command palette opens the review (one multi-file diff over both
      // repositories, titled with the short digest), then approves what it shows.
      await wb.runCommand('CodeSpace: Review Frozen Work…');
      await wb.page.locator('.tab', { hasText: `CodeSpace frozen work: Document the API (${digest.slice(7, 19)})` }).first().waitFor({ timeout: 60_000 });
      await wb.runCommand('CodeSpace: Approve Frozen Work');
      await rowB.locator('[data-role="work-delivery"][data-state="approved"]').waitFor({ timeout: 60_000 });
      await wb.runCommand('CodeSpace: Commit Approved Frozen Work');
      await rowB.locator('[data-role="work-delivery"][data-state="committed"]').waitFor({ timeout: 60_000 });
      await wb.runCommand('CodeSpace: Deliver Reviewed Work');
      await rowB.locator('[data-role="work-delivery"][data-state="delivered"]').waitFor({ timeout: 90_000 });

      // Each bare remote has the task branch (and only it besides main) at the reviewed commit, which holds B's edit.
      for (const [i, root] of wb.workspaceRoots.entries()) {
        const reviewed = git(root, 'rev-parse', `refs/heads/${workB.branch}`).trim();
        assert.equal(git(bares[i] as string, 'rev-parse', `refs/heads/${workB.branch}`).trim(), reviewed, 'the remote task branch is at the reviewed commit');
        assert.deepEqual(git(bares[i] as string, 'for-each-ref', '--format=%(refname)', 'refs/heads').trim().split('\n').sort(), ['refs/heads/main', `refs/heads/${workB.branch}`].sort());
        assert.equal(git(root, 'log', '-1', '--format=%(trailers:key=CodeSpace-Review,valueonly)', reviewed).trim(), digest);
        assert.match(git(root, 'show', `${reviewed}:TASKS.md`), /API documented \(work B\)/);
        assert.equal(git(bares[i] as string, 'rev-parse', 'refs/heads/main').trim(), git(root, 'rev-parse', 'main').trim(), 'main on the remote did not move');
      }
      const ghCalls = readFileSync(ghLog, 'utf8').split('\n').filter((l) => l.startsWith('pr create'));
      assert.equal(ghCalls.length, 2, `gh opened one pull request per repository: ${ghCalls.join(' | ')}`);
      assert.ok(ghCalls.every((l) => l.includes(`--head ${workB.branch}`)), ghCalls.join(' | '));

      // The panel: both works; B delivered with a pull request link per repository, A open with nothing to deliver.
      const links = rowB.locator('[data-role="delivery-link"][data-kind="pull_request"]');
      await links.nth(1).waitFor({ timeout: 30_000 });
      const hrefs = await links.evaluateAll((els) => els.map((e) => e.getAttribute('href')));
      assert.equal(hrefs.length, 2);
      for (const h of hrefs) assert.match(h ?? '', /^https:\/\/github\.example\/o\/r\/pull\/\d+$/);
      const rowA = frame.locator(`.work[data-work-id="${workA.work_id}"][data-status="open"]`);
      await rowA.waitFor({ timeout: 30_000 });
      assert.equal(await rowA.locator('[data-role="work-delivery"]').count(), 0);
      assert.equal(await rowA.locator('[data-role="work-branch"] .branch').innerText(), workA.branch);
      assert.deepEqual(wb.workspaceRoots.map(folderState), before, 'the developer\'s folders are unchanged');

      await rowB.scrollIntoViewIfNeeded();
      await sleep(1000);
      await screenshotForDocs(wb, 'delivered-work', 'delivered-work.png');
    } finally {
      await call(a, 'terminate_process', { process_id: server.process_id }).catch(() => undefined);
    }
  });

  it('work A: a review of a checkpoint changed behind it is refused as stale, and a racing push of its task branch is refused, the remote kept', async () => {
    const [a, b] = agents as [Client, Client];
    const root = wb.workspaceRoots[0] as string;
    const before = wb.workspaceRoots.map(folderState);
    // B is delivered: finishing it leaves A the only frozen work the editor's commands pick.
    await call(b, 'work_finish', { work_id: workB.work_id });
    // Its command was terminated: once it has ended, the work can be frozen (the first freeze that succeeds).
    for (let i = 0; i < 300; i++) {
      const r = await callError(a, 'work_review', { work_id: workA.work_id, action: 'freeze' }).catch(() => undefined);
      if (r === undefined) break;
      assert.equal((r.details as { reason?: string } | undefined)?.reason, 'processes_running', JSON.stringify(r));
      await sleep(100);
    }
    await call(a, 'work_review', { work_id: workA.work_id, action: 'reopen' });
    const text = `# ${path.basename(root)}\n`;
    await call(a, 'apply_patch', {
      workspace_id: ids[0],
      work_id: workA.work_id,
      operation_key: 'e2e-deliver-a0',
      expected_versions: { 'TASKS.md': sha256(text) },
      patch: `*** Begin Patch\n*** Update File: TASKS.md\n@@\n-# ${path.basename(root)}\n+# ${path.basename(root)}\n+\n+- served (work A)\n*** End Patch`,
    });
    const { digest } = await call<{ digest: string }>(a, 'work_review', { work_id: workA.work_id, action: 'freeze' });

    // Another process changes A's worktree behind the checkpoint: B's review of it is stale, and fine again once undone.
    const worktree = git(root, 'worktree', 'list', '--porcelain').split('\n\n').find((e) => e.includes(`branch refs/heads/${workA.branch}`))?.match(/^worktree (.+)$/m)?.[1];
    assert.ok(worktree, `A's worktree is listed: ${git(root, 'worktree', 'list')}`);
    const intruder = path.join(worktree, 'INTRUDER.txt');
    await fsp.writeFile(intruder, 'written behind the review\n');
    const stale = await callError(b, 'work_review', { work_id: workA.work_id, action: 'approve', digest });
    assert.equal(stale.code, 'REVIEW_STALE', JSON.stringify(stale));
    assert.equal((stale.details as { reason?: string } | undefined)?.reason, 'changed_since_freeze');
    await fsp.rm(intruder);
    await call(b, 'work_review', { work_id: workA.work_id, action: 'approve', digest, findings: 'Looks right.' });
    const { commits } = await call<{ commits: { workspace_id: string; commit: string }[] }>(a, 'work_review', { work_id: workA.work_id, action: 'commit' });
    assert.equal(commits.length, 1, 'one repository changed');

    // Someone else pushes a branch of that name first: the delivery must not overwrite it.
    const bare = bares[0] as string;
    git(root, 'push', '-q', bare, `main:refs/heads/${workA.branch}`);
    const racer = git(bare, 'rev-parse', `refs/heads/${workA.branch}`).trim();
    const creates = (): number => readFileSync(ghLog, 'utf8').split('\n').filter((l) => l.startsWith('pr create')).length;
    const createsBefore = creates();
    await wb.runCommand('CodeSpace: Deliver Reviewed Work');
    await wb.waitForExtensionLog(/\[frozen-review\] VERSION_CONFLICT: /);
    assert.equal(git(bare, 'rev-parse', `refs/heads/${workA.branch}`).trim(), racer, 'the racing push is kept');
    assert.equal(creates(), createsBefore, 'no pull request for a branch that was not pushed');
    const frame = await panelFrame(wb, `.work[data-work-id="${workA.work_id}"] [data-role="work-delivery"][data-state="committed"]`);
    assert.equal(await frame.locator(`.work[data-work-id="${workA.work_id}"] [data-role="delivery-link"]`).count(), 0);
    assert.deepEqual(wb.workspaceRoots.map(folderState), before, 'the developer\'s folders are unchanged');
  });
});
