import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscoveryRecord, FoundRecord } from '../../src/features/connect/common/record';
import { endpointUrlFor, parseRecord, pathContains, selectByWorkspace, selectSameFolders } from '../../src/features/connect/common/record';
import { DISCOVERY_DIR_ENV, DiscoveryDirError, DiscoveryEntry, checkDiscoveryDir, discoveryDir, discoveryDirs, ownPidStart, readAllRecords, readRecords, readToken } from '../../src/features/connect/node/discoveryFiles';

function record(port: number, folders: string[], pid = process.pid, createdAt = new Date().toISOString()): DiscoveryRecord {
  return { version: 1, pid, port, url: endpointUrlFor(port), protocol: 'mcp-streamable-http', workspaceFolders: folders, createdAt, serverVersion: 't' };
}
const found = (r: DiscoveryRecord, file = `/d/${r.port}.json`): FoundRecord => ({ record: r, file });
const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

describe('discovery records: choosing the window', () => {
  it('matches a path inside a folder, segment-wise (no prefix-sibling confusion)', () => {
    assert.equal(pathContains('/w/app', '/w/app'), true);
    assert.equal(pathContains('/w/app', '/w/app/src/x.ts'), true);
    assert.equal(pathContains('/w/app', '/w/application'), false);
    assert.equal(pathContains('/w/app', '/w'), false);
    const sel = selectByWorkspace([found(record(1001, ['/w/app'])), found(record(1002, ['/w/application']))], '/w/application/src');
    assert.equal(sel.kind, 'one');
    assert.equal(sel.kind === 'one' && sel.found.record.port, 1002);
  });

  it('multi-root: any folder of a window selects it, and the deepest folder wins between windows', () => {
    const multi = found(record(2001, ['/w/front', '/w/back']));
    const outer = found(record(2002, ['/w']));
    const one = selectByWorkspace([outer, multi], '/w/back/lib');
    assert.equal(one.kind === 'one' && one.found.record.port, 2001);
    const top = selectByWorkspace([outer, multi], '/w/docs');
    assert.equal(top.kind === 'one' && top.found.record.port, 2002);
    // Nested folders of one window are still one window.
    const nested = selectByWorkspace([found(record(2003, ['/n', '/n/pkg']))], '/n/pkg/src');
    assert.equal(nested.kind === 'one' && nested.found.record.port, 2003);
  });

  it('reports no match and several matches with every candidate', () => {
    const a = found(record(3001, ['/w/x']));
    const b = found(record(3002, ['/w/x']));
    const none = selectByWorkspace([a], '/elsewhere');
    assert.equal(none.kind, 'none');
    assert.match(none.kind === 'none' ? none.message : '', /No VS Code window with CodeSpace has a workspace folder containing "\/elsewhere".*port 3001/);
    assert.match(selectByWorkspace([], '/x').kind === 'none' ? (selectByWorkspace([], '/x') as { message: string }).message : '', /No CodeSpace window is running/);
    const many = selectByWorkspace([a, b], '/w/x/y');
    assert.equal(many.kind, 'many');
    assert.match(many.kind === 'many' ? many.message : '', /2 VS Code windows .*port 3001.*port 3002.*CODESPACE_MCP_URL/);
  });

  it('finds the same window after a reload by its folders, the newest record first', () => {
    const old = found(record(4001, ['/a', '/b'], 1, '2026-01-01T00:00:00Z'));
    const fresh = found(record(4002, ['/a', '/b'], 2, '2026-01-02T00:00:00Z'));
    const other = found(record(4003, ['/b', '/a']));
    const sel = selectSameFolders([old, other, fresh], ['/a', '/b']);
    assert.equal(sel.kind === 'one' && sel.found.record.port, 4002);
    assert.equal(selectSameFolders([other], ['/a', '/b']).kind, 'none');
  });

  it('rejects malformed records, and records whose URL is not the loopback URL of their port', () => {
    const good = record(5001, ['/w']);
    assert.deepEqual(parseRecord(JSON.stringify(good)), good);
    assert.equal(parseRecord('{'), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, url: 'http://evil.example:5001/mcp' })), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, url: endpointUrlFor(5002) })), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, port: 70000, url: endpointUrlFor(70000) })), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, workspaceFolders: ['relative'] })), undefined);
    assert.equal(parseRecord(JSON.stringify({ ...good, version: 2 })), undefined);
  });
});

