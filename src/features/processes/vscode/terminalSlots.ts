/**
 * Which agent processes get a VS Code terminal, and when the terminal of a finished one closes. Pure (no vscode):
 * ProcessTerminals applies it, the unit tests check it.
 *
 * The rule:
 * - Every open agent terminal holds a slot, whether its process runs or has finished. There are
 *   `codespace.terminals.maxLiveMirrors` slots.
 * - CodeSpace opens a terminal on its own only when a process starts, and only if a slot is free then or can be
 *   freed by closing the terminal of a finished process that CodeSpace opened on its own (the one whose process
 *   finished first). The terminal of a running process is never closed to make room, nor one the developer asked
 *   for. A process that got no terminal at its start gets none later when a slot frees up: no tab pops up unasked
 *   for a command that has been running for a while. It stays supervised (the agent reads it as always) and is
 *   listed in the CodeSpace panel; "CodeSpace: Show Agent Process Terminal" opens its terminal.
 * - A terminal the developer asks for always opens, replaying the output kept so far. To stay within the slots,
 *   terminals of finished processes close first (those CodeSpace opened on its own before those the developer
 *   asked for, each the earliest finished first). When every slot holds a running process it opens beyond the
 *   cap, and until the count is below the cap again no process gets a terminal on its own.
 * - A terminal CodeSpace opened on its own closes `codespace.terminals.closeExitedAfterSeconds` after its process
 *   exits (0: never). A terminal the developer asked for (also: one already open that they asked to show) stays
 *   until they close it, or until it is closed to make room as above.
 * - At most MAX_FINISHED_TERMINALS terminals of finished processes stay open; beyond, the earliest finished close
 *   (CodeSpace's own first).
 */

/** Terminals of finished processes kept open at most, whatever the slots (an agent cannot flood the panel). */
export const MAX_FINISHED_TERMINALS = 20;
/** Defaults and bounds of the two settings (package.json declares the same). */
export const DEFAULT_MAX_LIVE_MIRRORS = 8;
export const MAX_LIVE_MIRRORS_LIMIT = 100;
export const DEFAULT_CLOSE_EXITED_AFTER_SECONDS = 30;
/** setTimeout's longest delay is about 24.8 days; a longer grace period means the same as never in practice. */
const LONGEST_DELAY_MS = 2_147_483_647;

/** An open agent terminal, as the policy sees it. */
export interface SlotHolder {
  readonly processId: string;
  /** Increases with each process that finishes: the order of their ends. Undefined while the process runs. */
  readonly finishedSeq?: number;
  /** The developer asked for this terminal (Show Agent Process Terminal), rather than CodeSpace opening it. */
  readonly requested: boolean;
}

export interface Admission {
  /** Whether the terminal opens. */
  readonly open: boolean;
  /** Terminals to close first (process ids), to make room. */
  readonly close: readonly string[];
}

const NOT_NOW: Admission = { open: false, close: [] };

/** Finished terminals, in the order they give way: CodeSpace's own before requested ones, each earliest finished first. */
function finishedInClosingOrder(holders: readonly SlotHolder[], includeRequested: boolean): SlotHolder[] {
  return holders
    .filter((h) => h.finishedSeq !== undefined && (includeRequested || !h.requested))
    .sort((a, b) => Number(a.requested) - Number(b.requested) || (a.finishedSeq as number) - (b.finishedSeq as number));
}

/** How many must close so that one more fits in `slots`. */
function excess(holders: readonly SlotHolder[], slots: number): number {
  return Math.max(0, holders.length - Math.max(1, slots) + 1);
}

export const terminalSlots = {
  /** A process has just started: whether it gets a terminal of CodeSpace's own accord, and what closes for it. */
  admitNewProcess(holders: readonly SlotHolder[], slots: number): Admission {
    const need = excess(holders, slots);
    if (need === 0) return { open: true, close: [] };
    const candidates = finishedInClosingOrder(holders, false);
    if (candidates.length < need) return NOT_NOW;
    return { open: true, close: candidates.slice(0, need).map((h) => h.processId) };
  },

  /** The developer asked for a process's terminal: it opens; finished terminals close to stay within the slots if they can. */
  admitRequested(holders: readonly SlotHolder[], slots: number): Admission {
    const need = excess(holders, slots);
    return { open: true, close: finishedInClosingOrder(holders, true).slice(0, need).map((h) => h.processId) };
  },

  /** Terminals of finished processes beyond `maxFinished`: the ones to close now. */
  finishedBeyondCap(holders: readonly SlotHolder[], maxFinished: number = MAX_FINISHED_TERMINALS): string[] {
    const finished = finishedInClosingOrder(holders, true);
    return finished.slice(0, Math.max(0, finished.length - maxFinished)).map((h) => h.processId);
  },

  /** Milliseconds after its process's exit at which a terminal closes by itself, or undefined for never. */
  closeDelayMs(holder: Pick<SlotHolder, 'requested'>, closeExitedAfterSeconds: number): number | undefined {
    if (holder.requested || !Number.isFinite(closeExitedAfterSeconds) || closeExitedAfterSeconds <= 0) return undefined;
    const ms = closeExitedAfterSeconds * 1000;
    return ms > LONGEST_DELAY_MS ? undefined : ms;
  },

  /** The setting `codespace.terminals.maxLiveMirrors` as used: an integer in 1..100, else the default. */
  validSlots(value: unknown): number {
    if (typeof value !== 'number' || !Number.isInteger(value)) return DEFAULT_MAX_LIVE_MIRRORS;
    return Math.min(MAX_LIVE_MIRRORS_LIMIT, Math.max(1, value));
  },

  /** The setting `codespace.terminals.closeExitedAfterSeconds` as used: an integer ≥ 0, else the default. */
  validCloseAfter(value: unknown): number {
    return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : DEFAULT_CLOSE_EXITED_AFTER_SECONDS;
  },
};
