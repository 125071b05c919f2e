// Renders the Marketplace icon media/icon.png (256 x 256) from media/codespace.svg, the activity bar glyph:
// the glyph in white on a dark rounded square. Headless Chromium (the one the tests use) draws it.
// Usage: node scripts/package-icon.mjs   (the PNG is committed; run again only when the SVG changes)
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './installVsCodeHost.mjs';
import { launchBrowser } from './vscodeHost.mjs';

const SIZE = 256;
const svg = readFileSync(path.join(REPO_ROOT, 'media', 'codespace.svg'), 'utf8')
  .replace('stroke="currentColor"', 'stroke="#ffffff"')
  .replace(/width="24" height="24"/, `width="${Math.round(SIZE * 0.72)}" height="${Math.round(SIZE * 0.72)}"`);
const html = `<!doctype html><html><body style="margin:0;background:transparent">
<div id="icon" style="width:${SIZE}px;height:${SIZE}px;border-radius:${SIZE * 0.18}px;display:flex;align-items:center;
justify-content:center;background:linear-gradient(135deg,#1f6feb 0%,#123a7a 100%)">${svg}</div></body></html>`;

const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE }, deviceScaleFactor: 1 });
  await page.setContent(html);
  const out = path.join(REPO_ROOT, 'media', 'icon.png');
  await page.locator('#icon').screenshot({ path: out, omitBackground: true });
  console.log(`[icon] wrote ${path.relative(REPO_ROOT, out)} (${SIZE} x ${SIZE})`);
} finally {
  await browser.close();
}
