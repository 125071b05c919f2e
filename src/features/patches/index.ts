// What other modules may use of this feature: everything else in it is private.
export * from './common/applyPatch';
export * from './common/diff';
export * from './common/patchOperation';
export * from './common/patchService';
export * from './common/patchTools';
export * from './common/textFile';
export * from './common/version';
export * from './common/workspaceEditToPatch';
