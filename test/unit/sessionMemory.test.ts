import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { fork } from 'node:child_process';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeTree, removeTree } from './helpers/workspaceFixture';

const MiB = 1024 * 1024;
const BIG_BYTES = 256 * 1024;
const SMALL_BYTES = 4 * 1024;
/**
 * 4,000 by default: a transport that keeps each answer (what this guards against) passes 16 MiB within about 1,000
 * calls; CODESPACE_MEMORY_CALLS runs it longer.
 */
const CALLS = Number(process.env.CODESPACE_MEMORY_CALLS ?? 4_000);
/** Every BIG_EVERY-th call reads the 256 KiB file, the others a 4 KiB one (1 = every call reads the big file). */
const BIG_EVERY = Number(process.env.CODESPACE_MEMORY_BIG_EVERY ?? 20);
const CHECK_EVERY = 500;
const LIMIT_MiB = 16;
/** Calls in flight at once on the one session. */
const CONCURRENCY = 2;

/** The host runs in its own process (started with --expose-gc) so its heap is measured alone, after a full GC. */
class HostProcess {
  private constructor(private readonly child: ChildProcess, readonly port: number, readonly token: string) {}

  static start(root: string): Promise<HostProcess> {
    return new Promise((resolve, reject) => {
      const child = fork(path.join(__dirname, 'helpers', 'sessionMemoryChild.js'), [root], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`host process exited early (${code})`)));
      child.once('message', (m: { port: number; token: string }) => resolve(new HostProcess(child, m.port, m.token)));
    });
  }

  heap(): Promise<number> {
    return new Promise((resolve) => {
      this.child.once('message', (m: { heapUsed: number }) => resolve(m.heapUsed));
      this.child.send('heap');
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.removeAllListeners('exit');
      this.child.once('exit', () => resolve());
      this.child.send('stop');
    });
  }
}

/**
 * A full GC in this (the client's) process. Node's fetch keeps one abort listener per request on the SDK client's
 * signal until that Request is garbage collected, so thousands of quick calls without a GC end in a flood of
 * MaxListenersExceededWarning. Collecting at each checkpoint keeps the log clean; it measures nothing.
 */
function collectClientGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

describe('one long MCP session over HTTP (memory)', function () {
  this.timeout(180_000);
  let root: string;
  let host: HostProcess;
  let client: Client;
  const line = 'export const value = "lorem ipsum dolor sit amet, consectetur adipiscing elit";\n';
  const sized = (bytes: number) => line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes - 1) + '\n';
  const big = sized(BIG_BYTES);
  const small = sized(SMALL_BYTES);

  before(async () => {
    root = await makeTree({ 'big.ts': big, 'small.ts': small }, 'codespace-mem-');
    host = await HostProcess.start(root);
    client = new Client({ name: 'memory-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${host.port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${host.token}` } } }));
    await client.listTools();
  });
  after(async () => {
    await client?.close();
    await host?.stop();
    await removeTree(root);
  });

  it(`keeps the host's heap growth under ${LIMIT_MiB} MiB (after GC) across ${CALLS} reads, one in ${BIG_EVERY} of a 256 KiB file`, async function () {
    let started = 0;
    const read = async (n: number): Promise<void> => {
      const [file, text] = n % BIG_EVERY === 0 ? ['big.ts', big] : ['small.ts', small];
      const r = await client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: file } });
      assert.equal(r.isError, undefined);
      assert.equal((r.structuredContent as { content: string }).content.length, text.length);
    };
    const batch = async (n: number): Promise<void> => {
      const end = started + n;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (started < end) {
          await read(started++);
        }
      }));
    };
    await batch(50); // warm-up: JIT, connections, lazily built schemas
    started = 0;
    const baseline = await host.heap();
    const growth: string[] = [];
    while (started < CALLS) {
      await batch(Math.min(CHECK_EVERY, CALLS - started));
      collectClientGarbage();
      const mib = (await host.heap() - baseline) / MiB;
      growth.push(`${started}: ${mib.toFixed(1)}`);
      // Stop at the first checkpoint over the bound: the leaking transport would otherwise need gigabytes.
      assert.ok(mib < LIMIT_MiB, `heap grew by ${mib.toFixed(1)} MiB after ${started} calls (calls: MiB ${growth.join(', ')})`);
    }
    // The figures, in the reporter's line for this test.
    if (this.test) this.test.title += ` (grew ${growth.at(-1)?.split(': ')[1] ?? '?'} MiB)`;
  });
});
