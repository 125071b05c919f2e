// What other modules may use of this feature: everything else in it is private.
export * from './common/diagnostics';
export type * from './common/diagnosticsFeed';
export type * from './common/languageFeatures';
export { LocationMapper, checkPosition, readWorkspaceFile } from './common/language';
