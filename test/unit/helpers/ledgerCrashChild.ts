/**
 * Child process for the ledger crash test: runs the shared scenario and kills itself with SIGKILL at the
 * requested point, so the ledger is left exactly as an extension-host crash would leave it.
 * argv: <journal folder> <workspace folder> <before-write | between-writes | after-writes>
 */
import { OperationLedger } from '../../../src/kernel/ledger/operationLedger';
import { FileJournal } from '../../../src/base/node/fileJournal';
import { runScenario } from './ledgerScenario';

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is not delivered synchronously on every platform; never run past the kill point.
  for (;;) {
    /* wait for the signal */
  }
}

async function main(): Promise<void> {
  const [journalDir, workspaceDir, point] = process.argv.slice(2);
  if (!journalDir || !workspaceDir || !point || !['before-write', 'between-writes', 'after-writes'].includes(point)) {
    throw new Error(`usage: ledgerCrashChild <journal dir> <workspace dir> <point>, got ${process.argv.slice(2).join(' ')}`);
  }
  const ledger = new OperationLedger({ journal: new FileJournal({ directory: journalDir, fileName: 'operations.jsonl' }) });
  await ledger.open();
  await runScenario(ledger, workspaceDir, {
    afterMint: () => {
      if (point === 'before-write') die();
    },
    betweenWrites: () => {
      if (point === 'between-writes') die();
    },
    afterWrites: () => {
      if (point === 'after-writes') die();
    },
  });
  throw new Error('the scenario finished: the child should have been killed before finish');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(3);
});
