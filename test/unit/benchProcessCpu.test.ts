// The PTY group's CPU diagnosis (bench/editor/processCpu.ts): what it counts, and under which name.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import type { CpuByProcess } from '../../bench/editor/processCpu';
import { ProcessCpu, cpuLine } from '../../bench/editor/processCpu';

/** Uses `ms` of CPU (not of wall time: a loaded machine only makes it take longer). */
const BURN = (ms: number) => `const done = () => { const u = process.cpuUsage(); return u.user + u.system >= ${ms * 1000}; }; while (!done());`;

/** The name the child runs under (its argv[0]), so no other Node process on the machine is counted with it. */
const CHILD = 'cpu-probe-child';

/** Runs a Node child that uses `ms` of CPU, and resolves when it has exited. */
function busyChild(ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', BURN(ms)], { stdio: 'ignore', argv0: CHILD });
    child.on('error', reject);
    child.on('exit', () => resolve());
  });
}

/** Uses `ms` more of this process's CPU. */
function burnHere(ms: number): void {
  const used = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = used() + ms;
  while (used() < until);
}

/** The ms of CPU counted for `name` over all the sampled runs. */
function msOf(r: CpuByProcess, name: string): number {
  return ((new Map(r.msPerSecond).get(name) ?? 0) * r.wallMs) / 1000;
}

describe('bench: CPU by process during a run', function () {
  this.timeout(20_000);

  before(function () {
    // /proc is Linux's; elsewhere the sampler measures nothing by design (result() is undefined).
    if (!fs.existsSync('/proc/self/stat')) this.skip();
  });

  it('counts a process that starts and ends during the run, by its program, and names a known pid', async () => {
    // This process stands in for the extension host: its own CPU is counted under that name.
    const cpu = new ProcessCpu({ extensionHost: process.pid });
    await cpu.during(async () => {
      await busyChild(600);
      burnHere(300);
    });
    const r = cpu.result();
    assert.ok(r, 'a result on Linux');
    const seen = JSON.stringify(r.msPerSecond);
    // A process first seen during the run counts from its start; its last ticks after the last sample before it
    // ended (at most one 250 ms interval's worth) can be missed.
    assert.ok(msOf(r, CHILD) >= 300 && msOf(r, CHILD) <= 700, `the child's 600 ms: ${msOf(r, CHILD)} (${seen})`);
    assert.ok(msOf(r, 'extension host') >= 250, `the known pid's 300 ms under its name: ${msOf(r, 'extension host')} (${seen})`);
    assert.ok(!r.msPerSecond.some(([name]) => name === 'the agent (this runner)'), 'this process is the known one here, not the runner');
    const sorted = r.msPerSecond.map(([, ms]) => ms);
    assert.deepEqual(sorted, [...sorted].sort((a, b) => b - a), 'largest first');
  });

  it('adds the runs of one contender together, per second of their wall time', async () => {
    const cpu = new ProcessCpu({ extensionHost: -1 });
    await cpu.during(() => busyChild(300));
    const first = cpu.result();
    assert.ok(first);
    await cpu.during(() => new Promise((resolve) => setTimeout(resolve, 300)));
    const both = cpu.result();
    assert.ok(both);
    assert.ok(both.wallMs >= first.wallMs + 290, `the second run's wall time is added: ${first.wallMs} → ${both.wallMs}`);
    // The child is gone: the second run adds nothing to its CPU, only wall time to divide it by.
    assert.ok(Math.abs(msOf(both, CHILD) - msOf(first, CHILD)) < 1e-6, `the child's CPU is kept: ${msOf(first, CHILD)} → ${msOf(both, CHILD)}`);
    assert.ok(msOf(first, CHILD) > 0);
  });

  it('writes one line: the large ones by name, the small ones together, and the sum', () => {
    const line = cpuLine({ wallMs: 1000, msPerSecond: [['process host', 350.4], ['tr', 243], ['head', 12], ['sh', 3]] });
    assert.equal(line, 'process host 350, tr 243, others 15 (all 608)');
  });
});
