// What other modules may use of this feature (its vscode side): everything else in it is private.
export * from './discardWork';
export * from './frozenReview';
export * from './openWorkWorktree';
export * from './pullRequestExtension';
export * from './registerSteering';
export * from './workReview';
