/**
 * Preconditions come first: a request whose expected version is stale is answered VERSION_CONFLICT with the current
 * version, whatever else its now-stale content would also break (a hunk's context that is gone). An agent told its
 * version is stale reads again; one told its context is wrong may guess.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { ok, toolError } from './helpers/workspaceFixture';

const BEFORE = '{\n  "port": 3000,\n  "debug": false\n}\n';
const AFTER = '{\n  "port": 8080,\n  "debug": false\n}\n';
const PATCH = v4a('*** Update File: cfg.json', '@@', '   "port": 3000,', '-  "debug": false', '+  "debug": true');

describe('preconditions before context: a stale version is reported as a stale version', () => {
  let world: PatchWorld;
  let policy = { patches: 'off' as 'off' | 'confirm', commands: 'off' as const, agentMayResolve: true };

  beforeEach(async () => {
    policy = { patches: 'off', commands: 'off', agentMayResolve: true };
    world = await openPatchWorld({ 'cfg.json': BEFORE, 'other.txt': 'x\n' }, { approvals: () => policy });
  });
  afterEach(async () => {
    await world.dispose();
  });

  for (const checkOnly of [false, true]) {
    it(`apply_patch${checkOnly ? ' (check_only)' : ''}: the file changed since it was read and the context is gone → VERSION_CONFLICT with the current version`, async () => {
      const { version } = await world.read('cfg.json');
      await fsp.writeFile(world.abs('cfg.json'), AFTER);
      const e = await world.applyError({ patch: PATCH, expected_versions: { 'cfg.json': version }, operation_key: `stale-${checkOnly}`, check_only: checkOnly });
      assert.equal(e.code, 'VERSION_CONFLICT', e.message);
      assert.equal(e.details?.path, 'cfg.json');
      assert.equal(e.details?.expected, version);
      assert.equal(e.details?.current, sha256(AFTER));
      assert.equal(await fsp.readFile(world.abs('cfg.json'), 'utf8'), AFTER);
    });
  }

  it('apply_patch: a missing version is VERSION_REQUIRED even when the context would not match', async () => {
    await fsp.writeFile(world.abs('cfg.json'), AFTER);
    const e = await world.applyError({ patch: PATCH, expected_versions: {}, operation_key: 'missing' });
    assert.equal(e.code, 'VERSION_REQUIRED', e.message);
  });

  it('apply_patch: a stale second file is reported before the first file\'s broken context', async () => {
    const other = await world.read('other.txt');
    await fsp.writeFile(world.abs('other.txt'), 'y\n');
    const e = await world.applyError({
      patch: v4a('*** Update File: cfg.json', '@@', '-no such line', '+z', '*** Update File: other.txt', '@@', '-x', '+z'),
      expected_versions: { 'cfg.json': sha256(BEFORE), 'other.txt': other.version },
      operation_key: 'two',
    });
    assert.equal(e.code, 'VERSION_CONFLICT', e.message);
    assert.equal(e.details?.path, 'other.txt');
    assert.equal(e.details?.current, sha256('y\n'));
  });

  it('apply_patch: current versions and a wrong context are still PATCH_CONTEXT_NOT_FOUND', async () => {
    const e = await world.applyError({ patch: v4a('*** Update File: cfg.json', '@@', '-no such line', '+z'), expected_versions: { 'cfg.json': sha256(BEFORE) }, operation_key: 'ctx' });
    assert.equal(e.code, 'PATCH_CONTEXT_NOT_FOUND');
  });

  it('approval_create validates the same way: VERSION_CONFLICT, not a context error', async () => {
    const { version } = await world.read('cfg.json');
    await fsp.writeFile(world.abs('cfg.json'), AFTER);
    const e = toolError(await world.call('approval_create', { workspace_id: WS_ID, request: { workspace_id: WS_ID, patch: PATCH, expected_versions: { 'cfg.json': version }, operation_key: 'held' } }));
    assert.equal(e.code, 'VERSION_CONFLICT', e.message);
    assert.equal(e.details?.current, sha256(AFTER));
  });

  it('operation_resume of a granted hold whose file changed: VERSION_CONFLICT (stale) naming the file and its current version', async () => {
    policy = { patches: 'confirm', commands: 'off', agentMayResolve: true };
    const { version } = await world.read('cfg.json');
    const held = toolError(await world.call('apply_patch', { workspace_id: WS_ID, patch: PATCH, expected_versions: { 'cfg.json': version }, operation_key: 'resume' }));
    assert.equal(held.code, 'APPROVAL_REQUIRED');
    const approvalId = held.details?.approval_id as string;
    ok(await world.call('approval_resolve', { approval_id: approvalId, decision: 'grant' }));
    await fsp.writeFile(world.abs('cfg.json'), AFTER);
    const e = toolError(await world.call('operation_resume', { approval_id: approvalId, wait_ms: 0 }));
    assert.equal(e.code, 'VERSION_CONFLICT', e.message);
    assert.equal(e.details?.state, 'stale');
    assert.equal(e.details?.path, 'cfg.json');
    assert.equal(e.details?.current, sha256(AFTER));
    assert.equal(await fsp.readFile(world.abs('cfg.json'), 'utf8'), AFTER);
  });
});
