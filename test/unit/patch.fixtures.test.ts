import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { parsePatch } from '../../src/features/patches/common/parser';
import { planPatch } from '../../src/features/patches/common/plan';
import type { PlannedPatch } from '../../src/features/patches/common/plan';
import { contentVersion } from '../../src/features/patches/common/version';
import { openPatchWorld } from './helpers/patchWorld';
import { toolError } from './helpers/workspaceFixture';

/**
 * Golden files for the patch engine: each folder of test/fixtures/patches is one case with
 *   before/         the workspace before (optional)
 *   patch           the patch text
 *   after/          the expected workspace, compared byte for byte, or
 *   error           JSON { code, details? }: the expected ToolError (details compared field by field)
 *   versions.json   optional expected_versions; the value "current" stands for the file's real version.
 * A new bug becomes a new folder.
 */

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/patches');

interface Tree {
  files: Map<string, Uint8Array>;
  dirs: Set<string>;
}

function readTree(root: string): Tree {
  const tree: Tree = { files: new Map(), dirs: new Set() };
  if (!fs.existsSync(root)) return tree;
  const walk = (dir: string, rel: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        tree.dirs.add(r);
        walk(abs, r);
      } else tree.files.set(r, new Uint8Array(fs.readFileSync(abs)));
    }
  };
  walk(root, '');
  return tree;
}

/** Applies a plan to an in-memory tree the way an applier would. */
function applyPlan(before: Tree, planned: PlannedPatch): Map<string, Uint8Array> {
  const out = new Map(before.files);
  for (const f of planned.files) if (f.kind === 'delete' || f.kind === 'move') out.delete(f.path);
  for (const f of planned.files) {
    if (f.after === undefined) continue;
    out.set(f.kind === 'move' ? (f.move_to as string) : f.path, f.after);
  }
  return out;
}

function show(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '(absent)' : JSON.stringify(Buffer.from(bytes).toString('utf8'));
}

const cases = fs
  .readdirSync(FIXTURES, { withFileTypes: true })
  .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !e.name.startsWith('_'))
  .map((e) => e.name)
  .sort();

describe('patch engine fixtures', () => {
  it('has the golden cases', () => {
    assert.ok(cases.length >= 45, `only ${cases.length} fixtures`);
  });

  for (const name of cases) {
    it(name, async () => {
      const dir = path.join(FIXTURES, name);
      const before = readTree(path.join(dir, 'before'));
      const patchText = fs.readFileSync(path.join(dir, 'patch'), 'utf8');
      const errorFile = path.join(dir, 'error');
      const versionsFile = path.join(dir, 'versions.json');
      const expectedError = fs.existsSync(errorFile) ? (JSON.parse(fs.readFileSync(errorFile, 'utf8')) as { code: string; details?: Record<string, unknown> }) : undefined;

      const lookups: string[] = [];
      const getFile = (rel: string): Promise<{ bytes: Uint8Array; mode?: number } | undefined | 'directory'> => {
        lookups.push(rel);
        if (before.dirs.has(rel)) return Promise.resolve('directory');
        const bytes = before.files.get(rel);
        return Promise.resolve(bytes === undefined ? undefined : { bytes, mode: 0o644 });
      };

      let result: Map<string, Uint8Array> | undefined;
      let planned: PlannedPatch | undefined;
      try {
        let expected: Record<string, string> | undefined;
        if (fs.existsSync(versionsFile)) {
          const raw = JSON.parse(fs.readFileSync(versionsFile, 'utf8')) as Record<string, string>;
          expected = {};
          for (const [p, v] of Object.entries(raw)) {
            const bytes = before.files.get(p);
            expected[p] = v === 'current' && bytes !== undefined ? contentVersion(bytes) : v;
          }
        }
        planned = await planPatch(parsePatch(patchText), getFile, expected === undefined ? {} : { expected });
        result = applyPlan(before, planned);
      } catch (err) {
        if (expectedError === undefined) throw err;
        assert.ok(ToolError.is(err), `expected a ToolError, got ${String(err)}`);
        assert.equal(err.code, expectedError.code, `wrong code; message: ${err.message}`);
        assert.ok(err.hint !== undefined && err.hint.length > 0, 'a ToolError carries a hint');
        for (const [key, value] of Object.entries(expectedError.details ?? {})) {
          assert.deepEqual(err.details?.[key], value, `details.${key} (details: ${JSON.stringify(err.details)})`);
        }
        return;
      }
      assert.equal(expectedError, undefined, `expected ${expectedError?.code} but the patch planned fine`);

      const after = readTree(path.join(dir, 'after')).files;
      assert.deepEqual([...result.keys()].sort(), [...after.keys()].sort(), 'the set of files after the patch');
      for (const [p, bytes] of after) {
        const got = result.get(p);
        assert.ok(got !== undefined && Buffer.from(got).equals(Buffer.from(bytes)), `${p}: expected ${show(bytes)}, got ${show(got)}`);
      }
      // Every planned file carries what an applier and a preview need.
      for (const f of planned.files) {
        if (f.after !== undefined) assert.equal(f.afterVersion, contentVersion(f.after));
        if (f.before !== undefined) {
          assert.equal(f.beforeVersion, contentVersion(f.before));
          assert.equal(f.mode, 0o644);
        }
        if (f.kind !== 'move') assert.ok(f.diff.length > 0 || (f.before !== undefined && f.after !== undefined && Buffer.from(f.before).equals(Buffer.from(f.after))), `${f.path}: a diff`);
      }
    });
  }
});

