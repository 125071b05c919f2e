// `npm test`: every check in order: type-check, lint, unit tests (plain Node), the suite inside a real VS Code,
// and the end-to-end tests. Streams each step's output, stops at the first failing step, and ends with one
// summary line of all mocha counts ("N passed, N failed").
//
// First it checks what the tests need from the machine (scripts/prerequisites.mjs): missing programs are installed
// with apt-get when it runs as root where apt-get exists (as on CI); anywhere else it prints the one command that
// installs them and stops. The VS Code suites run on each VS Code CODESPACE_TEST_VSCODE selects: by default both the
// in-editor and the end-to-end suite run on both (1.100 then 1.139).
import { spawn } from 'node:child_process';
import { installedVersion, hostPaths, selectHosts } from './installVsCodeHost.mjs';
import { ensurePrerequisites } from './prerequisites.mjs';

// The unit step compiles the tests and the build step bundles the extension once; the two VS Code suites then run
// on those outputs (their npm scripts would build and compile again, each).
const steps = [
  ['type-check', ['run', 'typecheck']],
  ['lint', ['run', 'lint']],
  ['unit', ['run', 'test:unit']],
  ['build', ['run', 'build']],
  ['integration (inside VS Code)', ['exec', '--', 'node', 'scripts/runVsCodeTests.mjs', 'integration']],
  ['end-to-end (MCP client + browser)', ['exec', '--', 'node', 'scripts/runVsCodeTests.mjs', 'e2e']],
];

let passed = 0;
let failed = 0;
let pending = 0;

function runStep(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const scan = (chunk, out) => {
      const text = chunk.toString();
      out.write(text);
      // Mocha's spec reporter: "  12 passing (3s)", "  1 failing", "  2 pending".
      for (const m of text.matchAll(/^\s*(\d+) (passing|failing|pending)\b/gm)) {
        const n = Number(m[1]);
        if (m[2] === 'passing') passed += n;
        else if (m[2] === 'failing') failed += n;
        else pending += n;
      }
    };
    child.stdout.on('data', (c) => scan(c, process.stdout));
    child.stderr.on('data', (c) => scan(c, process.stderr));
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const started = Date.now();
// Building a VS Code host needs compilers and headers, but only while one is still to be installed.
const needBuild = selectHosts().some((key) => installedVersion(key) !== hostPaths(key).codeServer);
console.log('=== prerequisites ===');
if (!ensurePrerequisites({ needBuild })) {
  console.log('\n0 passed, 1 failed (prerequisites missing)');
  process.exit(1);
}
let exitCode = 0;
for (const [name, args, env] of steps) {
  const t0 = Date.now();
  console.log(`\n=== ${name} ===`);
  const code = await runStep(args, env);
  console.log(`=== ${name}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s ===`);
  if (code !== 0) {
    exitCode = code;
    if (failed === 0) failed = 1; // a failing step without mocha counts (type-check, lint, a crash) still fails
    break;
  }
}
console.log(`\nAll checks took ${((Date.now() - started) / 1000).toFixed(0)} s.`);
console.log(`${passed} passed, ${failed} failed${pending ? `, ${pending} skipped` : ''}`);
process.exit(exitCode);
