// What other modules may use of this feature: everything else in it is private.
export * from './common/connection';
export * from './common/liveness';
export * from './common/record';
