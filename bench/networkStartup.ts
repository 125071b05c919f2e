/**
 * What `codespace.exec.network` `domains` adds to a command's start: `true` through the supervisor in the bubblewrap
 * sandbox with the network blocked against the same with the domain proxy (its relay starts inside, on the
 * editor's Node, before the command), on pipes, interleaved in one run. A diagnosis of the added cost, not a target.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Workspace } from '../src/kernel/workspaces';
import { silentLogger } from '../src/base/logger';
import { ProcessSupervisor } from '../src/features/processes/common/supervisor';
import { DEFAULT_LIMITS } from '../src/kernel/limits';
import { ChildProcessBackend } from '../src/features/processes/node/childProcessBackend';
import { CommandSandbox } from '../src/features/processes/node/sandbox/commandSandbox';
import type { NetworkMode } from '../src/features/processes/node/sandbox/commandSandbox';
import type { UnixSocketMode } from '../src/features/processes/node/sandbox/seccomp';
import type { BenchGroup, Contender, GroupResult, Row, Stats } from './lib';
import { Resources, fmtMs, interleave, summarize } from './lib';

const WARMUP_ROUNDS = 3;
const ROUNDS = 30;

export const networkStartup: BenchGroup = async (log): Promise<GroupResult> => {
  const resources = new Resources();
  try {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-network-')));
    resources.add(() => fs.rmSync(root, { recursive: true, force: true }));
    const workspace: Workspace = { id: 'bench', name: 'bench', root, trusted: true, profile: 'exec', canWrite: true, canExec: true };
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), LANG: 'C.UTF-8' };
    const supervisor = async (network: NetworkMode, unixSockets: UnixSocketMode = 'block'): Promise<ProcessSupervisor> => {
      const sandbox = new CommandSandbox({ mode: () => 'required', network: () => network, unixSockets: () => unixSockets, allowedDomains: () => ['registry.npmjs.org'], logger: silentLogger });
      resources.add(() => sandbox.close());
      const status = await sandbox.status();
      if (!status.command_sandbox.enabled || status.refusing) throw new Error(`no sandbox here: ${status.command_sandbox.reason ?? 'unknown'}`);
      const pipes = new ChildProcessBackend({ sandbox });
      const sup = new ProcessSupervisor({ backends: { tty: () => pipes, pipes: () => pipes }, limits: () => DEFAULT_LIMITS });
      resources.add(() => sup.disposeAll());
      return sup;
    };
    const runTrue = async (sup: ProcessSupervisor): Promise<void> => {
      const { process_id } = await sup.exec(workspace, ['true'], { cwd: root, root, tty: false, env, occupancy: 'shared' });
      for (let cursor = 0; ; ) {
        const r = await sup.read(process_id, cursor, 65536, 5000);
        cursor = r.cursor;
        if (r.eof) break;
      }
      const st = sup.status(process_id);
      if (st.exit_code !== 0) throw new Error(`true ended badly: ${JSON.stringify(st)}`);
    };
    const names = {
      block: 'pipes, sandbox, network blocked',
      domains: 'pipes, sandbox, network by domain',
      domainsNoFilter: 'pipes, sandbox, network by domain, no Unix-socket filter',
    } as const;
    const blocked = await supervisor('block');
    const domains = await supervisor('domains');
    const domainsNoFilter = await supervisor('domains', 'allow');
    const contenders: Contender[] = [
      { name: names.block, run: () => runTrue(blocked) },
      { name: names.domains, run: () => runTrue(domains) },
      { name: names.domainsNoFilter, run: () => runTrue(domainsNoFilter) },
    ];
    const samples = await interleave(contenders, {
      warmupRounds: WARMUP_ROUNDS,
      rounds: ROUNDS,
      perRound: 1,
      onRound: (round, total, warmup) => {
        if (round % 10 === 0 || round === total) log(`[network] round ${round}/${total}${warmup ? ' (warm-up)' : ''}`);
      },
    });
    const s = (n: string): Stats => summarize(samples.get(n) ?? []);
    const rows: Row[] = Object.values(names).map((n) => ({ contender: n, stats: s(n) }));
    return {
      title: 'Network by domain: start-up of `true`, domain proxy against network blocked',
      description: `\`exec_command ["true"]\` through the ProcessSupervisor until eof in the bubblewrap sandbox, network \`block\` against \`domains\`, on pipes. ${WARMUP_ROUNDS} warm-up + ${ROUNDS} measured rounds, interleaved.`,
      rows,
      ratios: [],
      notes: [
        `${fmtMs(s(names.domains).median - s(names.block).median)} ms added per command (median): starting the relay (a Node process inside the sandbox) and waiting for it to listen, then the nested bwrap that applies the Unix-socket filter to the command alone.`,
        `${fmtMs(s(names.domains).median - s(names.domainsNoFilter).median)} ms of it (median) is that nested bwrap (codespace.exec.unixSockets "block" against "allow").`,
      ],
    };
  } finally {
    await resources.dispose();
  }
};
