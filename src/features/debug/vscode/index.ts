// What other modules may use of this feature (its vscode side): everything else in it is private.
export { VsCodeDebug } from './vscodeDebug';
