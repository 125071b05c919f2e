// Helpers the end-to-end tests share for the CodeSpace panel: its page is a webview, an iframe inside an iframe of
// the workbench, so it is found among page.frames() by what it shows.
import { createHash } from 'node:crypto';
import type { Frame } from 'playwright-core';
import type { Workbench } from './index';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The version string the tools use for `text`: `sha256:<hex>`. */
export const sha256 = (text: string | Buffer): string => `sha256:${createHash('sha256').update(text).digest('hex')}`;

/** The frame of the panel's page (the webview is an iframe in an iframe), once `selector` is in it. */
export async function panelFrame(wb: Workbench, selector: string, timeoutMs = 60_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of wb.page.frames()) {
      if (await frame.locator(selector).count().catch(() => 0)) return frame;
    }
    if (Date.now() > deadline) throw new Error(`no webview frame shows ${selector}`);
    await sleep(250);
  }
}
