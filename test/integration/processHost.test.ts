import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connectToFirstFolder, pollFor } from './helpers';

/** The fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session. */
function stat(pid: number): { state: string; ppid: number; session: number } | undefined {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: f[0] as string, ppid: Number(f[1]), session: Number(f[3]) };
  } catch {
    return undefined;
  }
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
}

/** The pid of the process whose argv is exactly `argv`. */
function findByArgv(argv: readonly string[]): number | undefined {
  const want = argv.join('\0') + '\0';
  for (const entry of fs.readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && cmdline(Number(entry)) === want) return Number(entry);
  }
  return undefined;
}

/**
 * The sleepers' arguments are this run's own: another run on the machine (the other VS Code's suite runs beside this
 * one) starts sleepers of its own, and a fixed argument would find those.
 */
const RUN_MARK = 100_000_000 + Math.floor(Math.random() * 800_000_000);

describe('The process host: agent processes run beside the extension host', function () {
  this.timeout(120_000);
  let client: Client;
  let workspaceId: string;

  before(async () => {
    ({ client, wsId: workspaceId } = await connectToFirstFolder());
  });

  after(async () => {
    await client?.close();
  });

  /** Starts `sleep <mark>` and returns its process_id and the pid of its process host (walking up from it). */
  async function startSleeper(mark: string): Promise<{ id: string; pid: number; host: number }> {
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: workspaceId, command: ['sleep', mark], occupancy: 'shared' });
    const pid = await pollFor('the sleeper', () => findByArgv(['sleep', mark]));
    let host: number | undefined;
    const chain: number[] = [];
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = stat(p)?.ppid) {
      chain.push(p);
      if (cmdline(p).startsWith('codespace-process-host')) {
        host = p;
        break;
      }
    }
    assert.ok(host, `the command runs under the process host (ancestors ${chain.map((p) => `${p} ${JSON.stringify(cmdline(p).slice(0, 60))}`).join(' < ')})`);
    assert.ok(!chain.includes(process.pid), 'not under the extension host');
    return { id: process_id, pid, host };
  }

  it('runs commands in a host of its own session, and workspace_info says their lifetime is the host', async () => {
    const info = await call<{ execution: { process: { capabilities: { lifetime: string } } } }>(client, 'workspace_info', { workspace_id: workspaceId });
    assert.equal(info.execution.process.capabilities.lifetime, 'process-host');
    const s = await startSleeper(String(RUN_MARK + 1));
    assert.notEqual(stat(s.host)?.session, stat(process.pid)?.session, 'the host is detached from the extension host');
    const ended = await call<{ termination: string }>(client, 'terminate_process', { process_id: s.id });
    assert.equal(ended.termination, 'terminated');
    await pollFor('the sleeper to end', () => (stat(s.pid) === undefined || stat(s.pid)?.state === 'Z' ? true : undefined));
  });

  it('a host that dies under it: its processes are reported ended with output incomplete, and the next command starts a new host', async () => {
    const s = await startSleeper(String(RUN_MARK + 2));
    process.kill(s.host, 'SIGKILL');
    const status = await pollFor('the process to be reported ended', async () => {
      const r = await call<{ state: string; output_complete?: boolean }>(client, 'process_status', { process_id: s.id });
      return r.state === 'exited' ? r : undefined;
    });
    assert.equal(status.output_complete, false);
    const next = await startSleeper(String(RUN_MARK + 3));
    assert.notEqual(next.host, s.host);
    await call(client, 'terminate_process', { process_id: next.id });
    // The orphan of the killed host (nothing told it to stop: sleep writes nothing, so no SIGPIPE reaches it).
    try {
      process.kill(s.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
});
