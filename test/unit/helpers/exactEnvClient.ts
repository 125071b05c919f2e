// An MCP client on a process started with exactly the given environment. The SDK's StdioClientTransport always adds
// its own default variables (HOME, PATH, ...), so it cannot reproduce an agent that passes fewer; here the child is
// spawned as the agent spawns it, and the SDK's newline-delimited JSON transport runs over its pipes.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

export interface ExactEnvClient {
  readonly client: Client;
  readonly child: ChildProcessWithoutNullStreams;
  readonly stderr: string[];
  close(): Promise<void>;
}

export async function exactEnvClient(command: string, args: readonly string[], options: { env: Record<string, string>; cwd: string }): Promise<ExactEnvClient> {
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (c: string) => stderr.push(c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Reads the child's stdout, writes to its stdin: the same framing in the other direction.
  const transport = new StdioServerTransport(child.stdout, child.stdin);
  const client = new Client({ name: 'exact-env-test', version: '1' });
  const close = async (): Promise<void> => {
    await client.close().catch(() => undefined);
    child.stdin.end();
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    // A child that exits before answering fails the connect at once, with what it said.
    await Promise.race([client.connect(transport), exited.then(() => Promise.reject(new Error(`exited with ${child.exitCode ?? child.signalCode}: ${stderr.join('')}`)))]);
  } catch (err) {
    await close();
    throw Object.assign(err as Error, { stderr: stderr.join('') });
  }
  return { client, child, stderr, close };
}
