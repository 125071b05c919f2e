/**
 * Command sandbox start-up: `true` through the supervisor (exec until eof, the way an agent sees a command end),
 * in the bubblewrap sandbox against unsandboxed, on pipes and on a PTY, interleaved in one run. The target is at
 * most 3x the unsandboxed time or under 20 ms added.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Workspace } from '../src/kernel/workspaces';
import { silentLogger } from '../src/base/logger';
import { ProcessSupervisor } from '../src/features/processes/common/supervisor';
import { DEFAULT_LIMITS } from '../src/kernel/limits';
import { ChildProcessBackend } from '../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../src/features/processes/node/nodePtyBackend';
import { CommandSandbox } from '../src/features/processes/node/sandbox/commandSandbox';
import type { BenchGroup, Contender, GroupResult, Row, Stats } from './lib';
import { Resources, fmtMs, interleave, ratio, summarize } from './lib';

const WARMUP_ROUNDS = 3;
const ROUNDS = 40;
const ADDED_MS_TARGET = 20;
const RATIO_TARGET = 3;

export const sandboxStartup: BenchGroup = async (log): Promise<GroupResult> => {
  const resources = new Resources();
  try {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-bench-sandbox-')));
    resources.add(() => fs.rmSync(root, { recursive: true, force: true }));
    const workspace: Workspace = { id: 'bench', name: 'bench', root, trusted: true, profile: 'exec', canWrite: true, canExec: true };
    const sandbox = new CommandSandbox({ mode: () => 'required', network: () => 'block', logger: silentLogger });
    // The same sandbox without the Unix-socket filter (codespace.exec.unixSockets "allow"): what the filter costs.
    const unfiltered = new CommandSandbox({ mode: () => 'required', network: () => 'block', unixSockets: () => 'allow', logger: silentLogger });
    for (const sb of [sandbox, unfiltered]) {
      resources.add(() => sb.close());
      const status = await sb.status();
      if (!status.command_sandbox.enabled || status.refusing) throw new Error(`no sandbox here: ${status.command_sandbox.reason ?? 'unknown'}`);
    }
    const supervisor = (box: CommandSandbox | undefined): ProcessSupervisor => {
      const pty = new NodePtyBackend(box ? { sandbox: box } : {});
      const pipes = new ChildProcessBackend(box ? { sandbox: box } : {});
      const sup = new ProcessSupervisor({ backends: { tty: () => pty, pipes: () => pipes }, limits: () => DEFAULT_LIMITS });
      resources.add(() => sup.disposeAll());
      return sup;
    };
    const plain = supervisor(undefined);
    const boxed = supervisor(sandbox);
    const boxedNoFilter = supervisor(unfiltered);
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), LANG: 'C.UTF-8' };
    const runTrue = async (sup: ProcessSupervisor, tty: boolean): Promise<void> => {
      const { process_id } = await sup.exec(workspace, ['true'], { cwd: root, root, tty, env, occupancy: 'shared' });
      for (let cursor = 0; ; ) {
        const r = await sup.read(process_id, cursor, 65536, 5000);
        cursor = r.cursor;
        if (r.eof) break;
      }
      const st = sup.status(process_id);
      if (st.exit_code !== 0) throw new Error(`true ended badly: ${JSON.stringify(st)}`);
    };
    const names = {
      pipes: 'pipes, unsandboxed',
      pipesBox: 'pipes, bubblewrap sandbox',
      pty: 'PTY, unsandboxed',
      ptyBox: 'PTY, bubblewrap sandbox',
      pipesNoFilter: 'pipes, bubblewrap sandbox without the Unix-socket filter',
    } as const;
    const contenders: Contender[] = [
      { name: names.pipes, run: () => runTrue(plain, false) },
      { name: names.pipesBox, run: () => runTrue(boxed, false) },
      { name: names.pty, run: () => runTrue(plain, true) },
      { name: names.ptyBox, run: () => runTrue(boxed, true) },
      { name: names.pipesNoFilter, run: () => runTrue(boxedNoFilter, false) },
    ];
    const samples = await interleave(contenders, {
      warmupRounds: WARMUP_ROUNDS,
      rounds: ROUNDS,
      perRound: 1,
      onRound: (round, total, warmup) => {
        if (round % 10 === 0 || round === total) log(`[sandbox] round ${round}/${total}${warmup ? ' (warm-up)' : ''}`);
      },
    });
    const stats = Object.fromEntries(Object.values(names).map((n) => [n, summarize(samples.get(n) ?? [])])) as Record<string, Stats>;
    const s = (n: string): Stats => stats[n] as Stats;
    const added = (box: string, bare: string): number => s(box).median - s(bare).median;
    const verdict = (box: string, bare: string): string => {
      const r = s(box).median / s(bare).median;
      const ok = r <= RATIO_TARGET || added(box, bare) < ADDED_MS_TARGET;
      return `${ok ? 'meets' : 'misses'} the target (≤ ${RATIO_TARGET}x or < ${ADDED_MS_TARGET} ms added)`;
    };
    const rows: Row[] = Object.values(names).map((n) => ({ contender: n, stats: s(n) }));
    return {
      title: 'Command sandbox: start-up of `true`, sandboxed against unsandboxed',
      description:
        `\`exec_command ["true"]\` through the ProcessSupervisor until eof, with and without the bubblewrap sandbox (network blocked), ` +
        `on pipes and on a PTY, and on pipes without the Unix-socket filter. ${WARMUP_ROUNDS} warm-up + ${ROUNDS} measured rounds, the five interleaved.`,
      rows,
      ratios: [
        ratio('pipes: sandboxed / unsandboxed (median)', s(names.pipesBox), s(names.pipes), RATIO_TARGET),
        ratio('PTY: sandboxed / unsandboxed (median)', s(names.ptyBox), s(names.pty), RATIO_TARGET),
      ],
      notes: [
        `Pipes: ${fmtMs(s(names.pipesBox).median)} ms sandboxed against ${fmtMs(s(names.pipes).median)} ms, ${fmtMs(added(names.pipesBox, names.pipes))} ms added: ${verdict(names.pipesBox, names.pipes)}.`,
        `PTY: ${fmtMs(s(names.ptyBox).median)} ms sandboxed against ${fmtMs(s(names.pty).median)} ms, ${fmtMs(added(names.ptyBox, names.pty))} ms added: ${verdict(names.ptyBox, names.pty)}.`,
        `The Unix-socket filter (seccomp, on pipes): ${fmtMs(s(names.pipesBox).median)} ms with it against ${fmtMs(s(names.pipesNoFilter).median)} ms without, ${fmtMs(s(names.pipesBox).median - s(names.pipesNoFilter).median)} ms (median).`,
        'The sandbox adds a /bin/sh exec outside (holding the verified folder, opening the argument files) and a bash inside (checking the folder, reading the command line, setting the process bound), bwrap setting up its namespaces and mounts, writing two small argument files, the look-ups of protected and secret paths and the bounded search for nested repositories.',
      ],
    };
  } finally {
    await resources.dispose();
  }
};