describe('discovery records: files on disk', () => {
  let tmp: string;
  let dir: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-discovery-'));
    dir = path.join(tmp, 'codespace');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('lives where the uid alone says: the user\'s own runtime folder, else /tmp/codespace-<uid>, whatever the environment', () => {
    const uid = process.getuid?.() as number;
    const runRoot = path.join(tmp, 'run-user');
    const tmpRoot = path.join(tmp, 'shared-tmp');
    fs.mkdirSync(runRoot);
    const places = { runUserRoot: runRoot, tmpRoot };
    // No runtime folder (a system without systemd-logind, a container, a cron job): the fixed temp folder.
    const fallback = path.join(tmpRoot, `codespace-${uid}`);
    for (const env of [{}, { XDG_RUNTIME_DIR: '/elsewhere' }, { TMPDIR: '/var/other-tmp' }]) assert.equal(discoveryDir({ ...places, env }), fallback, JSON.stringify(env));
    // The user's own 0700 runtime folder: there, with or without XDG_RUNTIME_DIR.
    const runtime = path.join(runRoot, String(uid));
    fs.mkdirSync(runtime, { mode: 0o700 });
    for (const env of [{}, { XDG_RUNTIME_DIR: '/elsewhere', TMPDIR: '/var/other-tmp' }]) assert.equal(discoveryDir({ ...places, env }), path.join(runtime, 'codespace'));
    // A runtime folder that is not private, or a symlink in its place, is not the user's runtime folder.
    fs.chmodSync(runtime, 0o755);
    assert.equal(discoveryDir({ ...places, env: {} }), fallback);
    fs.rmdirSync(runtime);
    fs.mkdirSync(path.join(tmp, 'real-run'), { mode: 0o700 });
    fs.symlinkSync(path.join(tmp, 'real-run'), runtime);
    assert.equal(discoveryDir({ ...places, env: {} }), fallback);
    if (uid === 0) {
      fs.rmSync(runtime);
      fs.mkdirSync(runtime, { mode: 0o700 });
      fs.chownSync(runtime, 12345, 12345);
      assert.equal(discoveryDir({ ...places, env: {} }), fallback, 'another user\'s folder is not ours');
    }
    // The test override names one folder, for writer and reader alike.
    assert.equal(discoveryDir({ ...places, env: { [DISCOVERY_DIR_ENV]: '/x/y' } }), '/x/y');
    assert.deepEqual(discoveryDirs({ ...places, env: { [DISCOVERY_DIR_ENV]: '/x/y', XDG_RUNTIME_DIR: '/r' } }), ['/x/y']);
    assert.equal(discoveryDir({ ...places, env: { [DISCOVERY_DIR_ENV]: 'relative' } }), fallback);
  });

  it('readers search the canonical folder first, then where earlier versions published; a refused extra folder is skipped', () => {
    const uid = process.getuid?.() as number;
    const places = { runUserRoot: path.join(tmp, 'no-run'), tmpRoot: path.join(tmp, 'shared-tmp') };
    const dirs = discoveryDirs({ ...places, env: { XDG_RUNTIME_DIR: path.join(tmp, 'xdg') } });
    assert.deepEqual(dirs, [path.join(tmp, 'shared-tmp', `codespace-${uid}`), path.join(tmp, 'xdg', 'codespace'), path.join(os.tmpdir(), `codespace-${uid}`)]);

    const canonical = dirs[0] as string;
    const legacy = dirs[1] as string;
    fs.mkdirSync(path.dirname(legacy));
    fs.mkdirSync(path.join(tmp, 'shared-tmp'));
    DiscoveryEntry.create(canonical).write(record(6101, [tmp]), 't1');
    DiscoveryEntry.create(legacy).write(record(6102, [tmp]), 't2');
    assert.deepEqual(readAllRecords(dirs.slice(0, 2)).map((f) => f.record.port).sort(), [6101, 6102]);
    // A legacy folder that is a symlink is never read, and does not hide the canonical one.
    fs.rmSync(legacy, { recursive: true });
    fs.symlinkSync(canonical, legacy);
    assert.deepEqual(readAllRecords(dirs.slice(0, 2)).map((f) => f.record.port), [6101]);
    assert.throws(() => readAllRecords([legacy, canonical]), DiscoveryDirError, 'a refused canonical folder is an error');
  });

  it('writes a 0600 record and a 0600 token file in a 0700 folder, atomically, and removes both', () => {
    const entry = DiscoveryEntry.create(dir);
    assert.equal(mode(dir), 0o700);
    entry.write(record(6001, [tmp]), 'secret-token');
    assert.equal(mode(entry.recordFile), 0o600);
    assert.equal(mode(entry.tokenFile), 0o600);
    assert.match(path.basename(entry.recordFile), new RegExp(`^${process.pid}-[0-9a-f]{16}\\.json$`));
    assert.doesNotMatch(fs.readFileSync(entry.recordFile, 'utf8'), /secret-token/, 'the record never holds the token');
    assert.deepEqual(fs.readdirSync(dir).sort(), [path.basename(entry.recordFile), path.basename(entry.tokenFile)].sort(), 'no temp file left');
    const [only] = readRecords(dir);
    assert.equal(only?.record.port, 6001);
    assert.equal(readToken(only as FoundRecord), 'secret-token');
    // A port change rewrites in place; the token file goes when the token is no longer published.
    entry.write(record(6002, [tmp]), undefined);
    assert.equal(readRecords(dir)[0]?.record.port, 6002);
    assert.equal(fs.existsSync(entry.tokenFile), false);
    entry.remove();
    assert.deepEqual(fs.readdirSync(dir), []);
    entry.write(record(6003, [tmp]), 't');
    assert.deepEqual(fs.readdirSync(dir), [], 'a removed entry is never written again');
  });

  it('refuses a symlinked folder, a file in its place and a folder of another user; tightens a loose mode of ours', () => {
    const real = path.join(tmp, 'real');
    fs.mkdirSync(real, { mode: 0o700 });
    fs.symlinkSync(real, dir);
    assert.throws(() => DiscoveryEntry.create(dir), (e: unknown) => e instanceof DiscoveryDirError && /symbolic link/.test(e.message));
    assert.throws(() => readRecords(dir), DiscoveryDirError);
    fs.rmSync(dir);
    fs.writeFileSync(dir, 'x');
    assert.throws(() => checkDiscoveryDir(dir, true), /not a folder/);
    fs.rmSync(dir);
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    checkDiscoveryDir(dir, false);
    assert.equal(mode(dir), 0o700);
    if (process.getuid?.() === 0) {
      // Root can plant a folder owned by someone else, as an attacker with that uid would.
      fs.chownSync(dir, 12345, 12345);
      assert.throws(() => DiscoveryEntry.create(dir), (e: unknown) => e instanceof DiscoveryDirError && /belongs to uid 12345/.test(e.message));
      assert.throws(() => readRecords(dir), /belongs to uid 12345/);
    }
  });

  it('ignores symlinks, loose-mode files, files of other users and malformed records; cleans records of dead pids', () => {
    const entry = DiscoveryEntry.create(dir);
    entry.write(record(7001, [tmp]), 'tok');
    const outside = path.join(tmp, 'outside.json');
    fs.writeFileSync(outside, JSON.stringify(record(7002, [tmp])), { mode: 0o600 });
    fs.symlinkSync(outside, path.join(dir, 'link.json'));
    fs.writeFileSync(path.join(dir, 'loose.json'), JSON.stringify(record(7003, [tmp])), { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'loose.json'), 0o644);
    fs.writeFileSync(path.join(dir, 'bad.json'), '{"version":1', { mode: 0o600 });
    if (process.getuid?.() === 0) {
      fs.writeFileSync(path.join(dir, 'theirs.json'), JSON.stringify(record(7004, [tmp])), { mode: 0o600 });
      fs.chownSync(path.join(dir, 'theirs.json'), 12345, 12345);
    }
    // A token file swapped for a symlink to another file is not read.
    const tokenLink = path.join(dir, 'linked.token');
    fs.writeFileSync(path.join(dir, 'linked.json'), JSON.stringify(record(7005, [tmp])), { mode: 0o600 });
    fs.symlinkSync(path.join(tmp, 'outside.json'), tokenLink);
    const ports = readRecords(dir).map((f) => f.record.port).sort();
    assert.deepEqual(ports, [7001, 7005]);
    const linked = readRecords(dir).find((f) => f.record.port === 7005) as FoundRecord;
    assert.equal(readToken(linked), undefined);

    const dead = 2 ** 22 + 12345; // above pid_max's default: no such process
    fs.writeFileSync(path.join(dir, `${dead}-aa.json`), JSON.stringify(record(7006, [tmp], dead)), { mode: 0o600 });
    fs.writeFileSync(path.join(dir, `${dead}-aa.token`), 'old', { mode: 0o600 });
    assert.equal(readRecords(dir).some((f) => f.record.port === 7006), false);
    assert.equal(fs.existsSync(path.join(dir, `${dead}-aa.json`)), false, 'the stale record is deleted');
    assert.equal(fs.existsSync(path.join(dir, `${dead}-aa.token`)), false, 'and its token file');
    assert.deepEqual(readRecords(path.join(tmp, 'missing')), [], 'no folder: no window');

    // A crashed window's pid reused by another process (here: this one, with another start time) is still stale.
    if (process.platform === 'linux') {
      fs.writeFileSync(path.join(dir, `${process.pid}-reused.json`), JSON.stringify({ ...record(7007, [tmp]), pidStart: '1' }), { mode: 0o600 });
      assert.equal(readRecords(dir).some((f) => f.record.port === 7007), false, 'a reused pid does not keep a record alive');
      assert.equal(fs.existsSync(path.join(dir, `${process.pid}-reused.json`)), false);
      const start = ownPidStart();
      assert.ok(start, 'Linux gives this process a start time');
      fs.writeFileSync(path.join(dir, `${process.pid}-same.json`), JSON.stringify({ ...record(7008, [tmp]), pidStart: start }), { mode: 0o600 });
      assert.equal(readRecords(dir).some((f) => f.record.port === 7008), true, 'the same process with the same start time is alive');
    }
  });

  it('never reads through a record swapped for a symlink by a concurrent process', async function () {
    this.timeout(60_000);
    const entry = DiscoveryEntry.create(dir);
    entry.write(record(8001, [tmp]), 'tok');
    // The symlink's target is a valid record file of ours: only the refusal to follow links keeps it out.
    const secret = path.join(tmp, 'secret.json');
    fs.writeFileSync(secret, JSON.stringify(record(8666, [tmp])), { mode: 0o600 });
    const swapper = spawn(process.execPath, [path.join(__dirname, 'helpers', 'recordSwapper.js'), path.join(dir, 'swap.json'), JSON.stringify(record(8002, [tmp])), secret], { stdio: ['ignore', 'pipe', 'inherit'] });
    const output: string[] = [];
    swapper.stdout.setEncoding('utf8').on('data', (c: string) => output.push(c));
    await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));
    let sawRegular = 0;
    try {
      for (let i = 0; i < 20000; i++) {
        const ports = readRecords(dir).map((f) => f.record.port);
        assert.ok(!ports.includes(8666), 'a symlinked record is never read through');
        assert.ok(ports.includes(8001), 'the real record is always listed');
        if (ports.includes(8002)) sawRegular++;
        if (i % 100 === 0) await new Promise((r) => setImmediate(r));
      }
    } finally {
      const exited = new Promise((r) => swapper.once('exit', r));
      swapper.kill('SIGTERM');
      await exited;
    }
    const swaps = (JSON.parse(output.join('').trim().split('\n').pop() as string) as { swaps: number }).swaps;
    assert.ok(swaps > 100, `the adversary swapped (${swaps} times)`);
    assert.ok(sawRegular > 0, 'the reader also saw the swapped path as a regular record: the race was real');
  });
});
