// The window the works tests begin with (works.test.ts, deliver.test.ts): VS Code on the two-folder fixture, each
// folder a git repository on `main` with one commit (and, when asked, a local bare remote it is pushed to), two agents
// connected as real MCP clients, and each folder's workspace id as the agents learn it from workspace_info.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { call, connect, copyConnectionSettings } from './mcpClient';

export interface WorksWindow {
  readonly wb: Workbench;
  /** Agent A and agent B. */
  readonly agents: Client[];
  /** The workspace id of each folder, in the order of `wb.workspaceRoots`. */
  readonly ids: string[];
  /** Each folder's bare remote (`origin`), when `remotesIn` was given. */
  readonly bares: string[];
}

/** `git <args>` in `cwd`; its output. */
export const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });

/** A folder's HEAD, branch and status, to check that the developer's folders did not change. */
export const folderState = (root: string): string =>
  JSON.stringify({ head: git(root, 'rev-parse', 'HEAD'), branch: git(root, 'branch', '--show-current'), status: git(root, 'status', '--porcelain=v1', '--untracked-files=all') });

/**
 * Starts the window and connects the two agents. `remotesIn`: a folder where each repository gets a bare remote
 * (`remote-<i>.git`). Stops the window again when a step fails (the caller never gets it to stop).
 */
export async function startWorksWindow(options: { userSettings?: Record<string, unknown>; remotesIn?: string } = {}): Promise<WorksWindow> {
  const wb = await startWorkbench({ workspace: 'multi.code-workspace', ...(options.userSettings ? { userSettings: options.userSettings } : {}) });
  const agents: Client[] = [];
  try {
    await wb.waitForActivation();
    assert.equal(wb.workspaceRoots.length, 2);
    const bares: string[] = [];
    for (const [i, root] of wb.workspaceRoots.entries()) {
      git(root, 'init', '-q', '-b', 'main');
      git(root, 'config', 'user.email', 'e2e@example.invalid');
      git(root, 'config', 'user.name', 'E2E');
      git(root, 'config', 'commit.gpgsign', 'false');
      await fsp.writeFile(path.join(root, 'TASKS.md'), `# ${path.basename(root)}\n`);
      git(root, 'add', '-A');
      git(root, 'commit', '-q', '--no-verify', '-m', 'fixture');
      if (options.remotesIn === undefined) continue;
      const bare = path.join(options.remotesIn, `remote-${i}.git`);
      git(options.remotesIn, 'init', '-q', '--bare', '-b', 'main', bare);
      git(root, 'remote', 'add', 'origin', bare);
      git(root, 'push', '-q', 'origin', 'main');
      bares.push(bare);
    }
    const { url, token } = await copyConnectionSettings(wb);
    agents.push(await connect(url, token, 'e2e-agent-a'), await connect(url, token, 'e2e-agent-b'));
    const info = await call<{ workspaces: { id: string; name: string }[] }>(agents[0] as Client, 'workspace_info', {});
    const ids = wb.workspaceRoots.map((root) => {
      const ws = info.workspaces.find((w) => w.name === path.basename(root));
      assert.ok(ws, `${root} is served`);
      return ws.id;
    });
    return { wb, agents, ids, bares };
  } catch (error) {
    await stopWorksWindow({ wb, agents }, 'e2e-start-failed');
    throw error;
  }
}

/** The after hook: the agents closed, a last screenshot named `screenshot`, VS Code stopped. */
export async function stopWorksWindow(w: Pick<WorksWindow, 'wb' | 'agents'> | undefined, screenshot: string): Promise<void> {
  if (!w) return;
  for (const a of w.agents) await a.close().catch(() => undefined);
  await w.wb.screenshot(screenshot).catch(() => undefined);
  await w.wb.stop();
}
