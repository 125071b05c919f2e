// What other modules may use of this feature: everything else in it is private.
export * from './common/baseEnvironment';
export type * from './common/commandIsolation';
export type * from './common/supervisor';
export * from './common/tools/execCommand';
