/**
 * apply_patch and operation_status end to end: a real SDK client over InMemoryTransport, the services the
 * extension assembles (FileJournal → OperationLedger → PatchService on NodeWorkspaceFs) and real temp folders.
 * Covers the TOOLS.md "Patch" contract and every "Patches" line of THREATS.md (the crash line is in
 * patchServiceCrash.test.ts).
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { ApplyResult, PatchWorld, StatusResult, WorldOptions } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, snapshotTree, v4a } from './helpers/patchWorld';

const APP = 'src/app.ts';
const APP_TEXT = 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n\nexport const answer = 41;\n';
const APP_PATCH = v4a(`*** Update File: ${APP}`, '@@', '-export const answer = 41;', '+export const answer = 42;');
const APP_AFTER = APP_TEXT.replace('41', '42');

/** A past mtime, so "unchanged" cannot be confused with "rewritten within the same clock tick". */
const PAST = new Date('2020-01-02T03:04:05Z');

async function agePaths(world: PatchWorld, ...rels: string[]): Promise<void> {
  for (const rel of rels) await fsp.utimes(world.abs(rel), PAST, PAST);
}

async function text(world: PatchWorld, rel: string): Promise<string> {
  return fsp.readFile(world.abs(rel), 'utf8');
}

async function exists(p: string): Promise<boolean> {
  return fsp.lstat(p).then(
    () => true,
    () => false,
  );
}

