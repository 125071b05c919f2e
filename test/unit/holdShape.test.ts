import * as assert from 'node:assert/strict';
import { hasReviewFiles } from '../../src/kernel/approvals/hold';
import type { HoldView } from '../../src/kernel/approvals/hold';
import { heldWork, holdWorkspace } from '../../src/kernel/approvals/holdWork';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { ToolError } from '../../src/base/errors';
import { commandHold, patchHold } from './helpers/panelPorts';

describe("a hold's shape decides what the editor does with it", () => {
  it('heldWork: the work_id a held request names, and nothing for any other request', () => {
    assert.equal(heldWork({ workspace_id: 'ws', work_id: 'w1' }), 'w1');
    for (const request of [{ workspace_id: 'ws' }, { work_id: 7 }, { work_id: null }, null, undefined, 'w1', []]) assert.equal(heldWork(request), undefined, JSON.stringify(request));
  });

  it("holdWorkspace: a work's worktree of the folder when the work has one, else the folder; unknown folders throw", () => {
    const workspaces = new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root: '/repo/proj', name: 'proj', profile: 'write' }]));
    const id = workspaces.list()[0]?.id as string;
    assert.equal(holdWorkspace(workspaces, { workspace_id: id, request: {} }).root, '/repo/proj', 'no work is connected yet');
    workspaces.setWorkRoots({ rootFor: (workId) => (workId === 'wt' ? '/state/worktrees/wt/proj' : undefined) });
    assert.equal(holdWorkspace(workspaces, { workspace_id: id, request: { work_id: 'wt' } }).root, '/state/worktrees/wt/proj');
    assert.equal(holdWorkspace(workspaces, { workspace_id: id, request: { work_id: 'plain' } }).root, '/repo/proj', 'a work without worktrees writes in the folder');
    assert.equal(holdWorkspace(workspaces, { workspace_id: id, request: { work_id: 42 } }).root, '/repo/proj', 'a malformed work_id names no work');
    assert.throws(() => holdWorkspace(workspaces, { workspace_id: 'nope', request: { work_id: 'wt' } }), (e: unknown) => ToolError.is(e, 'WORKSPACE_NOT_FOUND'));
    workspaces.dispose();
  });

  it('hasReviewFiles: a hold with files has something to review in a diff, whatever its tool is called', () => {
    assert.equal(hasReviewFiles(patchHold('h1')), true);
    assert.equal(hasReviewFiles(commandHold('h2')), false);
    assert.equal(hasReviewFiles(undefined), false);
    const other: HoldView = { ...patchHold('h3'), tool: 'write_notes' };
    assert.equal(hasReviewFiles(other), true, 'another tool whose intent carries files');
    const named = Object.fromEntries(Object.entries(patchHold('h4')).filter(([key]) => key !== 'files')) as unknown as HoldView;
    assert.equal(hasReviewFiles(named), false, 'the name apply_patch alone is not a diff');
  });
});
