import * as vscode from 'vscode';
import type { Disposable } from '../../../base/disposable';
import { describeError } from '../../../base/describeError';
import { ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { ProcessInfo, ProcessStatus } from '../common/processTypes';
import type { MirroredProcesses } from './processPty';
import { ProcessPty } from './processPty';
import { terminalName } from './terminalText';
import type { SlotHolder } from './terminalSlots';
import { terminalSlots } from './terminalSlots';
import { processSettings } from './processSettings';

interface Mirror {
  readonly terminal: vscode.Terminal;
  readonly pty: ProcessPty;
  /** The developer asked for it (or asked to show it): it never closes on a timer. */
  requested: boolean;
  /** Order of its process's end among finished mirrors; undefined while the process runs. */
  finishedSeq?: number;
  /** Closes the terminal once the grace period after the exit has passed. */
  closeTimer?: ReturnType<typeof setTimeout>;
}

/** The two settings the mirror reads, each time it decides (so a change applies to the next decision). */
export interface TerminalSettings {
  maxLiveMirrors(): number;
  closeExitedAfterSeconds(): number;
}

const SETTINGS: TerminalSettings = {
  maxLiveMirrors: () => processSettings.terminalsMaxLiveMirrors(),
  closeExitedAfterSeconds: () => processSettings.terminalsCloseExitedAfterSeconds(),
};

/** Fired when a process's terminal opens or closes. */
export interface MirrorChange {
  readonly processId: string;
  readonly mirrored: boolean;
}

/**
 * Shows supervised processes in VS Code terminals, so the developer watches agents' commands live: the output so
 * far, then live output; typing goes to the process; closing the terminal ends a running process; resizing it
 * resizes a PTY. A finished process's terminal shows a dim status line and closes by itself after
 * `codespace.terminals.closeExitedAfterSeconds`. At most `codespace.terminals.maxLiveMirrors` agent terminals are
 * open: a process started while all are taken has none (it is still supervised and readable) until the developer
 * opens it with `show` (the Show Agent Process Terminal command). The full rule is in terminalSlots.ts. Terminals
 * CodeSpace opens on its own appear in the panel without taking focus.
 */
export class ProcessTerminals implements vscode.Disposable {
  private readonly mirrors = new Map<string, Mirror>();
  /** Terminals whose pseudoterminal closed before VS Code said why: the decision waits for onDidCloseTerminal. */
  private readonly closing = new Map<vscode.Terminal, (reason: vscode.TerminalExitReason | undefined) => void>();
  private readonly subscriptions: Disposable[] = [];
  private readonly didChangeMirrors = new vscode.EventEmitter<MirrorChange>();
  /** Fired when a process's terminal opens or closes. */
  readonly onDidChangeMirrors = this.didChangeMirrors.event;
  private finishedCount = 0;
  private disposed = false;

  constructor(
    private readonly processes: MirroredProcesses,
    private readonly logger: Logger,
    private readonly settings: TerminalSettings = SETTINGS,
  ) {
    this.subscriptions.push(
      processes.onDidStart((info) => this.started(info)),
      processes.onDidOutput((id, bytes) => this.mirrors.get(id)?.pty.output(bytes)),
      processes.onDidSkip((id, bytes) => this.mirrors.get(id)?.pty.skipped(bytes)),
      processes.onDidExit((id, status) => this.ended(id, status)),
      // A terminal closed before the workbench opened its pseudoterminal never gets a close() call: catch it here.
      vscode.window.onDidCloseTerminal((closed) => {
        const decide = this.closing.get(closed);
        this.closing.delete(closed);
        decide?.(closed.exitStatus?.reason);
        for (const { terminal, pty } of [...this.mirrors.values()]) if (terminal === closed) pty.close();
      }),
    );
    for (const status of processes.list()) {
      if (status.state === 'running') this.started(processes.info(status.process_id));
    }
  }

  /** Whether the process's terminal is open now. */
  mirrored(processId: string): boolean {
    return this.mirrors.has(processId);
  }

  /**
   * Opens the process's terminal if it has none (replaying the output kept so far, and how it ended if it has) and
   * shows it. Throws for a process the supervisor does not know (never ran, or forgotten since).
   */
  async show(processId: string): Promise<void> {
    if (this.disposed) throw new Error('CodeSpace: the agent terminals are shut down.');
    let mirror = this.mirrors.get(processId);
    if (!mirror) {
      let info: ProcessInfo;
      let status: ProcessStatus;
      try {
        info = this.processes.info(processId);
        status = this.processes.status(processId);
      } catch (err) {
        if (ToolError.is(err, 'PROCESS_NOT_FOUND')) {
          throw new Error(`CodeSpace: no agent process "${processId}" (it never ran in this window, or it has been forgotten).`);
        }
        throw err;
      }
      const { close } = terminalSlots.admitRequested(this.holders(), this.settings.maxLiveMirrors());
      for (const id of close) this.closeMirror(id, 'making room for a terminal the developer asked for');
      mirror = this.open(info, true);
      if (status.state === 'exited') this.markFinished(processId, mirror, status);
    } else if (!mirror.requested) {
      // Asked for: it no longer closes on a timer.
      mirror.requested = true;
      clearTimeout(mirror.closeTimer);
      mirror.closeTimer = undefined;
    }
    mirror.terminal.show(false);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const sub of this.subscriptions.splice(0)) sub.dispose();
    for (const mirror of [...this.mirrors.values()]) {
      clearTimeout(mirror.closeTimer);
      try {
        mirror.pty.closeQuietly(mirror.terminal);
      } catch (err) {
        this.logger.warn(`[terminals] closing a terminal failed: ${String(err)}`);
      }
    }
    this.mirrors.clear();
    this.closing.clear();
    this.didChangeMirrors.dispose();
  }

  private holders(): SlotHolder[] {
    return [...this.mirrors].map(([processId, m]) => ({
      processId,
      requested: m.requested,
      ...(m.finishedSeq !== undefined ? { finishedSeq: m.finishedSeq } : {}),
    }));
  }

  /** A process started: it gets a terminal only if a slot is free now (see terminalSlots.ts). */
  private started(info: ProcessInfo): void {
    if (this.disposed || this.mirrors.has(info.process_id)) return;
    const slots = this.settings.maxLiveMirrors();
    const { open, close } = terminalSlots.admitNewProcess(this.holders(), slots);
    if (!open) {
      this.logger.debug(`[terminals] ${info.process_id}: no terminal (${this.mirrors.size} agent terminal(s) open, ${slots} allowed); Show Agent Process Terminal opens it`);
      return;
    }
    for (const id of close) this.closeMirror(id, 'making room for a new process');
    const mirror = this.open(info, false);
    mirror?.terminal.show(true); // visible in the panel, focus stays where the developer is typing
  }

  private open(info: ProcessInfo, requested: true): Mirror;
  private open(info: ProcessInfo, requested: false): Mirror | undefined;
  private open(info: ProcessInfo, requested: boolean): Mirror | undefined {
    try {
      const created: { terminal?: vscode.Terminal } = {};
      const pty: ProcessPty = new ProcessPty(
        info,
        this.processes,
        this.logger,
        (id) => this.forget(id, pty),
        () => created.terminal?.exitStatus?.reason,
        (decide) => {
          if (created.terminal) this.closing.set(created.terminal, decide);
          else decide(undefined);
        },
      );
      const terminal = vscode.window.createTerminal({
        name: terminalName(info.command),
        pty,
        iconPath: new vscode.ThemeIcon('robot'),
        isTransient: true,
        location: vscode.TerminalLocation.Panel,
      });
      created.terminal = terminal;
      const mirror: Mirror = { terminal, pty, requested };
      this.mirrors.set(info.process_id, mirror);
      this.logger.debug(`[terminals] ${info.process_id} shown in terminal "${terminal.name}"${requested ? ' (asked for)' : ''}`);
      this.didChangeMirrors.fire({ processId: info.process_id, mirrored: true });
      return mirror;
    } catch (err) {
      const message = `${info.process_id}: no terminal: ${describeError(err)}`;
      if (requested) throw new Error(`CodeSpace: ${message}`, { cause: err });
      this.logger.warn(`[terminals] ${message}`);
      return undefined;
    }
  }

  private ended(processId: string, status: ProcessStatus): void {
    const mirror = this.mirrors.get(processId);
    if (mirror) this.markFinished(processId, mirror, status);
  }

  /** The process of an open terminal has ended: the exit line, the grace timer, the cap on finished terminals. */
  private markFinished(processId: string, mirror: Mirror, status: ProcessStatus): void {
    mirror.pty.ended(status);
    if (mirror.finishedSeq !== undefined) return;
    mirror.finishedSeq = ++this.finishedCount;
    const delay = terminalSlots.closeDelayMs(mirror, this.settings.closeExitedAfterSeconds());
    if (delay !== undefined) {
      mirror.closeTimer = setTimeout(() => {
        if (this.mirrors.get(processId) === mirror) this.closeMirror(processId, `${delay / 1000} s after its exit`);
      }, delay);
    }
    for (const id of terminalSlots.finishedBeyondCap(this.holders())) this.closeMirror(id, 'too many finished terminals');
  }

  /** Closes a terminal without ending its process. */
  private closeMirror(processId: string, why: string): void {
    const mirror = this.mirrors.get(processId);
    if (!mirror) return;
    this.forget(processId, mirror.pty);
    this.logger.debug(`[terminals] ${processId}: terminal closed (${why})`);
    try {
      mirror.pty.closeQuietly(mirror.terminal);
    } catch (err) {
      this.logger.warn(`[terminals] closing the terminal of ${processId} failed: ${String(err)}`);
    }
  }

  /** The terminal of `pty` is gone (a later terminal of the same process is not). */
  private forget(processId: string, pty: ProcessPty): void {
    const mirror = this.mirrors.get(processId);
    if (mirror?.pty !== pty) return;
    clearTimeout(mirror.closeTimer);
    this.mirrors.delete(processId);
    if (!this.disposed) this.didChangeMirrors.fire({ processId, mirrored: false });
  }
}
