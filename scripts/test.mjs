// `npm test`: every check: type-check, lint, unit tests (plain Node), the suite inside a real VS Code, and the
// end-to-end tests. Streams each step's output, starts no step after one failed, and ends with every step's time
// and one summary line of all mocha counts ("N passed, N failed").
//
// First it checks what the tests need from the machine (scripts/prerequisites.mjs): missing programs are installed
// with apt-get when it runs as root where apt-get exists (as on CI); anywhere else it prints the one command that
// installs them and stops. The VS Code suites run on each VS Code CODESPACE_TEST_VSCODE selects: by default both the
// in-editor and the end-to-end suite run on both (1.100 and 1.139).
//
// Time (docs/TESTING.md, "How npm test spends its time"): type-check, lint, packaging and compiling the tests run at
// once; then the bundle is built, and two lanes run side by side: the unit tests followed by the in-editor suites
// of each VS Code, one after the other, and the end-to-end suites of each VS Code, one after the other. The two
// end-to-end suites never run at once (a window reload under that load is what failed before), and each suite waits
// only for its own VS Code host, which installs (first run only) in the background from the start. The first
// lane's output streams as it comes; the second's is held and printed whole when the first is done (then streams).
// Each lane stops at the first failure anywhere. CODESPACE_TEST_SERIAL=1 runs every step one after the other.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, installedVersion, hostPaths, selectHosts } from './installVsCodeHost.mjs';
import { ensurePrerequisites } from './prerequisites.mjs';

// The tests are compiled and the extension bundled once; the unit tests and the two VS Code suites then run on those
// outputs (their npm scripts would build and compile again, each, while another suite loads them). The VSIX the
// e2e suite installs is packaged once before the build, and handed to it (CODESPACE_VSIX): packaging rebuilds
// dist/, which the suites load.
const VSIX = path.join(REPO_ROOT, 'test-results', 'codespace-under-test.vsix');
const MOCHA = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
// Each group's steps run at once; the groups run in order.
const checks = [
  [
    ['type-check', ['run', 'typecheck']],
    ['lint', ['run', 'lint']],
    ['package', ['run', 'package', '--', '--out', VSIX]],
    ['compile tests', ['run', 'compile-tests']],
  ],
  [['build', ['run', 'build']]],
];
const INTEGRATION = ['integration (inside VS Code)', 'integration'];
const E2E = ['end-to-end (MCP client + browser)', 'e2e'];
const hosts = selectHosts();
const serial = process.env.CODESPACE_TEST_SERIAL === '1';

let passed = 0;
let failed = 0;
let pending = 0;
/** Each step's title and seconds, in the order they ended: printed at the end. */
const times = [];

/** Adds mocha's spec reporter counts ("  12 passing (3s)", "  1 failing", "  2 pending") in `text` to the totals. */
function count(text) {
  for (const m of text.matchAll(/^\s*(\d+) (passing|failing|pending)\b/gm)) {
    const n = Number(m[1]);
    if (m[2] === 'passing') passed += n;
    else if (m[2] === 'failing') failed += n;
    else pending += n;
  }
}

/**
 * Runs `command args` and resolves with its exit code. Its output goes to `out.write` whole lines at a time (so the
 * counts are read from whole lines, and two outputs interleave only between lines).
 */
