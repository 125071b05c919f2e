// What other modules may use of this feature (its vscode side): everything else in it is private.
export * from './afterWriteReview';
export * from './checkpoints';
export * from './proposalUri';
export * from './readOnlyDocuments';
export * from './registerReview';
export * from './reviewComments';
export * from './reviewDocuments';
