// What other modules may use of this feature (its vscode side): everything else in it is private.
export * from './agentCredentials';
export * from './agentDirectory';
export * from './agents';
export * from './connectAgent';
export * from './portAttributes';
export * from './portMemory';
export * from './terminalEnvironment';
