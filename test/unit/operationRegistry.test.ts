/**
 * The operation registry: a holdable tool is one definition. A test-only tool, `stamp_note`, declares its operation
 * (prepare, hold reason and description, after-commit work) and is added to the catalogue the dispatcher serves; with
 * no other change it is held by the approval settings, shown as a hold, granted, resumed once through
 * operation_resume (its after-commit work included), recorded in the durable ledger, and answered from the ledger
 * after a reload without running again. approval_create finds it from its own arguments.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import type { ApprovalPolicy } from '../../src/kernel/approvals/approvalService';
import { hashArguments } from '../../src/base/canonicalJson';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import type { ToolDispatcher } from '../../src/kernel/dispatch';
import type { ToolOutcome } from '../../src/kernel/dispatch';
import { defineOperationTool } from '../../src/kernel/tool';
import { hasReviewFiles } from '../../src/kernel/approvals/hold';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { makeTree, removeTree } from './helpers/workspaceFixture';

/** How often the test tool committed and ran its after-commit work (across reloads: module state). */
const counts = { commits: 0, after: 0 };

/** The whole test-only holdable tool: one definition. Writes `notes/<label>.txt`; held when commands are `confirm`. */
const stampNoteTool = defineOperationTool({
  name: 'stamp_note',
  title: 'Stamp a note',
  description: 'Test only: writes notes/<label>.txt.',
  kind: 'patch',
  input: { workspace_id: z.string().min(1), label: z.string().regex(/^[a-z]+$/), text: z.string() },
  output: { written: z.string(), followed: z.boolean().optional() },
  operation: (deps: { workspaces: WorkspaceRegistry }) => ({
    tool: 'stamp_note',
    hold: {
      reason: (_intent, policy) => (policy.commands === 'confirm' ? 'confirm' : undefined),
      description: { reviews: 'every stamp', nothing: 'stamped' },
    },
    async prepare(args) {
      const ws = deps.workspaces.get(args.workspace_id);
      return {
        workspace: ws,
        title: `stamp_note: ${args.label}`,
        intent: { request_hash: hashArguments({ tool: 'stamp_note', ...args }), sensitive_paths: [] },
        holdable: true,
        occupies: false,
        async commit() {
          counts.commits++;
          await fsp.mkdir(path.join(ws.root, 'notes'), { recursive: true });
          await fsp.writeFile(path.join(ws.root, 'notes', `${args.label}.txt`), args.text);
          return { written: `notes/${args.label}.txt` };
        },
        release: () => undefined,
      };
    },
    afterCommit: (result) => {
      counts.after++;
      return Promise.resolve({ ...result, followed: true });
    },
  }),
});

