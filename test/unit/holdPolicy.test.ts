/**
 * The one hold decision (src/kernel/approvals/holdPolicy.ts) and `codespace.review.mode` through the real stack: in a
 * workspace reviewed after the write, a patch that `confirm` would hold applies at once unless it touches a
 * sensitive path, while commands keep their own setting.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import type { ApprovalPolicy } from '../../src/kernel/approvals/approvalService';
import { DEFAULT_APPROVAL_POLICY } from '../../src/kernel/approvals/approvalService';
import type { ReviewMode } from '../../src/kernel/approvals/holdPolicy';
import { holdReason } from '../../src/kernel/approvals/holdPolicy';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { toolError } from './helpers/workspaceFixture';

describe('hold policy', function () {
  this.timeout(60_000);

  it('decides every case in one table', () => {
    const policy = (patches: ApprovalPolicy['patches'], commands: ApprovalPolicy['commands'] = 'off'): ApprovalPolicy => ({ ...DEFAULT_APPROVAL_POLICY, patches, commands });
    const patch = (sensitive: boolean) => ({ acts: 'patch' as const, sensitive_paths: sensitive ? ['.vscode/settings.json'] : [] });
    const cases: [ApprovalPolicy['patches'], boolean, ReviewMode, string | undefined][] = [
      ['off', false, 'before', undefined],
      ['off', true, 'before', undefined],
      ['off', true, 'after', undefined],
      ['sensitive', false, 'before', undefined],
      ['sensitive', true, 'before', 'sensitive'],
      ['sensitive', false, 'after', undefined],
      ['sensitive', true, 'after', 'sensitive'],
      ['confirm', false, 'before', 'confirm'],
      ['confirm', true, 'before', 'confirm'],
      ['confirm', false, 'after', undefined],
      ['confirm', true, 'after', 'sensitive'],
    ];
    for (const [patches, sensitive, review, expected] of cases) {
      assert.equal(holdReason(patch(sensitive), policy(patches), { review }), expected, `${patches} sensitive=${sensitive} ${review}`);
    }
    for (const review of ['before', 'after'] as const) {
      assert.equal(holdReason({ acts: 'command', sensitive_paths: [] }, policy('confirm', 'confirm'), { review }), 'confirm');
      assert.equal(holdReason({ acts: 'command', sensitive_paths: [] }, policy('confirm', 'off'), { review }), undefined);
    }
    assert.equal(holdReason(patch(false), policy('confirm')), 'confirm', 'without a context: review before the write');
  });

  describe('codespace.review.mode through the stack', () => {
    let w: PatchWorld;
    let mode: ReviewMode;
    beforeEach(async () => {
      mode = 'after';
      w = await openPatchWorld(
        { 'a.txt': 'alpha\nbeta\n', '.vscode/settings.json': '{}\n' },
        { profile: 'exec', approvals: () => ({ ...DEFAULT_APPROVAL_POLICY, patches: 'confirm', commands: 'confirm' }), reviewMode: (id) => (id === WS_ID ? mode : 'before') },
      );
    });
    afterEach(async () => {
      await w?.dispose();
    });

    it('after: a non-sensitive patch applies at once, a sensitive one and a command are held; before: held again', async () => {
      const applied = await w.apply({ workspace_id: WS_ID, patch: v4a('*** Update File: a.txt', '@@', ' alpha', '-beta', '+BETA'), expected_versions: { 'a.txt': sha256('alpha\nbeta\n') }, operation_key: 'k1' });
      assert.equal(applied.status, 'applied');
      assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), 'alpha\nBETA\n');

      const sensitive = toolError(await w.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Update File: .vscode/settings.json', '@@', '-{}', '+{"a":1}'), expected_versions: { '.vscode/settings.json': sha256('{}\n') }, operation_key: 'k2' }));
      assert.equal(sensitive.code, 'APPROVAL_REQUIRED');
      assert.equal(sensitive.details?.reason, 'sensitive');
      assert.equal(await fsp.readFile(w.abs('.vscode/settings.json'), 'utf8'), '{}\n');

      const command = toolError(await w.call('exec_command', { workspace_id: WS_ID, command: ['true'] }));
      assert.equal(command.code, 'APPROVAL_REQUIRED');
      assert.equal(command.details?.reason, 'confirm');

      mode = 'before';
      const again = toolError(await w.call('apply_patch', { workspace_id: WS_ID, patch: v4a('*** Update File: a.txt', '@@', ' alpha', '-BETA', '+beta'), expected_versions: { 'a.txt': sha256('alpha\nBETA\n') }, operation_key: 'k3' }));
      assert.equal(again.code, 'APPROVAL_REQUIRED');
      assert.equal(again.details?.reason, 'confirm');
      assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), 'alpha\nBETA\n');
    });
  });
});
