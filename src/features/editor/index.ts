// What other modules may use of this feature: everything else in it is private.
export * from './common/diagnostics';
export * from './common/diagnosticsFeed';
export * from './common/languageFeatures';