/** Files below `root` (folders left out), for comparing a real workspace with a fixture's after/ tree. */
function diskFiles(root: string): Map<string, Uint8Array> {
  return readTree(root).files;
}

/**
 * The same golden cases through the real writer: PatchService on the Node adapter with its ledger (patchWorld), over
 * a real MCP client. expected_versions is the fixture's versions.json, or else the current version of every file in
 * before/ (what an agent that read them would send).
 */
describe('patch engine fixtures through the real PatchService', () => {
  for (const name of cases) {
    it(name, async () => {
      const dir = path.join(FIXTURES, name);
      const before = readTree(path.join(dir, 'before'));
      const patchText = fs.readFileSync(path.join(dir, 'patch'), 'utf8');
      const errorFile = path.join(dir, 'error');
      const versionsFile = path.join(dir, 'versions.json');
      const expectedError = fs.existsSync(errorFile) ? (JSON.parse(fs.readFileSync(errorFile, 'utf8')) as { code: string; details?: Record<string, unknown> }) : undefined;
      const world = await openPatchWorld(Object.fromEntries(before.files));
      try {
        for (const d of before.dirs) fs.mkdirSync(world.abs(d), { recursive: true });
        const expected: Record<string, string> = {};
        if (fs.existsSync(versionsFile)) {
          for (const [p, v] of Object.entries(JSON.parse(fs.readFileSync(versionsFile, 'utf8')) as Record<string, string>)) {
            const bytes = before.files.get(p);
            expected[p] = v === 'current' && bytes !== undefined ? contentVersion(bytes) : v;
          }
        } else {
          for (const [p, bytes] of before.files) expected[p] = contentVersion(bytes);
        }
        const args = { workspace_id: 'proj', patch: patchText, expected_versions: expected, operation_key: `fixture-${name}` };
        if (patchText === '') {
          // The input schema refuses an empty patch before the service sees it: INVALID_ARGUMENTS naming the field.
          const e = toolError(await world.call('apply_patch', args));
          assert.equal(e.code, 'INVALID_ARGUMENTS');
          assert.match(e.message, /^patch:/);
          assert.deepEqual(world.writes(), []);
          return;
        }
        const result = await world.call('apply_patch', args);
        if (expectedError !== undefined) {
          const e = toolError(result);
          assert.equal(e.code, expectedError.code, `wrong code; message: ${e.message}`);
          for (const [key, value] of Object.entries(expectedError.details ?? {})) {
            assert.deepEqual(e.details?.[key], value, `details.${key} (details: ${JSON.stringify(e.details)})`);
          }
          const now = diskFiles(world.root);
          assert.deepEqual([...now.keys()].sort(), [...before.files.keys()].sort(), 'a refused patch leaves the workspace as it was');
          for (const [p, bytes] of before.files) assert.ok(Buffer.from(now.get(p) as Uint8Array).equals(Buffer.from(bytes)), `${p} unchanged`);
          assert.deepEqual(world.writes(), [], 'nothing was written');
          return;
        }
        assert.ok(!result.isError, `the patch failed: ${JSON.stringify(result.content)}`);
        assert.equal((result.structuredContent as { status: string }).status, 'applied');
        const after = readTree(path.join(dir, 'after')).files;
        const now = diskFiles(world.root);
        assert.deepEqual([...now.keys()].sort(), [...after.keys()].sort(), 'the set of files after the patch');
        for (const [p, bytes] of after) {
          const got = now.get(p);
          assert.ok(got !== undefined && Buffer.from(got).equals(Buffer.from(bytes)), `${p}: expected ${show(bytes)}, got ${show(got)}`);
        }
      } finally {
        await world.dispose();
      }
    });
  }
});
