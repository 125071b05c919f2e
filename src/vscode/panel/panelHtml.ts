import { randomBytes } from 'node:crypto';

/** A fresh script nonce for one rendering of the page. */
export function newNonce(): string {
  return randomBytes(18).toString('base64');
}

export interface PanelHtmlInput {
  /** `webview.cspSource`. */
  readonly cspSource: string;
  /** `asWebviewUri` of dist/webview/panel.js and media/panel.css. */
  readonly scriptUri: string;
  readonly styleUri: string;
  readonly nonce: string;
}

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The page's HTML: a strict CSP (nothing inline, the one script by nonce), the stylesheet and the bundle. */
export function panelHtml(input: PanelHtmlInput): string {
  const csp = [`default-src 'none'`, `style-src ${input.cspSource}`, `script-src 'nonce-${input.nonce}'`, `font-src ${input.cspSource}`].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(input.styleUri)}">
<title>CodeSpace</title>
</head>
<body>
<main id="root"><p class="empty">Loading…</p></main>
<script nonce="${attr(input.nonce)}" src="${attr(input.scriptUri)}"></script>
</body>
</html>
`;
}