describe('apply_patch through MCP on the assembled services', function () {
  this.timeout(30_000);
  const worlds: PatchWorld[] = [];

  async function world(files: Record<string, string | Uint8Array>, options: WorldOptions = {}): Promise<PatchWorld> {
    const w = await openPatchWorld(files, options);
    worlds.push(w);
    return w;
  }

  afterEach(async () => {
    for (const w of worlds.splice(0)) await w.dispose();
  });

  describe('the contract: read → preview → apply → read back', () => {
    it('previews with a unified diff and the resulting version, writes nothing, then applies exactly that version', async () => {
      const w = await world({ [APP]: APP_TEXT });
      await agePaths(w, APP);
      const read = await w.read(APP);
      assert.equal(read.version, sha256(APP_TEXT));
      const before = await snapshotTree(w.root);

      const preview = await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: read.version }, operation_key: 'preview-1', check_only: true });
      assert.equal(preview.status, 'checked');
      assert.equal(preview.files.length, 1);
      const [pf] = preview.files;
      assert.deepEqual({ path: pf?.path, kind: pf?.kind, before: pf?.before_version }, { path: APP, kind: 'update', before: read.version });
      assert.match(pf?.diff ?? '', /^--- a\/src\/app\.ts$/m);
      assert.match(pf?.diff ?? '', /^\+\+\+ b\/src\/app\.ts$/m);
      assert.match(pf?.diff ?? '', /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m);
      assert.match(pf?.diff ?? '', /^-export const answer = 41;$/m);
      assert.match(pf?.diff ?? '', /^\+export const answer = 42;$/m);
      assert.equal(pf?.after_version, sha256(APP_AFTER));
      assert.deepEqual(await snapshotTree(w.root), before, 'a preview writes nothing');
      assert.deepEqual(w.writes(), []);

      const applied = await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: read.version }, operation_key: 'apply-1' });
      assert.equal(applied.status, 'applied');
      assert.notEqual(applied.operation_id, preview.operation_id);
      assert.equal(applied.files[0]?.after_version, pf?.after_version, 'apply writes the version the preview announced');
      assert.equal(applied.files[0]?.diff, undefined, 'diffs belong to previews');
      const disk = await fsp.readFile(w.abs(APP));
      assert.equal(disk.toString('utf8'), APP_AFTER);
      assert.equal(sha256(disk), pf?.after_version);

      const back = await w.read(APP);
      assert.equal(back.content, APP_AFTER);
      assert.equal(back.version, applied.files[0]?.after_version);

      const leftovers = Object.keys(await snapshotTree(w.root)).filter((p) => p.includes('.codespace-'));
      assert.deepEqual(leftovers, [], 'no temp file is left next to the target');
    });

    it('records both requests: operation_status by key and by id, with changes and events', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const v = (await w.read(APP)).version;
      const mode = (await fsp.stat(w.abs(APP))).mode & 0o7777;
      const preview = await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: v }, operation_key: 'p' , check_only: true });
      const workId = (await w.harness.services.steering.openWork(WS_ID, 'records')).id;
      const applied = await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: v }, operation_key: 'a', work_id: workId });

      const byKey = await w.status({ operation_key: 'a' });
      const byId = await w.status({ operation_id: applied.operation_id });
      assert.deepEqual(byKey, byId);
      assert.equal(byKey.kind, 'patch');
      assert.equal(byKey.status, 'applied');
      assert.equal(byKey.workspace_id, WS_ID);
      assert.equal((byKey as StatusResult & { work_id?: string }).work_id, workId);
      assert.ok(byKey.finished_at && Date.parse(byKey.finished_at) >= Date.parse(byKey.created_at));
      assert.deepEqual(byKey.changes, [{ path: APP, kind: 'update', before_hash: v, after_hash: sha256(APP_AFTER), before_mode: mode, after_mode: mode }]);
      assert.deepEqual(byKey.files, [{ path: APP, kind: 'update', before_version: v, after_version: sha256(APP_AFTER) }]);
      assert.deepEqual(byKey.events.map((e) => [e.type, e.status]), [['minted', undefined], ['finished', 'applied']]);
      assert.ok(byKey.events[1]?.reason, 'the finished event carries a reason');

      const p = await w.status({ operation_key: 'p' });
      assert.equal(p.operation_id, preview.operation_id);
      assert.equal(p.status, 'checked');
      assert.deepEqual(p.changes, [], 'a preview records no change');
    });

    it('a preview key cannot be reused for the apply (different requests, different keys)', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const v = (await w.read(APP)).version;
      await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: v }, operation_key: 'k', check_only: true });
      await agePaths(w, APP);
      const before = await snapshotTree(w.root);
      const e = await w.applyError({ patch: APP_PATCH, expected_versions: { [APP]: v }, operation_key: 'k' });
      assert.equal(e.code, 'OPERATION_KEY_CONFLICT');
      assert.deepEqual(await snapshotTree(w.root), before);
    });

    it('adds, deletes and moves with edits in one patch; the move keeps the mode', async () => {
      const w = await world({ 'old/name.ts': 'const x = 1;\nexport default x;\n', 'gone.txt': 'bye\n' });
      await fsp.chmod(w.abs('old/name.ts'), 0o755);
      const patch = v4a(
        '*** Add File: docs/new.md',
        '+# New',
        '+',
        '+text',
        '*** Delete File: gone.txt',
        '*** Update File: old/name.ts',
        '*** Move to: lib/deep/renamed.ts',
        '@@',
        '-const x = 1;',
        '+const x = 2;',
        ' export default x;',
      );
      const versions = { 'old/name.ts': (await w.read('old/name.ts')).version, 'gone.txt': (await w.read('gone.txt')).version };
      const preview = await w.apply({ patch, expected_versions: versions, operation_key: 'mv-preview', check_only: true });
      const r = await w.apply({ patch, expected_versions: versions, operation_key: 'mv' });
      assert.equal(r.status, 'applied');
      assert.deepEqual(
        r.files.map((f) => [f.path, f.kind, f.move_to]),
        [
          ['docs/new.md', 'add', undefined],
          ['gone.txt', 'delete', undefined],
          ['old/name.ts', 'move', 'lib/deep/renamed.ts'],
        ],
      );
      assert.equal(await text(w, 'docs/new.md'), '# New\n\ntext\n');
      assert.equal(await exists(w.abs('gone.txt')), false);
      assert.equal(await exists(w.abs('old/name.ts')), false);
      assert.equal(await text(w, 'lib/deep/renamed.ts'), 'const x = 2;\nexport default x;\n');
      assert.equal((await fsp.stat(w.abs('lib/deep/renamed.ts'))).mode & 0o777, 0o755, 'the moved file keeps its exec bit');
      assert.deepEqual(r.files.map((f) => f.after_version), preview.files.map((f) => f.after_version));
      assert.equal(r.files[2]?.after_version, sha256(await fsp.readFile(w.abs('lib/deep/renamed.ts'))));
      const st = await w.status({ operation_key: 'mv' });
      assert.deepEqual(
        st.changes.map((c) => [c.path, c.kind, c.before_hash === null, c.after_hash === null]),
        [
          ['docs/new.md', 'add', true, false],
          ['gone.txt', 'delete', false, true],
          ['old/name.ts', 'move', false, true],
          ['lib/deep/renamed.ts', 'move', true, false],
        ],
      );
    });
  });

  describe('versions', () => {
    it('stale expected_versions → VERSION_CONFLICT; file byte-identical, mtime unchanged', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const stale = (await w.read(APP)).version;
      await fsp.writeFile(w.abs(APP), APP_TEXT.replace('Hello', 'Hi'));
      await agePaths(w, APP);
      const before = await snapshotTree(w.root);
      const e = await w.applyError({ patch: APP_PATCH, expected_versions: { [APP]: stale }, operation_key: 'stale' });
      assert.equal(e.code, 'VERSION_CONFLICT');
      assert.match(e.message, /src\/app\.ts/);
      assert.deepEqual(await snapshotTree(w.root), before, 'same bytes, same mtime');
      assert.deepEqual(w.writes(), []);
    });

    it('an existing file without an expected_versions entry → VERSION_REQUIRED, nothing written', async () => {
      const w = await world({ [APP]: APP_TEXT, 'b.txt': 'b\n' });
      const v = (await w.read(APP)).version;
      await agePaths(w, APP, 'b.txt');
      const before = await snapshotTree(w.root);
      const patch = v4a(`*** Update File: ${APP}`, '@@', '-export const answer = 41;', '+export const answer = 0;', '*** Delete File: b.txt');
      const e = await w.applyError({ patch, expected_versions: { [APP]: v }, operation_key: 'nov' });
      assert.equal(e.code, 'VERSION_REQUIRED');
      assert.match(e.message, /b\.txt/);
      assert.deepEqual(await snapshotTree(w.root), before);
    });
  });

  describe('refused patches: a specific error each, workspace unchanged, nothing recorded', () => {
    const files = { [APP]: APP_TEXT, 'dir/inner.txt': 'inner\n', 'exists.txt': 'here\n' };
    const cases: { name: string; patch: string; code: string; message: RegExp }[] = [
      { name: 'empty patch (no section)', patch: v4a(), code: 'PATCH_INVALID', message: /expected a file section/ },
      { name: 'empty patch (blank text)', patch: '\n\n', code: 'PATCH_INVALID', message: /empty/ },
      { name: 'bad header', patch: v4a('*** Frobnicate File: src/app.ts', '+x'), code: 'PATCH_INVALID', message: /unknown header/ },
      { name: 'missing Begin', patch: '*** Update File: src/app.ts\n@@\n-a\n+b\n*** End Patch', code: 'PATCH_INVALID', message: /Begin Patch/ },
      {
        name: 'missing context',
        patch: v4a(`*** Update File: ${APP}`, '@@', ' no such line here', '-export const answer = 41;', '+export const answer = 1;'),
        code: 'PATCH_CONTEXT_NOT_FOUND',
        message: /src\/app\.ts/,
      },
      { name: 'update of a missing file', patch: v4a('*** Update File: src/missing.ts', '@@', '-a', '+b'), code: 'NOT_FOUND', message: /src\/missing\.ts/ },
      { name: 'delete of a directory', patch: v4a('*** Delete File: dir'), code: 'IS_DIRECTORY', message: /folder/ },
      { name: 'add over an existing file', patch: v4a('*** Add File: exists.txt', '+new'), code: 'FILE_EXISTS', message: /exists\.txt/ },
    ];
    for (const c of cases) {
      it(`${c.name} → ${c.code}`, async () => {
        const w = await world(files);
        await agePaths(w, APP, 'dir/inner.txt', 'exists.txt');
        const versions = { [APP]: sha256(APP_TEXT), 'exists.txt': sha256('here\n'), dir: 'sha256:0' };
        const before = await snapshotTree(w.root);
        const e = await w.applyError({ patch: c.patch, expected_versions: versions, operation_key: `bad-${c.name}` });
        assert.equal(e.code, c.code, e.message);
        assert.match(e.message, c.message);
        assert.deepEqual(await snapshotTree(w.root), before);
        assert.deepEqual(w.writes(), []);
        const nf = await w.call('operation_status', { operation_key: `bad-${c.name}` });
        assert.equal(nf.isError, true, 'a refused patch is not recorded');
      });
    }

    it('an empty patch string is refused by the schema (INVALID_ARGUMENTS naming patch)', async () => {
      const w = await world(files);
      const res = await w.harness.call('apply_patch', { workspace_id: WS_ID, patch: '', expected_versions: {}, operation_key: 'e' });
      assert.equal(res.isError, true);
      const body = JSON.parse((res.content[0] as { text: string }).text) as { error: { code: string; message: string; details: { field: string } } };
      assert.equal(body.error.code, 'INVALID_ARGUMENTS');
      assert.equal(body.error.details.field, 'patch');
      assert.equal(body.error.message, 'patch: expected a non-empty string, got an empty string');
    });

    it('a multi-file patch whose second file fails validation leaves every file unchanged', async () => {
      const w = await world({ 'a.txt': 'one\ntwo\n', 'b.txt': 'three\nfour\n' });
      await agePaths(w, 'a.txt', 'b.txt');
      const before = await snapshotTree(w.root);
      const versions = { 'a.txt': sha256('one\ntwo\n'), 'b.txt': sha256('three\nfour\n') };
      const patch = v4a('*** Update File: a.txt', '@@', '-one', '+ONE', '*** Update File: b.txt', '@@', ' nowhere', '-four', '+FOUR', '*** Add File: c.txt', '+c');
      const e = await w.applyError({ patch, expected_versions: versions, operation_key: 'multi' });
      assert.equal(e.code, 'PATCH_CONTEXT_NOT_FOUND');
      assert.match(e.message, /b\.txt/);
      assert.deepEqual(await snapshotTree(w.root), before);

      const stale = { ...versions, 'b.txt': sha256('old') };
      const good = v4a('*** Update File: a.txt', '@@', '-one', '+ONE', '*** Update File: b.txt', '@@', '-four', '+FOUR');
      const e2 = await w.applyError({ patch: good, expected_versions: stale, operation_key: 'multi-2' });
      assert.equal(e2.code, 'VERSION_CONFLICT');
      assert.deepEqual(await snapshotTree(w.root), before);
      assert.deepEqual(w.writes(), []);
    });
  });

  describe('write failures', () => {
    it('a write failing on the 2nd file → failed; the 1st is restored byte-identical with its mode', async () => {
      let fail = true;
      const w = await world({ 'a.sh': '#!/bin/sh\necho a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, { faults: { failWrite: (i) => fail && i === 1 } });
      await fsp.chmod(w.abs('a.sh'), 0o755);
      const before = await snapshotTree(w.root);
      const versions = { 'a.sh': sha256('#!/bin/sh\necho a\n'), 'b.txt': sha256('b\n'), 'c.txt': sha256('c\n') };
      const patch = v4a('*** Update File: a.sh', '@@', '-echo a', '+echo A', '*** Update File: b.txt', '@@', '-b', '+B', '*** Delete File: c.txt');
      const r = await w.apply({ patch, expected_versions: versions, operation_key: 'wf' });
      assert.equal(r.status, 'failed');
      assert.match(r.reason ?? '', /b\.txt/);
      assert.match(r.reason ?? '', /restored/);
      const after = await snapshotTree(w.root);
      for (const rel of ['a.sh', 'b.txt', 'c.txt']) {
        const [b, a] = [before[rel], after[rel]];
        assert.ok(typeof a === 'object' && typeof b === 'object');
        assert.deepEqual({ hash: a.hash, mode: a.mode }, { hash: b.hash, mode: b.mode }, rel);
      }
      assert.deepEqual(Object.keys(after).sort(), Object.keys(before).sort(), 'no temp file left, nothing added or removed');
      assert.equal((await w.status({ operation_key: 'wf' })).status, 'failed');

      // The failure is recorded: the same key and arguments get the stored answer, not a second attempt.
      fail = false;
      const n = w.writes().length;
      assert.deepEqual(await w.apply({ patch, expected_versions: versions, operation_key: 'wf' }), r);
      assert.equal(w.writes().length, n);
    });

    it('a failure after an add, an update and a delete undoes all three', async () => {
      const w = await world({ 'u.txt': 'u\n', 'd.txt': 'd\n', 'z.txt': 'z\n' }, { faults: { failWrite: (i) => i === 3 } });
      const before = await snapshotTree(w.root);
      const versions = { 'u.txt': sha256('u\n'), 'd.txt': sha256('d\n'), 'z.txt': sha256('z\n') };
      const patch = v4a('*** Add File: new/added.txt', '+added', '*** Update File: u.txt', '@@', '-u', '+U', '*** Delete File: d.txt', '*** Update File: z.txt', '@@', '-z', '+Z');
      const r = await w.apply({ patch, expected_versions: versions, operation_key: 'undo3' });
      assert.equal(r.status, 'failed');
      const after = await snapshotTree(w.root);
      assert.equal(after['new/added.txt'], undefined, 'the added file is gone');
      assert.equal(after['new'], undefined, 'so is the folder the patch created for it');
      for (const rel of ['u.txt', 'd.txt', 'z.txt']) assert.equal((after[rel] as { hash: string }).hash, (before[rel] as { hash: string }).hash, rel);
    });

    it('a restore removes the folders the patch created, and only those', async () => {
      const w = await world({ 'keep/old.txt': 'old\n', 'm.txt': 'm\n' }, { faults: { failWrite: (i) => i === 3 } });
      const patch = v4a(
        '*** Add File: n/x/a.txt', '+a',
        '*** Add File: n/x/b.txt', '+b',
        '*** Add File: keep/new/c.txt', '+c',
        '*** Update File: m.txt', '*** Move to: moved/deep/m.txt', '@@', '-m', '+M',
      );
      const r = await w.apply({ patch, expected_versions: { 'm.txt': sha256('m\n') }, operation_key: 'folders' });
      assert.equal(r.status, 'failed');
      const after = await snapshotTree(w.root);
      assert.deepEqual(Object.keys(after).sort(), ['keep', 'keep/old.txt', 'm.txt']);
    });

    it('a restore that fails too → failed_partial with the state of each file', async () => {
      const w = await world({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const versions = { 'a.txt': sha256('a\n'), 'b.txt': sha256('b\n') };
      const patch = v4a('*** Update File: a.txt', '@@', '-a', '+A', '*** Update File: b.txt', '@@', '-b', '+B');
      w.breakable.writesLeft = 1; // the disk fails after the first write and stays broken
      const r = await w.apply({ patch, expected_versions: versions, operation_key: 'partial' });
      w.breakable.writesLeft = Number.POSITIVE_INFINITY;
      assert.equal(r.status, 'failed_partial');
      assert.match(r.reason ?? '', /could not be restored/);
      const state = Object.fromEntries(r.files.map((f) => [f.path, f.state]));
      assert.match(state['a.txt'] ?? '', /^restore failed: .*EIO/);
      assert.equal(state['b.txt'], 'restored');
      assert.equal(await text(w, 'a.txt'), 'A\n', 'the state reported is the state on disk');
      assert.equal(await text(w, 'b.txt'), 'b\n');
      const st = await w.status({ operation_key: 'partial' });
      assert.equal(st.status, 'failed_partial');
      assert.equal(st.events.at(-1)?.status, 'failed_partial');
    });
  });

  describe('idempotency', () => {
    it('same key and arguments after success → the stored result, no second write', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const args = { patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'once' };
      const first = await w.apply(args);
      assert.equal(first.status, 'applied');
      await agePaths(w, APP);
      const snap = await snapshotTree(w.root);
      const writes = w.writes().length;
      const again = await w.apply(args);
      assert.deepEqual(again, first);
      assert.deepEqual(await snapshotTree(w.root), snap, 'mtime unchanged');
      assert.equal(w.writes().length, writes);
    });

    it('same key with other arguments → OPERATION_KEY_CONFLICT, nothing applied', async () => {
      const w = await world({ [APP]: APP_TEXT, 'x.txt': 'x\n' });
      await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'k1' });
      await agePaths(w, APP, 'x.txt');
      const snap = await snapshotTree(w.root);
      const other = v4a('*** Update File: x.txt', '@@', '-x', '+X');
      const e = await w.applyError({ patch: other, expected_versions: { 'x.txt': sha256('x\n') }, operation_key: 'k1' });
      assert.equal(e.code, 'OPERATION_KEY_CONFLICT');
      assert.deepEqual(await snapshotTree(w.root), snap);
      assert.equal((await w.status({ operation_key: 'k1' })).files[0]?.path, APP, 'the key still names the first request');
    });

    it('a failed validation is not cached: a corrected retry with the same key runs', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const broken = v4a(`*** Update File: ${APP}`, '@@', '-export const answer = 40;', '+export const answer = 42;');
      const e = await w.applyError({ patch: broken, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'retry' });
      assert.equal(e.code, 'PATCH_CONTEXT_NOT_FOUND');
      const stale = await w.applyError({ patch: APP_PATCH, expected_versions: { [APP]: sha256('stale') }, operation_key: 'retry' });
      assert.equal(stale.code, 'VERSION_CONFLICT');
      const r = await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'retry' });
      assert.equal(r.status, 'applied');
      assert.equal(await text(w, APP), APP_AFTER);
    });

    it('two identical requests in flight at once apply once', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const args = { patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'race' };
      const [a, b] = await Promise.all([w.apply(args), w.apply(args)]);
      assert.deepEqual(a, b);
      assert.equal(a.status, 'applied');
      assert.equal(w.writes().length, 1);
    });

    it('records survive a restart: the stored result comes back from the journal', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const args = { patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'durable' };
      const first = await w.apply(args);
      await w.close();
      const again = await world({}, { dirs: { tmp: w.tmp, root: w.root, storage: w.storage } });
      assert.equal((await again.status({ operation_key: 'durable' })).status, 'applied');
      assert.deepEqual(await again.apply(args), first);
      assert.deepEqual(again.writes(), []);
    });
  });

  describe('editor and file properties', () => {
    it('a target with unsaved edits → FILE_DIRTY_IN_EDITOR, never a write under the buffer', async () => {
      const w = await world({ [APP]: APP_TEXT, 'other.ts': 'o\n' });
      await agePaths(w, APP, 'other.ts');
      const snap = await snapshotTree(w.root);
      w.spy.dirty.add(w.abs(APP));
      const e = await w.applyError({ patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'dirty' });
      assert.equal(e.code, 'FILE_DIRTY_IN_EDITOR');
      assert.deepEqual(e.details, { path: APP });

      // The destination of a move counts too (an editor can hold unsaved text for a path not on disk), and so
      // does the path of an added file.
      w.spy.dirty.clear();
      w.spy.dirty.add(w.abs('dest.ts'));
      const move = v4a('*** Update File: other.ts', '*** Move to: dest.ts', '@@', '-o', '+p');
      const e2 = await w.applyError({ patch: move, expected_versions: { 'other.ts': sha256('o\n') }, operation_key: 'dirty-move' });
      assert.equal(e2.code, 'FILE_DIRTY_IN_EDITOR');
      assert.deepEqual(e2.details, { path: 'dest.ts' });
      const add = v4a('*** Add File: dest.ts', '+new');
      assert.equal((await w.applyError({ patch: add, expected_versions: {}, operation_key: 'dirty-add' })).code, 'FILE_DIRTY_IN_EDITOR');
      assert.deepEqual(await snapshotTree(w.root), snap);
      assert.deepEqual(w.writes(), []);

      // Once saved or reverted, the same key runs (the refusal was not recorded).
      w.spy.dirty.clear();
      assert.equal((await w.apply({ patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'dirty' })).status, 'applied');
    });

    it('exec bit, CRLF, BOM and a missing final newline survive an update', async () => {
      const files = {
        'bin/run.sh': '#!/bin/sh\necho one\necho two\n',
        'crlf.txt': 'alpha\r\nbeta\r\ngamma\r\n',
        'bom.ts': '\uFEFFexport const a = 1;\nexport const b = 2;\n',
        'nonl.txt': 'first\nsecond\nlast',
        'bomcrlf.txt': '\uFEFFone\r\ntwo\r\nthree',
      };
      const w = await world(files);
      await fsp.chmod(w.abs('bin/run.sh'), 0o755);
      const versions = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, sha256(v)]));
      const patch = v4a(
        '*** Update File: bin/run.sh',
        '@@',
        ' echo one',
        '-echo two',
        '+echo TWO',
        '*** Update File: crlf.txt',
        '@@',
        ' alpha',
        '-beta',
        '+BETA',
        '+inserted',
        '*** Update File: bom.ts',
        '@@',
        '-export const a = 1;',
        '+export const a = 10;',
        '*** Update File: nonl.txt',
        '@@',
        ' second',
        '-last',
        '+LAST',
        '*** End of File',
        '*** Update File: bomcrlf.txt',
        '@@',
        '-one',
        '+ONE',
      );
      const preview = await w.apply({ patch, expected_versions: versions, operation_key: 'props-preview', check_only: true });
      const r = await w.apply({ patch, expected_versions: versions, operation_key: 'props' });
      assert.equal(r.status, 'applied');
      const expected: Record<string, string> = {
        'bin/run.sh': '#!/bin/sh\necho one\necho TWO\n',
        'crlf.txt': 'alpha\r\nBETA\r\ninserted\r\ngamma\r\n',
        'bom.ts': '\uFEFFexport const a = 10;\nexport const b = 2;\n',
        'nonl.txt': 'first\nsecond\nLAST',
        'bomcrlf.txt': '\uFEFFONE\r\ntwo\r\nthree',
      };
      for (const [rel, want] of Object.entries(expected)) {
        const bytes = await fsp.readFile(w.abs(rel));
        assert.equal(JSON.stringify(bytes.toString('utf8')), JSON.stringify(want), rel);
        const f = r.files.find((x) => x.path === rel);
        assert.equal(f?.after_version, sha256(bytes), `${rel}: after_version is the hash of the bytes written`);
        assert.equal(preview.files.find((x) => x.path === rel)?.after_version, f?.after_version, `${rel}: the preview announced it`);
      }
      assert.deepEqual([...(await fsp.readFile(w.abs('bom.ts'))).subarray(0, 3)], [0xef, 0xbb, 0xbf]);
      assert.equal((await fsp.stat(w.abs('bin/run.sh'))).mode & 0o777, 0o755, 'chmod 755 survives');
      assert.equal((await fsp.stat(w.abs('crlf.txt'))).mode & 0o777, 0o644);
    });
  });

  describe('symbolic links inside the workspace', () => {
    it('an update through a link patches its target and keeps the link; deleting the link keeps the target', async () => {
      const w = await world({ 'real.ts': 'a\nb\n' });
      await fsp.symlink('real.ts', w.abs('alias.ts'));
      const v = (await w.read('alias.ts')).version;
      const r = await w.apply({ patch: v4a('*** Update File: alias.ts', '@@', '-a', '+A'), expected_versions: { 'alias.ts': v }, operation_key: 'via-link' });
      assert.equal(r.status, 'applied');
      assert.equal((await fsp.lstat(w.abs('alias.ts'))).isSymbolicLink(), true, 'the link is still a link');
      assert.equal(await text(w, 'real.ts'), 'A\nb\n', 'its target holds the change');
      assert.equal(r.files[0]?.after_version, sha256('A\nb\n'));

      const d = await w.apply({ patch: v4a('*** Delete File: alias.ts'), expected_versions: { 'alias.ts': sha256('A\nb\n') }, operation_key: 'rm-link' });
      assert.equal(d.status, 'applied');
      assert.equal(await exists(w.abs('alias.ts')), false);
      assert.equal(await text(w, 'real.ts'), 'A\nb\n');
    });

    it('a failed patch puts a deleted link back as a link, not as a copy of its target', async () => {
      const w = await world({ 'real.ts': 'a\n', 'other.txt': 'o\n' }, { faults: { failWrite: (i) => i === 1 } });
      await fsp.symlink('real.ts', w.abs('alias.ts'));
      const patch = v4a('*** Delete File: alias.ts', '*** Update File: other.txt', '@@', '-o', '+O');
      const r = await w.apply({ patch, expected_versions: { 'alias.ts': sha256('a\n'), 'other.txt': sha256('o\n') }, operation_key: 'link-restore' });
      assert.equal(r.status, 'failed');
      assert.equal((await fsp.lstat(w.abs('alias.ts'))).isSymbolicLink(), true, 'the link is back');
      assert.equal(await fsp.readlink(w.abs('alias.ts')), 'real.ts');
      assert.equal(await text(w, 'other.txt'), 'o\n');
    });

    it('two sections reaching one file through a link → PATCH_INVALID, nothing written', async () => {
      const w = await world({ 'real.ts': 'a\nb\n', 'dir/x.ts': 'x\n' });
      await fsp.symlink('real.ts', w.abs('alias.ts'));
      await fsp.symlink('dir', w.abs('dirlink'));
      await agePaths(w, 'real.ts', 'dir/x.ts');
      const snap = await snapshotTree(w.root);
      const v = sha256('a\nb\n');
      const twice = v4a('*** Update File: alias.ts', '@@', '-a', '+A', '*** Update File: real.ts', '@@', '-b', '+B');
      const e = await w.applyError({ patch: twice, expected_versions: { 'alias.ts': v, 'real.ts': v }, operation_key: 'twice' });
      assert.equal(e.code, 'PATCH_INVALID');
      assert.deepEqual(e.details, { path: 'real.ts', same_as: 'alias.ts' });
      const viaDir = v4a('*** Update File: dir/x.ts', '@@', '-x', '+X', '*** Delete File: dirlink/x.ts');
      const e2 = await w.applyError({ patch: viaDir, expected_versions: { 'dir/x.ts': sha256('x\n'), 'dirlink/x.ts': sha256('x\n') }, operation_key: 'twice-dir' });
      assert.equal(e2.code, 'PATCH_INVALID');
      assert.deepEqual(await snapshotTree(w.root), snap);
      assert.deepEqual(w.writes(), []);
    });
  });

  describe('policy', () => {
    it('WORKSPACE_BUSY while a process occupies the workspace; check_only still works', async () => {
      const w = await world({ [APP]: APP_TEXT }, { occupant: (id) => (id === WS_ID ? { process_id: 'proc_7', command: ['npm', 'run', 'test'] } : undefined) });
      await agePaths(w, APP);
      const snap = await snapshotTree(w.root);
      const args = { patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) } };
      const e = await w.applyError({ ...args, operation_key: 'busy' });
      assert.equal(e.code, 'WORKSPACE_BUSY');
      assert.equal(e.details?.process_id, 'proc_7');
      assert.match(e.message, /npm run test/);
      const preview = await w.apply({ ...args, operation_key: 'busy-preview', check_only: true });
      assert.equal(preview.status, 'checked');
      assert.equal(preview.files[0]?.after_version, sha256(APP_AFTER));
      assert.deepEqual(await snapshotTree(w.root), snap);
      assert.equal((await w.call('operation_status', { operation_key: 'busy' })).isError, true, 'the refusal is not recorded');
    });

    for (const [label, options, trusted] of [
      ['a read-only profile', { profile: 'read-only' }, true],
      ['an untrusted workspace (Restricted Mode)', { profile: 'exec', trusted: false }, false],
    ] as const) {
      it(`READ_ONLY for ${label}, previews included`, async () => {
        const w = await world({ [APP]: APP_TEXT }, options);
        await agePaths(w, APP);
        const snap = await snapshotTree(w.root);
        const args = { patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) } };
        for (const check_only of [false, true]) {
          const e = await w.applyError({ ...args, operation_key: `ro-${check_only}`, check_only });
          assert.equal(e.code, 'READ_ONLY');
          assert.equal(e.details?.trusted, trusted);
          assert.equal(e.details?.profile, 'read-only');
        }
        assert.deepEqual(await snapshotTree(w.root), snap);
        // Reading stays available.
        assert.equal((await w.read(APP)).content, APP_TEXT);
      });
    }

    it('paths escaping the root and a symlinked folder pointing outside → PATH_OUTSIDE_WORKSPACE, outside untouched', async () => {
      const w = await world({ [APP]: APP_TEXT, 'real/inside.txt': 'in\n' });
      const outside = path.join(w.tmp, 'outside');
      await fsp.mkdir(outside);
      await fsp.writeFile(path.join(outside, 'secret.txt'), 'secret\n');
      await fsp.symlink(outside, w.abs('link'));
      await fsp.symlink(path.join(outside, 'secret.txt'), w.abs('secret-link.txt'));
      await agePaths(w, APP);
      const inside = await snapshotTree(w.root);
      const outsideBefore = await snapshotTree(outside);
      const tmpBefore = (await fsp.readdir(w.tmp)).sort();
      const v = { [APP]: sha256(APP_TEXT), 'secret-link.txt': sha256('secret\n'), 'link/secret.txt': sha256('secret\n'), '../outside/secret.txt': sha256('secret\n') };
      const patches = [
        v4a('*** Add File: ../escaped.txt', '+x'),
        v4a('*** Add File: src/../../escaped.txt', '+x'),
        v4a('*** Add File: /tmp/escaped.txt', '+x'),
        v4a('*** Add File: link/planted.txt', '+x'),
        v4a('*** Add File: link/deeper/planted.txt', '+x'),
        v4a('*** Update File: link/secret.txt', '@@', '-secret', '+owned'),
        v4a('*** Update File: secret-link.txt', '@@', '-secret', '+owned'),
        v4a('*** Delete File: link/secret.txt'),
        v4a(`*** Update File: ${APP}`, '*** Move to: link/app.ts', '@@', '-export const answer = 41;', '+export const answer = 1;'),
      ];
      for (const [i, patch] of patches.entries()) {
        const e = await w.applyError({ patch, expected_versions: v, operation_key: `out-${i}` });
        assert.equal(e.code, 'PATH_OUTSIDE_WORKSPACE', `${patch.split('\n')[1]}: ${e.message}`);
        const p = await w.applyError({ patch, expected_versions: v, operation_key: `out-preview-${i}`, check_only: true });
        assert.equal(p.code, 'PATH_OUTSIDE_WORKSPACE', 'a preview is confined too');
      }
      assert.deepEqual(await snapshotTree(outside), outsideBefore, 'nothing outside was written');
      assert.deepEqual((await fsp.readdir(w.tmp)).sort(), tmpBefore);
      assert.deepEqual(await snapshotTree(w.root), inside);
      assert.deepEqual(w.writes(), []);
    });
  });

  describe('operation_status', () => {
    it('exactly one of operation_key / operation_id (INVALID_ARGUMENTS); unknown → OPERATION_NOT_FOUND; never re-runs', async () => {
      const w = await world({ [APP]: APP_TEXT });
      const r = await w.apply<ApplyResult>({ patch: APP_PATCH, expected_versions: { [APP]: sha256(APP_TEXT) }, operation_key: 'q' });
      for (const args of [{}, { operation_key: 'q', operation_id: r.operation_id }]) {
        const res = await w.call('operation_status', args);
        assert.equal(res.isError, true);
        const body = JSON.parse((res.content[0] as { text: string }).text) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'INVALID_ARGUMENTS');
        assert.match(body.error.message, /exactly one/);
      }
      for (const args of [{ operation_key: 'nope' }, { operation_id: 'op_0000000000000000' }]) {
        const res = await w.call('operation_status', args);
        assert.equal(res.isError, true);
        const body = JSON.parse((res.content[0] as { text: string }).text) as { error: { code: string } };
        assert.equal(body.error.code, 'OPERATION_NOT_FOUND');
      }
      const writes = w.writes().length;
      assert.equal((await w.status({ operation_id: r.operation_id })).status, 'applied');
      assert.equal(w.writes().length, writes, 'a status query writes nothing');
    });
  });
});
