/**
 * Child process for the session memory test, started with --expose-gc: a real McpHttpHost on 127.0.0.1 serving the
 * folder given as argv[2] as workspace "demo". Over IPC it first sends { port, token }, then answers every
 * "heap" message with { heapUsed } measured after global.gc(), and stops the host on "stop".
 */
import { startHost } from './httpFixture';

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const root = process.argv[2];
  if (!root || !process.send) throw new Error('usage: fork(sessionMemoryChild.js, [root]) with an IPC channel');
  const h = await startHost(root);
  process.on('message', (m: unknown) => {
    if (m === 'heap') process.send?.({ heapUsed: heapAfterGc() });
    else if (m === 'stop') void h.stop().finally(() => process.exit(0));
  });
  process.send({ port: h.port, token: h.token.value });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