function run(command, args, env, out) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const relay = (stream) => {
      let rest = '';
      stream.setEncoding('utf8'); // a character split between two chunks (the reporter's ✔) decodes whole
      stream.on('data', (chunk) => {
        const text = rest + chunk;
        const cut = text.lastIndexOf('\n') + 1;
        rest = text.slice(cut);
        if (cut > 0) out.write(text.slice(0, cut));
      });
      stream.on('end', () => rest && out.write(`${rest}\n`));
    };
    relay(child.stdout);
    relay(child.stderr);
    child.on('error', (error) => {
      out.write(`${command}: ${error.message}\n`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

/** Standard output, where the counts are read: every line reaches it exactly once. */
const live = { write: (text) => (count(text), process.stdout.write(text)) };

/**
 * An output held in memory until release(to), then written through to `to` as it comes: the second lane's steps
 * print whole after the first's, and a host's install output where a suite first waits for it.
 */
function heldOutput() {
  const held = [];
  let target;
  return {
    write: (text) => {
      if (target) target.write(text);
      else held.push(text);
    },
    release: (to = live) => {
      target = to;
      for (const text of held.splice(0)) to.write(text);
    },
  };
}

function seconds(t0) {
  return ((Date.now() - t0) / 1000).toFixed(1);
}

/** Runs one step between its `=== title ===` lines; resolves with its exit code. */
async function step(title, command, args, env, out) {
  const t0 = Date.now();
  out.write(`\n=== ${title} ===\n`);
  const code = await run(command, args, env, out);
  out.write(`=== ${title}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${seconds(t0)} s ===\n`);
  times.push([title, seconds(t0)]);
  return code;
}

/**
 * Runs the tasks (each given its output) at once. The first's output streams; each next one's is printed whole once
 * the one before is done, then streams. Resolves with their exit codes, in order.
 */
async function atOnce(tasks) {
  const outputs = tasks.map((_, i) => (i === 0 ? live : heldOutput()));
  const runs = tasks.map((task, i) => task(outputs[i]));
  const codes = [];
  for (const [i, r] of runs.entries()) {
    codes.push(await r);
    outputs[i + 1]?.release();
  }
  return codes;
}

let exitCode = 0;
/** Records the first failing exit code; a failure without mocha counts (type-check, lint, a crash) still counts one. */
function fail(codes) {
  const bad = codes.find((c) => c !== 0);
  if (bad === undefined || exitCode !== 0) return;
  exitCode = bad;
  if (failed === 0) failed = 1;
}

const started = Date.now();
// Building a VS Code host needs compilers and headers, but only while one is still to be installed.
const toInstall = hosts.filter((key) => installedVersion(key) !== hostPaths(key).codeServer);
console.log('=== prerequisites ===');
if (!ensurePrerequisites({ needBuild: toInstall.length > 0 })) {
  console.log('\n0 passed, 1 failed (prerequisites missing)');
  process.exit(1);
}

// The hosts still missing install in the background, one after the other in the order the suites need them
// (network, unpacking, a native build or two), while the checks and the unit tests run. A suite waits only for its
// own host; the install's output is printed where a suite first waits for it.
const installs = new Map();
let previous = Promise.resolve(0);
for (const key of toInstall) {
  const install = { out: heldOutput(), began: undefined, waited: false };
  install.done = previous.then((code) => {
    if (code !== 0) return code;
    install.began = Date.now();
    return run(process.execPath, ['scripts/installVsCodeHost.mjs', key], {}, install.out);
  });
  installs.set(key, install);
  previous = install.done;
}

/** Waits for VS Code `key`'s host (nothing to wait for when it was installed already); resolves with the exit code. */
async function hostReady(key, out) {
  const install = installs.get(key);
  if (!install) return 0;
  const first = !install.waited;
  install.waited = true;
  const t0 = Date.now();
  if (first) {
    const since = install.began === undefined ? 'its install waits for the one before' : `installing for ${seconds(install.began)} s`;
    out.write(`\n=== VS Code ${hostPaths(key).vscode} host (${since}) ===\n`);
    install.out.release(out);
  }
  const code = await install.done;
  if (first) {
    out.write(`=== VS Code ${hostPaths(key).vscode} host: ${code === 0 ? 'ok' : `FAILED (exit ${code})`}, waited ${seconds(t0)} s ===\n`);
    times.push([`waited for the VS Code ${hostPaths(key).vscode} host`, seconds(t0)]);
  }
  fail([code]);
  return code;
}

/** One suite on one VS Code, once its host is installed; resolves with its exit code. */
async function suiteOn(key, [name, suite], out) {
  const ready = await hostReady(key, out);
  if (ready !== 0) return ready;
  const p = hostPaths(key);
  const env = { CODESPACE_TEST_VSCODE: key, CODESPACE_VSIX: VSIX };
  return step(`${name} on VS Code ${p.vscode} (code-server ${p.codeServer})`, process.execPath, ['scripts/runVsCodeTests.mjs', suite], env, out);
}

/**
 * A lane: its steps one after the other (each `(out) => Promise<exit code>`), until one fails or a step of another
 * lane has failed. Resolves with the first failing code, or 0.
 */
function lane(steps) {
  return async (out) => {
    for (const s of steps) {
      if (exitCode !== 0) return exitCode;
      const code = await s(out);
      fail([code]);
      if (code !== 0) return code;
    }
    return 0;
  };
}

for (const group of checks) {
  fail(await atOnce(group.map(([name, args]) => (out) => step(name, 'npm', args, {}, out))));
  if (exitCode !== 0) break;
}

// The unit tests run mocha on the compiled tests (npm run test:unit would compile them again while a VS Code
// suite loads them).
const unit = (out) => step('unit', process.execPath, [MOCHA, '--config', '.mocharc.json'], {}, out);
const inEditor = hosts.map((key) => (out) => suiteOn(key, INTEGRATION, out));
const endToEnd = hosts.map((key) => (out) => suiteOn(key, E2E, out));
if (exitCode === 0) {
  const t0 = Date.now();
  if (serial) await lane([unit, ...inEditor, ...endToEnd])(live);
  else await atOnce([lane([unit, ...inEditor]), lane(endToEnd)]);
  console.log(`\n=== unit, in-editor and end-to-end suites on ${hosts.join(', ')}${serial ? ', one after the other' : ' in two lanes'}: ${seconds(t0)} s ===`);
}
// A host nobody waited for (a failure came first) still finishes installing before the run ends (it is not left
// half-written), and says so when its install failed.
for (const [key, install] of installs) {
  if (install.waited || (await install.done) === 0) continue;
  console.log(`\n=== VS Code ${hostPaths(key).vscode} host: install FAILED ===`);
  install.out.release();
}

console.log('\nStep times (s):');
for (const [title, s] of times) console.log(`  ${s.padStart(7)}  ${title}`);
console.log(`\nAll checks took ${((Date.now() - started) / 1000).toFixed(0)} s.`);
console.log(`${passed} passed, ${failed} failed${pending ? `, ${pending} skipped` : ''}`);
process.exit(exitCode);
