import * as vscode from 'vscode';
import type { Logger } from '../../../base/logger';
import type { InstructionStatus, InstructionView, Steering, WorkView } from '../common/steering';
import { MAX_INSTRUCTION_BYTES, utf8Bytes } from '../../../shared/panelProtocol';
import { visibleString } from '../../../shared/visibleText';
import { COMMANDS } from '../../../kernel/vscode/commandIds';

export interface SteeringUiDeps {
  readonly steering: Steering;
  readonly log: Logger;
}

function message(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

/** One line of an instruction for a notification: control characters escaped, long text cut. */
function excerpt(text: string, max = 80): string {
  const line = visibleString(text.replace(/\s+/g, ' ').trim());
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The editor side of steering outside the panel: Send Instruction to Agent (a one-line instruction from an input
 * box), a warning when the agent marks an instruction blocked, and an offer to review a work when it finishes.
 */
export function registerSteering(deps: SteeringUiDeps): vscode.Disposable[] {
  const { steering, log } = deps;
  const statuses = new Map<string, InstructionStatus>();
  const workStatuses = new Map<string, WorkView['status']>();
  // What was there before this window started is known, not announced again.
  for (const w of steering.works()) {
    workStatuses.set(w.id, w.status);
    for (const i of steering.instructions(w.id)) statuses.set(i.id, i.status);
  }

  const pickOpenWork = async (arg: unknown): Promise<WorkView | undefined> => {
    if (typeof arg === 'string' && arg !== '') {
      const w = steering.work(arg);
      if (!w) void vscode.window.showErrorMessage(`CodeSpace: there is no work ${arg}.`);
      else if (w.status !== 'open') void vscode.window.showErrorMessage(`CodeSpace: the work "${excerpt(w.title)}" is finished; instructions go to an open work.`);
      return w?.status === 'open' ? w : undefined;
    }
    const open = steering.works({ status: 'open' });
    if (open.length === 0) {
      void vscode.window.showInformationMessage('CodeSpace: no agent has an open work. When one opens a work (work_open), you can send it instructions.');
      return undefined;
    }
    if (open.length === 1) return open[0];
    const pick = await vscode.window.showQuickPick(
      open.map((w) => {
        const c = steering.counts(w.id);
        return { label: visibleString(w.title), description: w.workspace_id, detail: `${c.queued} queued · ${c.claimed} claimed · ${c.done} done · opened ${new Date(w.opened_at).toLocaleTimeString()}`, id: w.id };
      }),
      { title: 'CodeSpace: send the instruction to which work?', placeHolder: 'Pick an open work' },
    );
    return pick ? steering.work(pick.id) : undefined;
  };

  const sendInstruction = async (workArg?: unknown, textArg?: unknown): Promise<InstructionView | undefined> => {
    const work = await pickOpenWork(workArg);
    if (!work) return undefined;
    const text =
      typeof textArg === 'string'
        ? textArg
        : await vscode.window.showInputBox({
            title: `Send an instruction to the agent working on "${excerpt(work.title, 60)}"`,
            prompt: 'Queued for the agent, which sees it on its next tool call. It is data for the agent: it cannot approve anything or change a setting. For several lines, use the CodeSpace panel.',
            placeHolder: 'e.g. also update the README',
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() === '' ? 'Write an instruction.' : utf8Bytes(v) > MAX_INSTRUCTION_BYTES ? `At most ${MAX_INSTRUCTION_BYTES / 1024} KiB.` : undefined),
          });
    if (text === undefined || text.trim() === '') return undefined;
    try {
      const view = await steering.createDraft(work.id, text, { queue: true });
      vscode.window.setStatusBarMessage('CodeSpace: instruction queued for the agent', 4000);
      return view;
    } catch (err) {
      void vscode.window.showErrorMessage(`CodeSpace: the instruction was not queued: ${message(err)}`);
      return undefined;
    }
  };

  const onChange = steering.onDidChange((e) => {
    if (e.kind === 'instruction') {
      const i = e.instruction;
      const prev = statuses.get(i.id);
      statuses.set(i.id, i.status);
      if (i.status === 'blocked' && prev !== 'blocked') {
        const note = i.note ? `: ${excerpt(i.note, 200)}` : '';
        log.info(`[steering] instruction ${i.id} blocked`);
        void vscode.window.showWarningMessage(`CodeSpace: the agent is blocked on "${excerpt(i.text)}"${note}`, 'Show Panel').then((pick) => {
          if (pick) void vscode.commands.executeCommand(COMMANDS.showPanel);
        });
      }
    } else if (e.kind === 'instruction_deleted') {
      statuses.delete(e.id);
    } else {
      const w = e.work;
      const prev = workStatuses.get(w.id);
      workStatuses.set(w.id, w.status);
      // A work the developer discarded is not announced as finished by its agent.
      if (w.status === 'finished' && prev === 'open' && w.discarded_at === undefined) {
        void vscode.window.showInformationMessage(`CodeSpace: the agent finished the work "${excerpt(w.title)}".`, 'Review Work').then((pick) => {
          if (pick) void vscode.commands.executeCommand(COMMANDS.reviewWork, w.id);
        });
      }
    }
  });

  return [new vscode.Disposable(() => onChange.dispose()), vscode.commands.registerCommand(COMMANDS.sendInstruction, sendInstruction)];
}
