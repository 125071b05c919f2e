import * as vscode from 'vscode';

/**
 * Most output bytes decoded and handed to the terminal in one write. Small enough that the write's text, and the
 * extension host's JSON of the message carrying it to the workbench (an escape sequence grows up to sixfold there),
 * stay below V8's large-object size (128 KiB): such strings die young, where larger ones would each go to the old
 * generation and stay until a full collection (a flood grew the extension host by hundreds of MiB that way).
 */
export const FLUSH_BYTES = 16 * 1024;
/**
 * Output bytes waiting for the terminal (as bytes: decoded only when written). Beyond this the oldest waiting
 * output is dropped for the newest (with a "[… N bytes not shown …]" line) rather than queued: the extension
 * host's memory stays flat, the terminal shows the end of a flood, and read_process still has the output. Above the
 * retained output (256 KiB by default), so a reload's replay fits with room for what follows it.
 */
export const MAX_PENDING_BYTES = 512 * 1024;
/**
 * The mirror's pace while a process writes faster than its terminal is given output: one write a second, instead of
 * a batch at every turn of the barrier (about 25 a second). The first such write shows up to eight batches (128 KiB),
 * so a burst of up to 144 KiB shows whole; while older output keeps being dropped (a flood), each write shows the
 * newest batch (16 KiB) and marks the rest as not shown. Each write the terminal takes is a frame the workbench
 * draws, and in a window that draws in software (no GPU) a frame costs tens of ms of CPU, more the more text it
 * parses: at four writes a second of 128 KiB the window took about 400 ms of CPU a second on the two cores that a
 * 200 MiB flood also needed (docs/BENCHMARKS.md). Output that the terminal keeps up with is written as before.
 */
export const FLOOD_PACE = { delayMs: 1000, batches: 8 } as const;

/**
 * Resolves once the workbench has processed what was written to a terminal before it. Extension terminals have
 * no flow control of their own (a Pseudoterminal's writes are never acknowledged), so each write waits for a
 * round trip to the workbench: what the renderer has not taken yet stays bounded in our queue instead of piling
 * up in the extension host's connection to it. The extension host holds terminal data back for 5 ms to batch it,
 * so the request goes out after that, behind the data. Any command the workbench (not the extension host)
 * answers would do: setting a context key of ours that nothing reads is the cheapest.
 */
export async function workbenchBarrier(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, TERMINAL_BATCH_DELAY_MS));
  // Bounded: a workbench that never answers (a closed or stalled window) must not stop the mirror for good; the
  // terminal then goes on at one batch per BARRIER_TIMEOUT_MS.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    vscode.commands.executeCommand('setContext', 'codespace.terminalMirrorSync', true),
    new Promise((resolve) => (timer = setTimeout(resolve, BARRIER_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

/** Longest wait for the workbench's answer before the next batch goes anyway. */
const BARRIER_TIMEOUT_MS = 1000;

/** Longer than the extension host's own batching of terminal data (5 ms). */
const TERMINAL_BATCH_DELAY_MS = 10;
