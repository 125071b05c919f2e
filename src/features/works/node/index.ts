// What other modules may use of this feature (its node side): everything else in it is private.
export * from './deliver';
export type * from './freezeGit';
export type * from './gitWorkBaseline';
export * from './gitWorktreeFactory';
export * from './inbox';
