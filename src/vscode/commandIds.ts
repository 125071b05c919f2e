/** Command ids, declared once; package.json contributes the same ids. */
export const COMMANDS = {
  copyConnectionSettings: 'codespace.copyConnectionSettings',
  showToken: 'codespace.showToken',
  rotateToken: 'codespace.rotateToken',
  restartServer: 'codespace.restartServer',
  showLog: 'codespace.showLog',
  statusActions: 'codespace.statusActions',
  showPanel: 'codespace.showPanel',
  // Registered by the diff review; the panel runs them.
  openReview: 'codespace.openReview',
  openPreview: 'codespace.openPreview',
  showProcessTerminal: 'codespace.showProcessTerminal',
} as const;
