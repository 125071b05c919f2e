// `npm test`: every check in order: type-check, lint, unit tests (plain Node), the suite inside a real VS Code,
// and the end-to-end tests. Streams each step's output, stops at the first failing step, and ends with one
// summary line of all mocha counts ("N passed, N failed").
import { spawn } from 'node:child_process';

const steps = [
  ['type-check', ['run', 'typecheck']],
  ['lint', ['run', 'lint']],
  ['unit', ['run', 'test:unit']],
  ['integration (inside VS Code)', ['run', 'test:integration']],
  ['end-to-end (MCP client + browser)', ['run', 'test:e2e']],
];

let passed = 0;
let failed = 0;
let pending = 0;

function runStep(args) {
  return new Promise((resolve) => {
    const child = spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
let exitCode = 0;
for (const [name, args] of steps) {
  const t0 = Date.now();
  console.log(`\n=== ${name} ===`);
  const code = await runStep(args);
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
