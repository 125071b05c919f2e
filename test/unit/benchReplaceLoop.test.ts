// The patch group's diagnosis of the writes alone (bench/editor/replaceLoop.ts): both ways leave exactly the new
// bytes, no temp file, and the script form reports what the function does.
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ReplaceLoopReport, ReplaceWay } from '../../bench/editor/replaceLoop';
import { readReplaceList, replaceLoop } from '../../bench/editor/replaceLoop';

const SCRIPT = path.join(__dirname, '..', '..', 'bench', 'editor', 'replaceLoop.js');

describe('bench: the writes alone (replaceLoop)', () => {
  let dir: string;
  let listFile: string;
  const files = ['a.ts', path.join('sub', 'b.ts'), path.join('sub', 'c d.txt')];

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-replace-loop-'));
    fs.mkdirSync(path.join(dir, 'sub'));
    for (const f of files) fs.writeFileSync(path.join(dir, f), `old ${f}\n`, { mode: 0o600 });
    listFile = path.join(dir, 'list.json');
    fs.writeFileSync(listFile, JSON.stringify(files.map((f) => [path.join(dir, f), `new ${f} é\n`])));
  });

  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const check = (report: ReplaceLoopReport): void => {
    assert.equal(report.files, files.length);
    assert.ok(Number.isFinite(report.ms) && report.ms >= 0);
    for (const f of files) assert.equal(fs.readFileSync(path.join(dir, f), 'utf8'), `new ${f} é\n`);
    const left = [...fs.readdirSync(dir), ...fs.readdirSync(path.join(dir, 'sub'))].filter((n) => n.includes('replace-loop'));
    assert.deepEqual(left, []);
  };

  for (const way of ['rename', 'recreate'] as ReplaceWay[]) {
    it(`${way}: every file holds the new bytes and nothing else is left`, () => {
      check(replaceLoop(readReplaceList(listFile), way));
      // Each file is a new one: the old inode's mode (0600) is not kept.
      assert.equal(fs.statSync(path.join(dir, 'a.ts')).mode & 0o777, 0o644 & ~process.umask());
    });

    it(`${way}: as a script, prints the same report as JSON`, () => {
      check(JSON.parse(execFileSync(process.execPath, [SCRIPT, listFile, way], { encoding: 'utf8' })) as ReplaceLoopReport);
    });
  }

  it('a missing file stops the loop with the error, not a report', () => {
    fs.rmSync(path.join(dir, files[1] as string));
    assert.throws(() => replaceLoop(readReplaceList(listFile), 'recreate'), /ENOENT/);
  });

  it('the script refuses an unknown way', () => {
    const r = spawnSync(process.execPath, [SCRIPT, listFile, 'copy'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /usage: node replaceLoop\.js <list\.json> rename\|recreate/);
  });
});
