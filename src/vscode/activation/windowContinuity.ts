import * as vscode from 'vscode';
import type { Disposable } from '../../base/disposable';
import { describeErrorWithStack } from '../../base/describeError';
import { SerialQueue } from '../../base/serialQueue';
import { WindowLiveness } from '../../features/connect';
import type { McpHttpHost } from '../../mcp/httpHost';
import type { AssembledServices } from '../../app/assembleServices';
import { discoveryDir } from '../../features/connect/node';
import { PingAnswerer, askSameWindows } from '../../features/connect/node';
import type { StateFolderChoice } from '../../kernel/node/stateFolder';
import { chooseStateFolder } from '../../kernel/node/stateFolder';
import { identify } from '../../base/node/processIdentity';
import type { OutputLogger } from '../../kernel/vscode/log';

/** How long a new extension host waits for the owners of records on its folders to answer (askSameWindows). */
const SAME_WINDOW_ASK_MS = 12_000;
/** How long an owner gives its window to answer such a ping. */
const PING_ANSWER_MS = 5_000;
/** How often this window is asked whether it still answers, and how long a question may stay open. */
const WINDOW_ASK_INTERVAL_MS = 10_000;
const WINDOW_ASK_TIMEOUT_MS = 30_000;

/** The window's file folders: the ones its discovery record names. */
export function ownFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/**
 * A remote window's server may keep this window's previous extension host alive after a reload (it waits for the
 * old page to reconnect): asks the owner of any record with these very folders whether its window still answers.
 * One that does not withdraws its record, frees its port and lets its process host go; one that does is a second
 * window on these folders, and stays (README: "A reloaded remote window").
 */
export async function askSameWindow(log: OutputLogger): Promise<void> {
  for (const o of await askSameWindows({ dir: discoveryDir(), folders: ownFolders(), selfPid: process.pid, timeoutMs: SAME_WINDOW_ASK_MS })) {
    const what = o.answer === 'live' ? 'another window, which stays' : o.answer === 'gone' ? 'this window before its reload; it withdrew' : 'did not answer; both records stay';
    log.info(`[discovery] the extension host pid ${o.pid} on the same folders: ${what}`);
  }
}

/** Where the window's state is, and the claim on it when it is a folder of its own. */
export interface WindowState {
  readonly dir: string;
  readonly folder: StateFolderChoice | undefined;
}

/**
 * The window's state (ledger, checkpoints, worktrees): in the folder VS Code gave, unless this window's previous
 * extension host, still alive, had it in another one and released it (src/kernel/node/stateFolder.ts).
 */
export function chooseWindowState(context: vscode.ExtensionContext, log: OutputLogger): WindowState {
  const self = identify(process.pid);
  const folder = context.storageUri && self ? chooseStateFolder({ vscodeDir: context.storageUri.fsPath, self, logger: log }) : undefined;
  const dir = folder?.dir ?? (context.storageUri ?? context.globalStorageUri).fsPath;
  if (folder && folder.source !== 'own') {
    const why = folder.source === 'private' ? 'the folder VS Code gave is in use by another live window' : "taken over from this window's previous extension host";
    log.info(`[state] this window's state is in ${dir} (${why}); VS Code gave ${context.storageUri?.fsPath}`);
  }
  return { dir, folder };
}

export interface ContinuityOptions {
  readonly state: WindowState;
  readonly core: Pick<AssembledServices, 'stateWrites' | 'processHost'>;
  readonly host: McpHttpHost;
  readonly preferredPort: () => number;
  readonly recordFile: () => string | undefined;
  readonly log: OutputLogger;
}

/**
 * Whether this window still answers (a remote window's extension host can outlive its page). While it does not, the
 * state folder is released for a newer extension host of the window and the endpoint stops (its record goes, the
 * bridge finds the live window; the process host may be taken over); when it answers again the state is taken back,
 * unless a newer one took it, and the endpoint starts again. One state step at a time.
 */
export function keepWindowContinuity(o: ContinuityOptions): Disposable[] {
  const { state, core, host, log } = o;
  const folder = state.folder;
  const steps = new SerialQueue();
  const releaseState = (): Promise<void> =>
    steps.run(async () => {
      if (!folder || folder.claim.isReleased) return;
      await core.stateWrites.suspend();
      folder.claim.release();
      log.info(`[state] released ${folder.dir} for a newer extension host of this window`);
    });
  /** False when a newer extension host took the state meanwhile. */
  const reclaimState = (): Promise<boolean> =>
    steps.run(async () => {
      if (!folder || !folder.claim.isReleased) return true;
      if (!folder.claim.reclaim()) return false;
      core.stateWrites.resume();
      log.info(`[state] took ${folder.dir} back: this window answers again`);
      return true;
    });
  const failed = (what: string) => (err: unknown) => log.error(`[window] ${what} failed`, describeErrorWithStack(err));
  const liveness = new WindowLiveness({
    roundTrip: () => vscode.commands.executeCommand('setContext', 'codespace.windowAnswers', true),
    intervalMs: WINDOW_ASK_INTERVAL_MS,
    timeoutMs: WINDOW_ASK_TIMEOUT_MS,
    onListenerError: failed('a liveness listener'),
  });
  // Asked by a bridge's ping, and by the process host when another extension host of this window wants it.
  // The process host's regular question (`heartbeat`) only reports: the liveness loop decides the endpoint's state.
  const windowAnswers = async (heartbeat = false): Promise<boolean> => (await liveness.check(PING_ANSWER_MS, !heartbeat)) === 'live';
  core.processHost?.answerWindowQuestionsWith(windowAnswers);
  let stoppedForLoss = false;
  const onLost = (): void => {
    log.warn('[window] this window stopped answering (its page went away; a remote server keeps this extension host for a reconnection): stopping the endpoint and letting a newer extension host of the window take the agent processes and the state');
    stoppedForLoss = host.state.kind === 'running' || host.state.kind === 'starting';
    // The state folder is released before the record goes: a newer extension host told `gone` finds it free.
    releaseState()
      .then(undefined, failed('releasing the state folder'))
      .then(() => host.stop())
      .then(undefined, failed('stopping the endpoint'));
  };
  const onLive = (): void => {
    const restart = stoppedForLoss;
    stoppedForLoss = false;
    reclaimState()
      .then((ok) => {
        if (!ok) {
          log.warn('[window] this window answers again, but a newer extension host of the window has taken its state over: the endpoint stays stopped');
          return;
        }
        if (!restart) return;
        log.info('[window] this window answers again: starting the endpoint');
        return host.start(o.preferredPort());
      })
      .then(undefined, failed('restarting the endpoint'));
  };
  return [
    liveness,
    new PingAnswerer({ dir: discoveryDir(), recordFile: o.recordFile, windowAnswers, logger: log }),
    liveness.onDidChange((s) => {
      core.processHost?.windowLive(s === 'live');
      if (s === 'lost') onLost();
      else onLive();
    }),
  ];
}
