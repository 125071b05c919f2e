// `npm test`: every check in order: type-check, lint, unit tests (plain Node), the suite inside a real VS Code,
// and the end-to-end tests. Streams each step's output, stops at the first failing step, and ends with one
// summary line of all mocha counts ("N passed, N failed").
//
// First it checks what the tests need from the machine (scripts/prerequisites.mjs): missing programs are installed
// with apt-get when it runs as root where apt-get exists (as on CI); anywhere else it prints the one command that
// installs them and stops. The VS Code suites run on each VS Code CODESPACE_TEST_VSCODE selects: by default both the
// in-editor and the end-to-end suite run on both (1.100 and 1.139).
//
// Time: type-check, lint and packaging run at once; the VS Code hosts install (first run only) while the checks
// before them run; and the in-editor suites of the two versions run side by side (they spend most of their time
// waiting on an editor). The first version's output streams as it comes; the second's is held and printed whole when
// the first is done (then streams). The end-to-end suites run one after the other: their window reloads are what a
// loaded machine makes slowest. CODESPACE_TEST_SERIAL=1 runs every suite one after the other.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, installedVersion, hostPaths, selectHosts } from './installVsCodeHost.mjs';
import { ensurePrerequisites } from './prerequisites.mjs';

// The unit step compiles the tests and the build step bundles the extension once; the two VS Code suites then run
// on those outputs (their npm scripts would build and compile again, each). The VSIX the e2e suite installs is
// packaged once before the build, and handed to it (CODESPACE_VSIX): packaging rebuilds dist/, which the other
// VS Code's suites load at the same time.
const VSIX = path.join(REPO_ROOT, 'test-results', 'codespace-under-test.vsix');
// Each group's steps run at once; the groups run in order.
const checks = [
  [
    ['type-check', ['run', 'typecheck']],
    ['lint', ['run', 'lint']],
    ['package', ['run', 'package', '--', '--out', VSIX]],
  ],
  [['unit', ['run', 'test:unit']]],
  [['build', ['run', 'build']]],
];
const suites = [
  ['integration (inside VS Code)', 'integration'],
  ['end-to-end (MCP client + browser)', 'e2e'],
];
const hosts = selectHosts();

let passed = 0;
let failed = 0;
let pending = 0;

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

/** Standard output that also counts. */
const live = { write: (text) => (count(text), process.stdout.write(text)) };

/**
 * An output held in memory until release(), then written through as it comes (counted either way, once): the
 * second VS Code's suites print whole after the first's.
 */
function heldOutput() {
  const held = [];
  let released = false;
  return {
    write: (text) => {
      count(text);
      if (released) process.stdout.write(text);
      else held.push(text);
    },
    release: () => {
      released = true;
      for (const text of held.splice(0)) process.stdout.write(text);
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

/** One suite on one VS Code; resolves with its exit code. */
function suiteOn(key, [name, suite], out) {
  const p = hostPaths(key);
  const env = { CODESPACE_TEST_VSCODE: key, CODESPACE_VSIX: VSIX };
  return step(`${name} on VS Code ${p.vscode} (code-server ${p.codeServer})`, process.execPath, ['scripts/runVsCodeTests.mjs', suite], env, out);
}

/** The suite on every VS Code: side by side (`together`) or one after the other; resolves with the codes. */
async function suiteOnEach(suite, together) {
  if (together) return atOnce(hosts.map((key) => (out) => suiteOn(key, suite, out)));
  const codes = [];
  for (const key of hosts) {
    codes.push(await suiteOn(key, suite, live));
    if (codes.at(-1) !== 0) break;
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

// The hosts still missing install in the background (network, unpacking, a native build or two) while the checks
// run; their output is printed when the suites need them.
const install = heldOutput();
const installed =
  toInstall.length === 0 ? Promise.resolve(0) : run(process.execPath, ['scripts/installVsCodeHost.mjs', toInstall.join(',')], {}, install);

for (const group of checks) {
  fail(await atOnce(group.map(([name, args]) => (out) => step(name, 'npm', args, {}, out))));
  if (exitCode !== 0) break;
}

if (exitCode === 0 && toInstall.length > 0) {
  const t0 = Date.now();
  console.log(`\n=== VS Code hosts (${toInstall.join(', ')}), installed while the checks ran ===`);
  install.release();
  const code = await installed;
  console.log(`=== VS Code hosts: ${code === 0 ? 'ok' : `FAILED (exit ${code})`}, waited ${seconds(t0)} s ===`);
  fail([code]);
}

// The in-editor suites of both versions run side by side (CODESPACE_TEST_SERIAL=1: one after the other); the
// end-to-end suites one after the other: side by side, a window reload on 1.139 twice left the agent's processes
// without the new extension host, and a selection in the browser lost a line (docs/TESTING.md).
const together = process.env.CODESPACE_TEST_SERIAL !== '1';
for (const [i, suite] of suites.entries()) {
  if (exitCode !== 0) break;
  const t0 = Date.now();
  const sideBySide = together && i === 0 && hosts.length > 1;
  fail(await suiteOnEach(suite, sideBySide));
  console.log(`\n=== ${suite[0]} on ${hosts.join(sideBySide ? ' beside ' : ' then ')}: ${seconds(t0)} s ===`);
}

console.log(`\nAll checks took ${((Date.now() - started) / 1000).toFixed(0)} s.`);
console.log(`${passed} passed, ${failed} failed${pending ? `, ${pending} skipped` : ''}`);
process.exit(exitCode);
