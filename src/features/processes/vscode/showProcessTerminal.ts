import * as vscode from 'vscode';
import type { ProcessSupervisor } from '../common/supervisor';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import type { ProcessTerminals } from './processTerminals';
import { processSummary } from './processSummary';

/** The command's argument: a process id, or an object carrying one as `process_id` (as the panel's items do). */
function processIdOf(arg: unknown): string {
  if (typeof arg === 'string' && arg !== '') return arg;
  if (typeof arg === 'object' && arg !== null) {
    const id = (arg as { process_id?: unknown }).process_id;
    if (typeof id === 'string' && id !== '') return id;
  }
  throw new Error('CodeSpace: Show Agent Process Terminal takes a process id (or no argument, to pick one).');
}

type ProcessItem = vscode.QuickPickItem & { readonly processId: string };

/** The agent's processes the supervisor still knows, newest first, with state, exit code and duration. */
async function pickProcess(terminals: ProcessTerminals, processes: Pick<ProcessSupervisor, 'list'>): Promise<string | undefined> {
  const now = Date.now();
  const items: ProcessItem[] = processes
    .list()
    .reverse()
    .map((s) => ({
      processId: s.process_id,
      label: `$(${s.state === 'running' ? 'play' : 'circle-outline'}) ${s.command.join(' ')}`,
      description: processSummary(s, now),
      detail: `${s.process_id} in ${s.workspace_id}${terminals.mirrored(s.process_id) ? ' · terminal open' : ''}`,
    }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('CodeSpace: agents have run no process in this window yet (or they have all been forgotten).');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Show Agent Process Terminal',
    placeHolder: 'An agent process: its terminal opens with the output kept so far',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return pick?.processId;
}

/**
 * `codespace.showProcessTerminal`: opens (creating it on demand, replaying the output kept so far) and shows the
 * terminal of an agent process. With no argument, a quick pick of the agent's processes. Rejects for an unknown id.
 */
export function registerShowProcessTerminal(terminals: ProcessTerminals, processes: Pick<ProcessSupervisor, 'list'>): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.showProcessTerminal, async (arg?: unknown): Promise<void> => {
    const processId = arg === undefined ? await pickProcess(terminals, processes) : processIdOf(arg);
    if (processId !== undefined) await terminals.show(processId);
  });
}
