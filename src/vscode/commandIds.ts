/** Command ids, declared once; package.json contributes the same ids. */
export const COMMANDS = {
  copyConnectionSettings: 'codespace.copyConnectionSettings',
  showToken: 'codespace.showToken',
  rotateToken: 'codespace.rotateToken',
  restartServer: 'codespace.restartServer',
  showLog: 'codespace.showLog',
  statusActions: 'codespace.statusActions',
  showPanel: 'codespace.showPanel',
  showProcessTerminal: 'codespace.showProcessTerminal',
  openReview: 'codespace.openReview',
  approveReview: 'codespace.approveReview',
  denyReview: 'codespace.denyReview',
  nextReviewFile: 'codespace.nextReviewFile',
  previousReviewFile: 'codespace.previousReviewFile',
  openPreview: 'codespace.openPreview',
  copyInboxToken: 'codespace.copyInboxToken',
  rotateInboxToken: 'codespace.rotateInboxToken',
} as const;
