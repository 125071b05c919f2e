// What other modules may use of this feature: everything else in it is private.
export * from './common/applyPatch';
export * from './common/diff';
export type * from './common/patchOperation';
export type * from './common/patchService';
export type * from './common/patchTools';
export * from './common/textFile';
export * from './common/version';
export * from './common/workspaceEditToPatch';