describe('the operation registry: a holdable tool from one definition', () => {
  let root: string;
  let storage: string;
  let assembled: AssembledServices;
  let dispatcher: ToolDispatcher;
  let policy: ApprovalPolicy = { patches: 'off', commands: 'confirm', agentMayResolve: true };

  async function open(): Promise<void> {
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'exec' }])), storage, {
        approvalPolicy: () => policy,
      }),
    );
    // The only change a new tool needs: its line in the catalogue.
    dispatcher = assembled.dispatcherWith([stampNoteTool.create({ workspaces: assembled.workspaces, runner: assembled.runner })]);
  }
  const call = (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => dispatcher.call(name, args, new AbortController().signal, { session: 'S1' });
  async function result(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const out = await call(name, args);
    if (out.kind !== 'result') assert.fail(`${name}: ${JSON.stringify(out)}`);
    return out.value;
  }
  async function error(name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
    const out = await call(name, args);
    if (out.kind !== 'error') assert.fail(`${name} succeeded: ${JSON.stringify(out)}`);
    return out.body;
  }

  beforeEach(async () => {
    root = await makeTree({ 'README.md': '# proj\n' });
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-registry-'));
    counts.commits = 0;
    counts.after = 0;
    policy = { patches: 'off', commands: 'confirm', agentMayResolve: true };
    await open();
  });
  afterEach(async () => {
    await assembled.shutdown();
    await removeTree(root);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('is held by the approval settings, granted, resumed once with its after-commit work, and kept in the ledger across a reload', async () => {
    const events: RunnerEvent[] = [];
    assembled.runner.onEvent((e) => events.push(e));
    const held = await error('stamp_note', { workspace_id: 'proj', label: 'first', text: 'hello' });
    assert.equal(held.code, 'APPROVAL_REQUIRED');
    assert.match(held.message, /^stamp_note is held for the developer's approval \(the developer reviews every stamp\); nothing was stamped\.$/);
    const approvalId = String(held.details?.approval_id);
    assert.equal(counts.commits, 0);
    await assert.rejects(fsp.stat(path.join(root, 'notes', 'first.txt')), { code: 'ENOENT' });
    const hold = assembled.approvals.get(approvalId);
    assert.equal(hold?.tool, 'stamp_note');
    assert.equal(hold?.state, 'pending');
    assert.deepEqual(
      events.map((e) => e.type),
      ['operation.prepared', 'operation.held'],
    );

    assert.equal((await result('approval_resolve', { approval_id: approvalId, decision: 'grant', note: 'fine' })).state, 'granted');
    const resumed = await result('operation_resume', { approval_id: approvalId, wait_ms: 0 });
    assert.deepEqual(resumed, { written: 'notes/first.txt', reviewer_note: 'fine', followed: true });
    assert.equal(await fsp.readFile(path.join(root, 'notes', 'first.txt'), 'utf8'), 'hello');
    assert.deepEqual(counts, { commits: 1, after: 1 });
    const committed = events.find((e) => e.type === 'operation.committed');
    assert.ok(committed?.type === 'operation.committed');
    assert.equal(committed.operation.tool, 'stamp_note');
    assert.equal(committed.operation.reviewable, undefined, 'an intent without files has nothing to review in a diff');
    assert.equal(hasReviewFiles(hold), false);
    assert.equal(committed.approval_id, approvalId);
    // The ledger keeps the outcome without the after-commit work's addition.
    assert.equal(assembled.approvals.stored(approvalId).state, 'consumed');
    assert.deepEqual(assembled.approvals.stored(approvalId).result, { written: 'notes/first.txt', reviewer_note: 'fine' });

    // A reload: the hold and its outcome come back from the durable journal; a repeat runs nothing again.
    await assembled.shutdown();
    await open();
    assert.equal(assembled.approvals.get(approvalId)?.state, 'consumed');
    const repeat = await result('operation_resume', { approval_id: approvalId, wait_ms: 0 });
    assert.deepEqual(repeat, { written: 'notes/first.txt', reviewer_note: 'fine', followed: true });
    assert.deepEqual(counts, { commits: 1, after: 2 });
  });

  it('runs at once when the settings do not hold it, with its after-commit work', async () => {
    policy = { patches: 'confirm', commands: 'off', agentMayResolve: false };
    assert.deepEqual(await result('stamp_note', { workspace_id: 'proj', label: 'direct', text: 'x' }), { written: 'notes/direct.txt', followed: true });
    assert.deepEqual(counts, { commits: 1, after: 1 });
  });

  it('approval_create holds it, named or found from its own arguments; a tool without a hold is refused', async () => {
    const named = await result('approval_create', { workspace_id: 'proj', tool: 'stamp_note', request: { label: 'named', text: 'a' } });
    assert.equal(named.tool, 'stamp_note');
    assert.equal(named.reason, 'explicit');
    const found = await result('approval_create', { workspace_id: 'proj', request: { label: 'found', text: 'b' } });
    assert.equal(found.tool, 'stamp_note');
    const bad = await error('approval_create', { workspace_id: 'proj', tool: 'stamp_note', request: { label: 'Not-Lower', text: 'c' } });
    assert.equal(bad.code, 'INVALID_ARGUMENTS');
    assert.equal(bad.details?.field, 'request.label');
    const notHoldable = await error('approval_create', { workspace_id: 'proj', tool: 'write_stdin', request: { process_id: 'p', data: 'x' } });
    assert.equal(notHoldable.code, 'INVALID_ARGUMENTS');
    assert.equal(notHoldable.details?.field, 'tool');
    assert.match(notHoldable.message, /cannot be held; the tools that can are apply_patch, exec_command, debug_start, stamp_note\./);
    assert.equal(counts.commits, 0);
  });
});
